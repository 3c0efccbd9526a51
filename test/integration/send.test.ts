import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { statuses } from "../helpers/http-server.js";
import { IDENTIFY, PAGE, TRACK } from "../helpers/messages.js";
import { runInProcess, type InProcessOptions } from "../helpers/run-cli.js";
import { closeServersAfterEach, tempDir } from "../helpers/setup.js";

// `send` through the real command table, in this process; test/e2e/send.test.ts covers the rest.
const { dir, file } = tempDir("webhook-cli-send-int-");

const run = (args: string[], options: InProcessOptions = {}) => runInProcess(["send", ...args], { cwd: dir, ...options });

const { server } = closeServersAfterEach();

describe("send (in process)", () => {
  it("--timeout shortens the deadline", async () => {
    const s = await server((_req, res) => {
      setTimeout(() => res.end(), 2000).unref();
    });
    const result = await run(["--type", "page", "--url", s.url, "--timeout", "200ms", "--retry-window", "0s", "--json"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/timeout: no response within 200ms/);
    const delivery = JSON.parse(result.stdout.split("\n")[0] ?? "");
    expect(delivery.urls[0]).toMatchObject({ status: null, attempts: 1 });
  });

  it("bad settings → exit 2 naming the value: non-http URL, refused header, bad duration, invalid config", async () => {
    const s = await server();
    const ftp = await run(["--type", "track", "--url", "ftp://127.0.0.1/x"]);
    expect(ftp.code).toBe(2);
    expect(ftp.stderr).toContain(`"ftp://127.0.0.1/x" is not an http: or https: URL`);
    const header = await run(["--type", "track", "--url", s.url, "--header", "Content-Type: text/plain"]);
    expect(header.code).toBe(2);
    expect(header.stderr).toMatch(/--header: header "Content-Type" cannot be set/);
    const timeout = await run(["--type", "track", "--url", s.url, "--timeout", "5"]);
    expect(timeout.code).toBe(2);
    expect(timeout.stderr).toMatch(/--timeout: invalid duration "5"/);
    const config = file("bad-config.json", JSON.stringify({ webhooks: [{ url: s.url, headers: { Host: "x" } }] }));
    const bad = await run(["--type", "track", "--config", config]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("bad-config.json");
    expect(bad.stderr).toContain("webhooks[0].headers.Host");
    expect(s.requests).toHaveLength(0);
  });

  it("an invalid message anywhere → exit 2 naming file:line and key; nothing sent, not even the valid ones", async () => {
    const s = await server();
    const { userId: _dropped, ...noUser } = IDENTIFY;
    const input = file("bad.ndjson", `${JSON.stringify(TRACK)}\n\n${JSON.stringify(noUser)}\n`);
    const result = await run([input, "--url", s.url]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/bad\.ndjson:3: key "userId": missing required key "userId"/);
    expect(s.requests).toHaveLength(0);
    const notJson = file("broken.ndjson", `${JSON.stringify(TRACK)}\n{"type": "page",\n`);
    const broken = await run([notJson, "--url", s.url]);
    expect(broken.code).toBe(2);
    expect(broken.stderr).toMatch(/broken\.ndjson:2: not valid JSON/);
    const array = file("bad.json", JSON.stringify([TRACK, { ...PAGE, properties: "x" }]));
    const arrayResult = await run([array, "--url", s.url]);
    expect(arrayResult.code).toBe(2);
    expect(arrayResult.stderr).toMatch(/bad\.json: key "\[1\]\.properties"/);
    expect(s.requests).toHaveLength(0);
  });

  it("sends a JSON array in order", async () => {
    const s = await server();
    const result = await run([file("many.json", JSON.stringify([PAGE, TRACK])), "--url", s.url]);
    expect(result.code).toBe(0);
    expect(s.requests.map((r) => JSON.parse(r.body.toString()).type)).toEqual(["page", "track"]);
    expect(result.stdout).toMatch(/2 messages: 2 delivered, 0 failed/);
  });

  it("--dry-run prints the exact requests with X-Signature, sends nothing, never prints the secret", async () => {
    const s = await server();
    const secretFile = file("secret.txt", "file-secret\n");
    const result = await run([file("dry.json", JSON.stringify(TRACK)), "--url", s.url, "--secret-file", secretFile, "--dry-run"]);
    expect(result.code).toBe(0);
    expect(s.requests).toHaveLength(0);
    const signature = createHmac("sha1", "file-secret").update(JSON.stringify(TRACK)).digest("hex");
    expect(result.stdout).toContain(`POST ${s.url}`);
    expect(result.stdout).toContain("User-Agent: Segment.io/1.0");
    expect(result.stdout).toContain("Content-Type: application/json");
    expect(result.stdout).toContain(`X-Signature: ${signature}`);
    expect(result.stdout).toContain(JSON.stringify(TRACK));
    expect(result.stdout + result.stderr).not.toContain("file-secret");
  });

  it("--verbose shows each attempt's request and response; the secret comes from WEBHOOK_SECRET and is never shown", async () => {
    const s = await server((_req, res, index) => {
      res.statusCode = index === 0 ? 503 : 202;
      res.setHeader("X-Reply", "yes");
      res.end(index === 0 ? "busy" : "accepted");
    });
    const result = await run(["--type", "group", "--url", s.url, "--verbose", "--retry-window", "30s"], { env: { WEBHOOK_SECRET: "env-secret" } });
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/> POST http:\/\/127\.0\.0\.1:\d+ \(attempt 1\)/);
    expect(result.stderr).toMatch(/> X-Signature: [0-9a-f]{40}/);
    expect(result.stderr).toMatch(/< 503/);
    expect(result.stderr).toContain("< busy");
    expect(result.stderr).toMatch(/< 202/);
    expect(result.stderr).toContain("< x-reply: yes");
    expect(s.requests[0]?.headers["x-signature"]).toBe(
      createHmac("sha1", "env-secret")
        .update(s.requests[0]?.body ?? "")
        .digest("hex"),
    );
    expect(result.stdout + result.stderr).not.toContain("env-secret");
  });

  it("reads targets, per-URL headers and the secret from a config file", async () => {
    const a = await server(statuses(500));
    const b = await server();
    const config = file(
      "webhook-cli.json",
      JSON.stringify({
        sharedSecret: "cfg",
        webhooks: [
          { url: a.url, headers: { "X-Which": "a" } },
          { url: b.url, headers: { "X-Which": "b" } },
        ],
      }),
    );
    const result = await run(["--type", "track", "--config", config]);
    expect(result.code).toBe(0);
    expect(a.requests[0]?.headers["x-which"]).toBe("a");
    expect(b.requests[0]?.headers["x-which"]).toBe("b");
    expect(b.requests[0]?.headers["x-signature"]).toBe(
      createHmac("sha1", "cfg")
        .update(b.requests[0]?.body ?? "")
        .digest("hex"),
    );
  });

  it("usage errors: FILE and --type together, neither, overrides without --type", async () => {
    const both = await run(["x.json", "--type", "track", "--url", "http://127.0.0.1:9"]);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/--type: give either a FILE/);
    const neither = await run(["--url", "http://127.0.0.1:9"]);
    expect(neither.code).toBe(2);
    expect(neither.stderr).toMatch(/nothing to send/);
    const override = await run([file("o.json", JSON.stringify(TRACK)), "--user-id", "x", "--url", "http://127.0.0.1:9"]);
    expect(override.code).toBe(2);
    expect(override.stderr).toMatch(/--user-id applies to the message generated with --type/);
  });

  it("--ca must be a PEM certificate", async () => {
    const result = await run(["--type", "track", "--url", "https://127.0.0.1:9/", "--ca", file("not-pem.txt", "hello")]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/not-pem\.txt: --ca: not a PEM certificate/);
  });
});
