import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../..", import.meta.url));

describe("the webhook-cli/testing subpath export", () => {
  it("resolves through package.json exports to the built module: virtual clock, seeded random, fake transport", () => {
    // A self-reference by package name goes through "exports", as a dependent project's import would.
    const script = `
      const testing = await import("webhook-cli/testing");
      const clock = new testing.VirtualClock(0, { autoAdvance: true });
      const transport = new testing.FakeTransport({ clock, respond: testing.answers(503, 201) });
      const request = { url: "http://x.test/", method: "POST", headers: {}, body: Buffer.from("{}") };
      const first = await transport.send(request, { timeoutMs: 1000 });
      const second = await transport.send(request, { timeoutMs: 1000 });
      console.log(JSON.stringify({ keys: Object.keys(testing).sort(), statuses: [first.status, second.status], random: testing.seededRandom(1)() === testing.seededRandom(1)() }));`;
    const output = execFileSync(process.execPath, ["--input-type=module", "-e", script], { cwd: root, encoding: "utf8" });
    expect(JSON.parse(output)).toEqual({
      keys: ["FakeTransport", "VirtualClock", "WaitTimeoutError", "answers", "byUrl", "seededRandom", "startReceiver"],
      statuses: [503, 201],
      random: true,
    });
  });
});
