import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { checkMessage } from "../../src/messages/check.js";
import { sign, signingKey } from "../../src/signing/x-signature.js";
import { startServer } from "../helpers/http-server.js";
import { runInProcess, startInProcess } from "../helpers/run-cli.js";

/**
 * `null` for an optional common field, as real traffic has it (a Personas
 * identify carries `"sentAt": null`), is taken as absent by every check:
 * serve, listen, send and replay.
 */

const personasIdentify = {
  version: 2,
  type: "identify",
  userId: "u_personas",
  traits: { plan: "pro" },
  context: null,
  integrations: null,
  messageId: "personas-1",
  sentAt: null,
  originalTimestamp: null,
  receivedAt: null,
  timestamp: "2024-01-01T00:00:00.000Z",
  channel: "server",
};

const dirs: string[] = [];
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "webhook-cli-null-"));
  dirs.push(dir);
  return dir;
};

describe("null for an optional common field", () => {
  it("is no error for the message check (a wrong type still is)", () => {
    expect(checkMessage(personasIdentify).errors).toEqual([]);
    expect(checkMessage({ ...personasIdentify, sentAt: 5 }).errors.map((e) => e.key)).toEqual(["sentAt"]);
  });

  it("send and replay deliver it", async () => {
    const receiver = await startServer();
    cleanups.push(() => receiver.close());
    const dir = tempDir();
    const file = join(dir, "personas.ndjson");
    writeFileSync(file, `${JSON.stringify(personasIdentify)}\n`);
    const sent = await runInProcess(["send", file, "--url", `${receiver.url}/hook`, "--secret", "s3cret"], { cwd: dir });
    expect(sent.stderr).not.toMatch(/error/i);
    expect(sent.code).toBe(0);
    const replayed = await runInProcess(["replay", file, "--url", `${receiver.url}/hook`, "--secret", "s3cret"], { cwd: dir });
    expect(replayed.code).toBe(0);
    expect(receiver.requests.map((r) => (JSON.parse(r.body.toString()) as { sentAt: unknown }).sentAt)).toEqual([null, null]);
  });

  it("listen accepts it as a valid message, --strict included", async () => {
    const body = JSON.stringify(personasIdentify);
    for (const strict of [[], ["--strict"]]) {
      const run = startInProcess(["listen", "--port", "0", "--secret", "s3cret", "--count", "1", "--json", ...strict]);
      const [, url] = await run.waitFor(/"url":"(http[^"]+)"/);
      const response = await fetch(`${url}/hook`, {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-Signature": sign(signingKey("s3cret"), body) },
        body,
      });
      expect(response.status).toBe(200);
      expect(await run.code).toBe(0);
      expect(run.stdout()).toMatch(/"signatureValid":true,.*"shapeErrors":\[\],"status":200/);
    }
  });

  it("serve takes a call with null sentAt, context and integrations", async () => {
    const run = startInProcess(["serve", "--port", "0", "--memory", "--write-key", "wk", "--json"]);
    const [, url] = await run.waitFor(/"url":"(http[^"]+)"/);
    const { version: _v, channel: _c, receivedAt: _r, originalTimestamp: _o, ...call } = personasIdentify;
    const response = await fetch(`${url}/v1/identify`, {
      method: "POST",
      headers: { Authorization: `Basic ${Buffer.from("wk:").toString("base64")}` },
      body: JSON.stringify(call),
    });
    expect(response.status).toBe(200);
    const health = (await (await fetch(`${url}/health`)).json()) as Record<string, number>;
    expect(health).toMatchObject({ accepted: 1, rejected: 0 });
    run.stop();
    expect(await run.code).toBe(0);
  });
});
