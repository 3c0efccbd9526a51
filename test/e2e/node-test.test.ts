import { execFile } from "node:child_process";
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../helpers/loaded-modules.js";
import { sectionBlocks } from "../helpers/markdown.js";
import { tempDir } from "../helpers/setup.js";

// The library receiver under node:test (test/node-test/), run as a project runs it: `node --test`
// in a child process, against the built package (npm run build).
function nodeTest(file: string, cwd = ROOT): Promise<{ code: number; stdout: string }> {
  return node(["--test", "--test-reporter=spec", file], cwd);
}

function node(args: string[], cwd: string): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, args, { cwd, env: { ...process.env, NO_COLOR: "1", CI: "1" } }, (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout: stdout + stderr }),
    );
  });
}

/** The code blocks of docs/library.md's "A receiver in your tests" fenced `js`. */
function libraryExamples(): string[] {
  return sectionBlocks(readFileSync(join(ROOT, "docs/library.md"), "utf8"), "## A receiver in your tests", "js");
}

const { dir } = tempDir("webhook-cli-docs-examples-");

// The examples' `placeOrder` is the user's code: here it sends the signed track they wait for.
const PLACE_ORDER = `
import { createDeliveryEngine } from "webhook-cli";
async function placeOrder({ webhookUrl }) {
  const engine = await createDeliveryEngine({ targets: [webhookUrl], secret: "s3cret", retryWindowMs: 0 });
  const order = { version: 1, type: "track", userId: "u_1", event: "Order Completed", properties: { total: 42 }, timestamp: new Date().toISOString() };
  await engine.deliver(JSON.stringify(order));
  await engine.close();
}
`;

describe("startReceiver under node:test", () => {
  it("send, the delivery engine and the Analytics client reach it; waitFor finds each; a rule answers", async () => {
    const { code, stdout } = await nodeTest("test/node-test/library-receiver.mjs");
    expect(stdout).toMatch(/ℹ pass 4\n/);
    expect(stdout).toMatch(/ℹ fail 0\n/);
    expect(code).toBe(0);
  }, 60_000);

  it("a message that never comes fails the test with what did arrive", async () => {
    const { code, stdout } = await nodeTest("test/node-test/missing-message.mjs");
    expect(code).toBe(1);
    expect(stdout).toContain(
      [
        '  Error [WaitTimeoutError]: waitFor: timed out after 200 ms: 0 of 1 request matching {type: "track", event: "Order Completed"} with a valid verdict.',
        "  1 request arrived: 1 identify (invalid)",
        '    #1 POST /hooks  identify  u_1  invalid (missing required key "version")  → 200',
      ].join("\n"),
    );
  }, 60_000);

  it("docs/library.md's vitest and node:test examples pass as written, in a project that installed the package", async () => {
    const [vitestExample, nodeExample] = libraryExamples();
    expect(vitestExample).toMatch(/from "vitest"/);
    expect(nodeExample).toMatch(/from "node:test"/);
    mkdirSync(join(dir, "node_modules"));
    symlinkSync(ROOT, join(dir, "node_modules", "webhook-cli"));
    symlinkSync(join(ROOT, "node_modules", "vitest"), join(dir, "node_modules", "vitest"));
    writeFileSync(join(dir, "order.test.mjs"), PLACE_ORDER + vitestExample);
    writeFileSync(join(dir, "order.node-test.mjs"), PLACE_ORDER + nodeExample);
    const viaNode = await nodeTest("order.node-test.mjs", dir);
    expect(viaNode.stdout).toMatch(/ℹ pass 1\n/);
    expect(viaNode.code).toBe(0);
    const viaVitest = await node([join(ROOT, "node_modules/vitest/vitest.mjs"), "run", "--root", dir, "order.test.mjs"], dir);
    expect(viaVitest.stdout).toMatch(/Tests {2}1 passed/);
    expect(viaVitest.code).toBe(0);
  }, 60_000);
});
