import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startServer } from "../helpers/http-server.js";
import { runInProcess, startInProcess } from "../helpers/run-cli.js";
import { closeServersAfterEach, tempDir } from "../helpers/setup.js";

const { servers } = closeServersAfterEach();
const { dir, ndjson: file } = tempDir("masked-files-");

const SECRET = "s3cr3t-value-42";
const TOKEN = "tok-123456";
const track = (seq: number): string =>
  JSON.stringify({
    version: 1,
    type: "track",
    userId: `u${seq}`,
    event: "Step",
    messageId: `m-${seq}`,
    properties: { seq },
    timestamp: "2024-01-01T00:00:00.000Z",
  });

/** A receiver that refuses (400) every path under /fail and echoes the secret in its answer. */
async function refusing(): Promise<{ url: string; failing: string; requests: () => number }> {
  const target = await startServer((request, res) => {
    res.statusCode = request.url.startsWith("/fail") ? 400 : 200;
    res.end(`seen with ${SECRET}`);
  });
  servers.push(target);
  return {
    url: target.url,
    failing: `${target.url}/fail/${SECRET}?token=${TOKEN}&page=2`,
    requests: () => target.requests.filter((r) => r.url.startsWith("/fail/")).length,
  };
}

describe("replay masks the secret and URL credentials in every file it writes", () => {
  it("dead-letter reasons, --results lines and the JUnit report never hold the secret or a credential query value", async () => {
    const secret = SECRET;
    const target = await refusing();
    const [deadLetter, results, junit] = ["masked-dead.ndjson", "masked-results.ndjson", "masked.xml"].map((name) => join(dir, name)) as [
      string,
      string,
      string,
    ];
    const path = file([track(1), track(2)]);
    const { failing } = target;
    // Both URLs fail (one 2xx would make the message delivered), so the reasons name them.
    const result = await runInProcess(
      ["replay", path, "--url", `${target.url}/fail-too`, "--url", failing, "--dead-letter", deadLetter, "--results", results, "--junit", junit],
      {
        env: { WEBHOOK_SECRET: secret },
      },
    );
    expect(result.code, result.stdout + result.stderr).toBe(1);
    expect(target.requests()).toBe(2);
    for (const written of [deadLetter, results, junit]) {
      const text = readFileSync(written, "utf8");
      expect(text, written).toContain("/fail/***?token=***&"); // & is &amp; in XML
      expect(text, written).not.toContain(secret);
      expect(text, written).not.toContain(TOKEN);
    }
    // The answer's echo of the secret is masked too; the rest of it is kept.
    expect(readFileSync(results, "utf8")).toContain("with ***");
    expect(result.stdout + result.stderr).not.toContain(secret);
  });

  it("serve --failed run without the secret still shows it masked: the stored reason is masked when written", async () => {
    const target = await refusing();
    const state = join(dir, "serve-state");
    const serve = startInProcess(["serve", "--port", "0", "--state", state, "--url", target.failing, "--retry-window", "0"], {
      env: { WEBHOOK_SECRET: SECRET },
    });
    const [, url] = await serve.waitFor(/Listening on (\S+)/, 15_000);
    const accepted = await fetch(`${url as string}/v1/track`, { method: "POST", body: JSON.stringify({ userId: "u1", event: "E" }) });
    expect(accepted.status).toBe(200);
    const failed = async (): Promise<number> => ((await (await fetch(`${url as string}/health`)).json()) as { failed: number }).failed;
    await expect.poll(failed).toBeGreaterThan(0);
    serve.stop("SIGINT");
    const stopped = await serve.done;
    expect(stopped.code).toBe(1);
    const listed = await runInProcess(["serve", "--failed", "--state", state]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain("/fail/***?token=***&page=2");
    expect(listed.stdout + stopped.stdout + stopped.stderr).not.toContain(SECRET);
    expect(listed.stdout).not.toContain(TOKEN);
  });
});
