import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "../helpers/loaded-modules.js";
import { linksOf, sectionBlocks } from "../helpers/markdown.js";
import { installPacked, run } from "../helpers/packed.js";
import { tempDir } from "../helpers/setup.js";

// The package as a project that installed it meets it: the tarball of `npm pack` (npm run build
// first), its files, and its types under the TypeScript users run, in the tsconfig.json that
// `tsc --init` writes (no "types": @types/node is there but not listed). TypeScript 5 (ts-jest's,
// which needs TypeScript below 7) and 7 are devDependencies (typescript, typescript-7).
const COMPILERS = [
  { major: 5, tsc: join(ROOT, "node_modules/typescript/bin/tsc") },
  { major: 7, tsc: join(ROOT, "node_modules/typescript-7/bin/tsc") },
];

// The examples' `placeOrder` is the user's code: here it sends the signed track they wait for.
const PLACE_ORDER = `import { createDeliveryEngine } from "webhook-cli";

async function placeOrder({ webhookUrl }: { webhookUrl: string }): Promise<void> {
  const engine = await createDeliveryEngine({ targets: [webhookUrl], secret: "s3cret", retryWindowMs: 0 });
  const order = { version: 1, type: "track", userId: "u_1", event: "Order Completed", properties: { total: 42 }, timestamp: new Date().toISOString() };
  await engine.deliver(JSON.stringify(order));
  await engine.close();
}
`;

// What waitFor's types promise (docs/library.md#typescript), each line a check that fails when the promise breaks.
const WAIT_FOR_TYPES = `import type { IdentifyMessage, Message, TrackMessage } from "webhook-cli";
import { startReceiver, type ReceivedWebhook, type WebhookMatcher } from "webhook-cli/testing";

const receiver = await startReceiver();
const [order] = await receiver.waitFor({ type: "track", event: "Order Completed" });
const track: TrackMessage = order.message;
const [signedUp] = await receiver.waitFor({ event: "Signed Up" });
const event: string = signedUp.message.event;
const [message] = await receiver.waitFor({ kind: "message" });
const any: Message = message.message;
const [request] = await receiver.waitFor({ path: "/hooks" });
// @ts-expect-error any request: its body may not be a message
request.message.type;
const [invalid] = await receiver.waitFor({ type: "identify", verdict: "invalid" });
const identify: "identify" = invalid.message.type;
// @ts-expect-error an invalid request's other fields are not checked
const traits: Record<string, unknown> = invalid.message.traits;
// @ts-expect-error a misspelt field
await receiver.waitFor({ tpye: "track" });
// @ts-expect-error a misspelt field beside a right one
await receiver.waitFor({ type: "track", evnt: "Order Completed" });
const [guarded] = await receiver.waitFor((r): r is ReceivedWebhook<IdentifyMessage> => r.message?.type === "identify");
const identified: IdentifyMessage = guarded.message;
const matcher: WebhookMatcher = { type: "page" };
const [first, ...more] = await receiver.waitFor(matcher, { count: 2 });
const bytes: Uint8Array = first.rawBody;
// @ts-expect-error rawBody is a Buffer (under skipLibCheck, a Buffer the declarations cannot resolve is any)
const text: string = first.rawBody;
console.log(track, event, any, identify, traits, identified, more, bytes, text);
`;

describe("the packed package", { timeout: 180_000 }, () => {
  const { dir } = tempDir("webhook-cli-packed-");
  let packed: { packageDir: string; files: string[] };
  // npm pack and tar: seconds; the bound stops a hang only.
  beforeAll(async () => {
    packed = await installPacked(dir);
    // vitest, for the vitest example's types, as its users have it.
    symlinkSync(join(ROOT, "node_modules/vitest"), join(dir, "node_modules/vitest"));
  }, 180_000);

  it("ships no source map, and every relative link of its Markdown files reaches a file it ships", () => {
    // No maps (tsconfig.build.json): a map would point at src/, which is not shipped.
    expect(packed.files.filter((file) => file.endsWith(".map"))).toEqual([]);
    const scripts = packed.files.filter((file) => /\.(m|c)?js$/.test(file));
    expect(scripts.length).toBeGreaterThan(100);
    expect(scripts.filter((file) => /^\/\/# sourceMappingURL=/m.test(readFileSync(join(packed.packageDir, file), "utf8")))).toEqual([]);
    const markdown = packed.files.filter((file) => file.endsWith(".md"));
    expect(markdown).toEqual(expect.arrayContaining(["README.md", "CHANGELOG.md", "docs/library.md"]));
    const broken = markdown.flatMap((file) =>
      linksOf(readFileSync(join(packed.packageDir, file), "utf8"))
        .filter(({ target }) => !/^[a-z]+:/.test(target) && !target.startsWith("#"))
        .map(({ line, target }) => ({ where: `${file}:${line}`, target, path: join(dirname(join(packed.packageDir, file)), target.split("#")[0] as string) }))
        .filter(({ path }) => relative(packed.packageDir, path).startsWith("..") || !existsSync(path))
        .map(({ where, target }) => `${where} → ${target}`),
    );
    expect(broken).toEqual([]);
  });

  /** A directory with the tsconfig.json `tsc --init` of this compiler writes, after checking it is the version named. */
  async function initProject(name: string, { major, tsc }: (typeof COMPILERS)[number]): Promise<string> {
    const project = join(dir, name);
    mkdirSync(project);
    expect((await run(process.execPath, [tsc, "--version"], project)).output).toMatch(new RegExp(`^Version ${major}\\.`));
    expect((await run(process.execPath, [tsc, "--init"], project)).code).toBe(0);
    return project;
  }

  it.each(COMPILERS)("TypeScript $major: the docs' examples and waitFor's types compile in a project tsc --init set up", async (compiler) => {
    const project = await initProject(`ts${compiler.major}`, compiler);
    const [readme] = sectionBlocks(readFileSync(join(ROOT, "README.md"), "utf8"), "## Testing with webhook-cli", "js");
    const [vitest, nodeTest] = sectionBlocks(readFileSync(join(ROOT, "docs/library.md"), "utf8"), "## A receiver in your tests", "js");
    expect(readme).toContain("order.message.properties.total");
    expect(vitest).toMatch(/from "vitest"/);
    expect(nodeTest).toMatch(/from "node:test"/);
    writeFileSync(join(project, "readme.ts"), PLACE_ORDER + readme);
    writeFileSync(join(project, "order.test.ts"), PLACE_ORDER + vitest);
    writeFileSync(join(project, "order.node-test.ts"), PLACE_ORDER + nodeTest);
    writeFileSync(join(project, "wait-for-types.ts"), WAIT_FOR_TYPES);
    const checked = await run(process.execPath, [compiler.tsc, "-p", project, "--noEmit"], project);
    expect(checked.output).toBe("");
    expect(checked.code).toBe(0);
  });

  // skipLibCheck: true (tsc --init's) hides what the declarations cannot resolve: here every one of
  // the entries is checked. With TypeScript 7 only: TypeScript 5 spends 4 s of CPU on @types/node.
  it("TypeScript 7: every declaration of the three entries compiles with skipLibCheck off", async () => {
    const compiler = COMPILERS.find(({ major }) => major === 7) as (typeof COMPILERS)[number];
    const project = await initProject("declarations", compiler);
    const entries = ["main", "client", "testing"].map((name) => `export * as ${name} from "webhook-cli${name === "main" ? "" : `/${name}`}";\n`);
    writeFileSync(join(project, "index.ts"), entries.join(""));
    const checked = await run(process.execPath, [compiler.tsc, "-p", project, "--noEmit", "--skipLibCheck", "false"], project);
    expect(checked.output).toBe("");
    expect(checked.code).toBe(0);
  });
});
