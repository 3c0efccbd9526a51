import { describe, expect, it } from "vitest";
import { cliChunksOf, distModulesOf, modulesLoadedBy, packagesOf } from "../helpers/loaded-modules.js";

/** A command's declaration: its command.js and its option table, loaded to build the program (and its help). */
const isDeclaration = (path: string): boolean => /^cli\/commands\/[a-z]+\/(command|options)\.js$/.test(path);

// Checked on the built package (npm run build), by the modules a real process resolves: not by timing.
// The command line is a bundle (scripts/build-cli.js): a chunk resolved counts as every module
// and package esbuild put in it (dist/cli-modules.json, see test/helpers/loaded-modules.ts).
// Each test starts one or two processes that end by themselves (well under a second each, alone);
// no verdict reads a clock, so the timeout only stops a hang: it is far above the 98 s a demo and a
// replay once took together on a loaded machine.
describe("what a process loads", { tags: ["smoke"], timeout: 180_000 }, () => {
  it('import { Analytics } from "webhook-cli" loads the client, not the CLI, the receiver, replay, serve or the delivery engine', async () => {
    const script = 'import { Analytics } from "webhook-cli"; console.log(typeof Analytics);';
    const { urls, stdout, stderr, code } = await modulesLoadedBy(["--input-type=module", "-e", script]);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect(stdout.trim()).toBe("function");
    const dist = distModulesOf(urls);
    // The recorder saw the package itself (so an empty list cannot pass).
    expect(dist).toContain("index.js");
    expect(dist).toContain("client/analytics.js");
    const packages = packagesOf(urls);
    for (const name of ["commander", "chalk", "ora"]) expect(packages).not.toContain(name);
    expect(dist.filter((path) => /^(cli|replay|regress|serve|audience)\/|^receiver\/(server|record|answer-plan)\.js$/.test(path))).toEqual([]);
    // Of delivery/, only the pure retry policy, the retry rules and TLS classifier the client shares
    // with it, and the engine's door (createDeliveryEngine, which loads the engine, its transports
    // and their wiring when called) load.
    // (A module is listed once for each import that resolves it.)
    expect([...new Set(dist.filter((path) => path.startsWith("delivery/")))].sort()).toEqual([
      "delivery/create-engine.js",
      "delivery/policy.js",
      "delivery/retry-rules.js",
      "delivery/tls-problem.js",
    ]);
  });

  it('import { Analytics } from "webhook-cli/client" loads the client alone: no zod, message schemas, verifier or engine door', async () => {
    const script =
      'import { Analytics } from "webhook-cli/client"; import * as main from "webhook-cli/client"; console.log(typeof Analytics, Object.keys(main).length);';
    const { urls, stdout, stderr, code } = await modulesLoadedBy(["--input-type=module", "-e", script]);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect(stdout.trim()).toBe("function 7");
    const dist = distModulesOf(urls);
    expect(dist).toContain("client.js");
    expect(dist).toContain("client/analytics.js");
    expect(dist).not.toContain("index.js");
    // What the main entry loads beside the client, and this one does not.
    expect(dist.filter((path) => /^(messages\/(schemas|check)|receiver\/|signing\/(schemes|verify)|delivery\/(create-engine|policy))/.test(path))).toEqual([]);
    const packages = packagesOf(urls);
    expect(packages).toContain("undici");
    for (const name of ["zod", "commander", "chalk", "ora"]) expect(packages).not.toContain(name);
  });

  it('"webhook-cli/testing": its clock loads no server; startReceiver loads listen\'s receiver, and no commander, chalk, ora or CLI module', async () => {
    const clockOnly = await modulesLoadedBy([
      "--input-type=module",
      "-e",
      'import { VirtualClock } from "webhook-cli/testing"; console.log(typeof VirtualClock);',
    ]);
    expect(clockOnly.code).toBe(0);
    expect(distModulesOf(clockOnly.urls)).toContain("testing.js");
    expect(distModulesOf(clockOnly.urls).filter((path) => path.startsWith("receiver/") || path.startsWith("testing/receiver"))).toEqual([]);

    const script = `
      import { startReceiver } from "webhook-cli/testing";
      const receiver = await startReceiver({ secret: "s" });
      const response = await fetch(receiver.url + "/hook", { method: "POST", body: "{}" });
      const [request] = await receiver.waitFor({ verdict: "any" });
      console.log(response.status, request.verdict.signatureError);
      await receiver.close();`;
    const { urls, stdout, stderr, code } = await modulesLoadedBy(["--input-type=module", "-e", script]);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect(stdout.trim()).toBe(
      "401 missing X-Signature header (nor any other scheme's: looked for webhook-signature, svix-signature, X-Hub-Signature-256, Stripe-Signature, X-Shopify-Hmac-Sha256, X-Slack-Signature, X-Twilio-Signature)",
    );
    const dist = distModulesOf(urls);
    for (const path of ["testing/receiver.js", "receiver/server.js", "receiver/verdict.js", "receiver/answer-plan.js", "receiver/scripted-answers.js"])
      expect(dist).toContain(path);
    const packages = packagesOf(urls);
    for (const name of ["commander", "chalk", "ora"]) expect(packages).not.toContain(name);
    expect(dist.filter((path) => /^(cli|replay|regress|serve|audience)\//.test(path))).toEqual([]);
  });

  it("webhook-cli --version loads neither commander nor the command table", async () => {
    const { urls, stdout, code } = await modulesLoadedBy(["bin/webhook-cli.js", "--version"]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
    const dist = distModulesOf(urls);
    expect(dist).toContain("cli/shell/main.js");
    expect(dist).toContain("cli/shell/version.js");
    expect(dist.filter((path) => path.startsWith("cli/commands/") || path === "cli/shell/program.js" || path === "cli/shell/command-table.js")).toEqual([]);
    expect([...packagesOf(urls)]).toEqual([]);
  });

  it.each([["--version"], ["--help"]])("webhook-cli %s loads no undici, zod or ora, nor any command's implementation", async (flag) => {
    const { urls, stdout, code } = await modulesLoadedBy(["bin/webhook-cli.js", flag]);
    expect(code).toBe(0);
    expect(stdout).toMatch(flag === "--version" ? /^\d+\.\d+\.\d+/ : /Usage: webhook-cli/);
    const dist = distModulesOf(urls);
    expect(dist).toContain("cli/shell/main.js");
    const packages = packagesOf(urls);
    if (flag === "--help") expect(packages).toContain("commander");
    for (const name of ["undici", "zod", "ora", "chalk"]) expect(packages).not.toContain(name);
    // The declarations (each command's command.js and its option table) are what help is made of; nothing else of a command.
    if (flag === "--help") expect(dist).toContain("cli/commands/listen/command.js");
    expect(dist.filter((path) => (path.startsWith("cli/commands/") && !isDeclaration(path)) || path === "cli/options/parse.js")).toEqual([]);
  });

  it.each([["--version"], ["--help"], ["generate"]])("webhook-cli %s reads a few files of the package, not a hundred", async (arg) => {
    const { urls, code } = await modulesLoadedBy(["bin/webhook-cli.js", arg]);
    expect(code).toBe(0);
    const chunks = cliChunksOf(urls);
    expect(chunks).toContain("cli/main.js");
    // bin/webhook-cli.js, main.js and a few chunks (3, 5 and 12 files when this was written); before
    // the bundle, the modules tsc wrote: 33 for --version and --help, 43 for generate.
    const files = new Set(urls.filter((url) => !url.startsWith("node:") && !url.includes("/node_modules/")));
    expect(files.size).toBeLessThanOrEqual({ "--version": 4, "--help": 7, generate: 15 }[arg] as number);
    // Nor the many files of an installed command-line package: commander and chalk are inside the bundle.
    expect(urls.filter((url) => url.includes("/node_modules/"))).toEqual([]);
  });

  it("a command loads its own implementation and its option parsers, and only then; flags need no zod", async () => {
    const { urls, code } = await modulesLoadedBy(["bin/webhook-cli.js", "generate", "track", "--seed", "1"]);
    expect(code).toBe(0);
    const dist = distModulesOf(urls);
    expect(dist).toContain("cli/commands/generate/index.js");
    expect(dist).toContain("cli/options/parse.js");
    expect(dist).not.toContain("cli/commands/listen/index.js");
    // generate builds examples and parses its options; the message schemas are for checking, not needed here.
    expect(dist).not.toContain("messages/schemas.js");
    // The flags are parsed by the option table's own parse functions; zod checks structured input (config files, messages).
    expect(packagesOf(urls)).not.toContain("zod");
    expect(packagesOf(urls)).not.toContain("undici");
  });

  it("replay loads its own command modules, not send's", async () => {
    const replay = await modulesLoadedBy(["bin/webhook-cli.js", "replay", "fixtures/events.ndjson", "--dry-run", "--url", "http://127.0.0.1:9/hook"]);
    expect(replay.code).toBe(0);
    expect(distModulesOf(replay.urls)).toContain("cli/commands/replay/index.js");
    expect(distModulesOf(replay.urls).filter((path) => path.startsWith("cli/commands/send/") && !isDeclaration(path))).toEqual([]);
  });

  it("demo loads its own command modules, not listen's, the inspector, the control API or the request history", async () => {
    const demo = await modulesLoadedBy(["bin/webhook-cli.js", "demo", "--json"]);
    expect(demo.code).toBe(0);
    const demoModules = distModulesOf(demo.urls);
    expect(demoModules).toContain("cli/commands/demo/index.js");
    expect(
      demoModules.filter((path) => (path.startsWith("cli/commands/listen/") && !isDeclaration(path)) || /^(inspector|control|receiver\/history)\//.test(path)),
    ).toEqual([]);
  });
});
