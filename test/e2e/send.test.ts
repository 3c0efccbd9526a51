import { createHmac } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { collect, spawnCli } from "../helpers/cli.js";
import { statuses } from "../helpers/http-server.js";
import { httpsServersClosedAfterAll } from "../helpers/https-server.js";
import { IDENTIFY, PAGE, TRACK } from "../helpers/messages.js";
import { runInProcess, type InProcessOptions } from "../helpers/run-cli.js";
import { closeServersAfterEach, tempDir } from "../helpers/setup.js";
import { generateCertificates, type TestCertificates } from "../helpers/tls.js";

// In process (runInProcess); the Ctrl-C test runs the built CLI (`npm run build` first): a real process's signals and exit statuses.
const { dir, file } = tempDir("webhook-cli-send-");
const run = (args: string[], options: InProcessOptions = {}) => runInProcess(["send", ...args], { cwd: dir, ...options });

const { server } = closeServersAfterEach();

describe("webhook-cli send", () => {
  it("sends the exact headers and a signature an independent HMAC accepts", async () => {
    const s = await server();
    const result = await run([
      "--type",
      "track",
      "--user-id",
      "u_42",
      "--url",
      `${s.url}/hook`,
      "--secret",
      "s3cret",
      "--header",
      "X-Env: ci",
      "--now",
      "2024-01-01T00:00:00.000Z",
      "--seed",
      "3",
    ]);
    expect(result.code).toBe(0);
    expect(s.requests).toHaveLength(1);
    const req = s.requests[0];
    expect(req?.url).toBe("/hook");
    expect(req?.headers["user-agent"]).toBe("Segment.io/1.0");
    expect(req?.headers["content-type"]).toBe("application/json");
    expect(req?.headers["x-env"]).toBe("ci");
    expect(req?.headers["x-signature"]).toBe(
      createHmac("sha1", "s3cret")
        .update(req?.body ?? Buffer.alloc(0))
        .digest("hex"),
    );
    const body = JSON.parse(req?.body.toString("utf8") ?? "null");
    expect(body).toMatchObject({ version: 1, type: "track", userId: "u_42", timestamp: "2024-01-01T00:00:00.000Z" });
    // Compact JSON.stringify of the message: the bytes signed are the bytes sent.
    expect(req?.body.toString("utf8")).toBe(JSON.stringify(body));
    expect(result.stdout).toMatch(/✓ .*track u_42 → http:\/\/127\.0\.0\.1:\d+\/hook 200 delivered, 1 attempt/);
    expect(result.stdout + result.stderr).not.toContain("s3cret");
  });

  it("500, 500, 200 → delivered after 3 attempts with identical bodies", async () => {
    const s = await server(statuses(500, 500, 200));
    const input = file("one.json", JSON.stringify(TRACK, null, 2));
    const result = await run([input, "--url", s.url, "--secret", "k", "--retry-window", "30s"]);
    expect(result.code).toBe(0);
    expect(s.requests).toHaveLength(3);
    expect(new Set(s.requests.map((r) => r.body.toString("hex"))).size).toBe(1);
    expect(s.requests[0]?.body.toString()).toBe(JSON.stringify(TRACK));
    expect(result.stdout).toMatch(/200 delivered, 3 attempts/);
    expect(result.stderr).toMatch(/attempt 1 failed: HTTP 500; retrying in/);
  });

  it("400 → one attempt, exit 1", async () => {
    const s = await server(statuses(400));
    const result = await run(["--type", "identify", "--url", s.url, "--retry-window", "30s"]);
    expect(result.code).toBe(1);
    expect(s.requests).toHaveLength(1);
    expect(result.stdout).toMatch(/✗ .* 400 failed, 1 attempt/);
  });

  it("a 6 s delay hits the real 5 s default timeout: logged and retried", async () => {
    const s = await server((_req, res, index) => {
      if (index === 0) setTimeout(() => res.end(), 6000).unref();
      else res.end();
    });
    const started = Date.now();
    const result = await run(["--type", "page", "--url", s.url, "--retry-window", "30s"]);
    const elapsed = Date.now() - started;
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/attempt 1 failed: timeout: no response within 5\.0s; retrying in/);
    expect(s.requests).toHaveLength(2);
    expect(elapsed).toBeGreaterThanOrEqual(4900);
    expect(elapsed).toBeLessThan(12_000);
    expect(result.stdout).toMatch(/200 delivered, 2 attempts/);
  }, 30_000);

  it("URL A 500 + URL B 200 → delivered, A hit once", async () => {
    const a = await server(statuses(500));
    const b = await server(statuses(200));
    const result = await run(["--type", "track", "--url", a.url, "--url", b.url, "--retry-window", "30s"]);
    expect(result.code).toBe(0);
    expect(a.requests).toHaveLength(1);
    expect(b.requests).toHaveLength(1);
    expect(result.stdout).toMatch(/500 not retried \(delivered elsewhere\), 1 attempt/);
  });

  it("429 with Retry-After: 1 → waits about 1 s", async () => {
    const s = await server((_req, res, index) => {
      res.writeHead(index === 0 ? 429 : 200, index === 0 ? { "Retry-After": "1" } : {});
      res.end();
    });
    const result = await run(["--type", "track", "--url", s.url, "--retry-window", "30s"]);
    expect(result.code).toBe(0);
    expect(s.requests).toHaveLength(2);
    const gap = (s.requests[1]?.at ?? 0) - (s.requests[0]?.at ?? 0);
    expect(gap).toBeGreaterThanOrEqual(950);
    expect(gap).toBeLessThan(4000);
    expect(result.stderr).toMatch(/HTTP 429; retrying in 1\.0s/);
  });

  it("6 URLs → exit 2, the flag named, nothing sent", async () => {
    const s = await server();
    const result = await run(["--type", "track", ...Array.from({ length: 6 }, (_, i) => ["--url", `${s.url}/${i}`]).flat()]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--url: 6 URLs given; the destination takes at most 5/);
    expect(result.stderr).not.toMatch(/at .*\.js:\d+/);
    expect(s.requests).toHaveLength(0);
  });

  it("sends NDJSON from stdin in input order, one at a time, with --json results and a summary", async () => {
    const s = await server();
    const input = `${[TRACK, IDENTIFY, PAGE].map((m) => JSON.stringify(m)).join("\r\n")}\n`;
    const result = await run(["-", "--url", s.url, "--json"], { input: `\uFEFF${input}` });
    expect(result.code).toBe(0);
    expect(s.requests.map((r) => JSON.parse(r.body.toString()).userId)).toEqual(["u_1", "u_2", "u_3"]);
    const events = result.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(events.map((e) => e.event)).toEqual(["delivery", "delivery", "delivery", "summary"]);
    expect(events[1]).toMatchObject({ event: "delivery", line: 2, type: "identify", userId: "u_2", delivered: true });
    expect(events[1].urls).toEqual([{ url: s.url, status: 200, attempts: 1, error: null, ms: expect.any(Number) }]);
    expect(events[3]).toMatchObject({ event: "summary", messages: 3, delivered: 3, failed: 0, interrupted: false });
  });

  it("Ctrl-C while waiting to retry: stops, reports what was not delivered, exits 130 (143 for SIGTERM)", { tags: ["smoke"] }, async () => {
    for (const [signal, code] of [
      ["SIGINT", 130],
      ["SIGTERM", 143],
    ] as const) {
      const s = await server(statuses(500));
      const input = [TRACK, IDENTIFY].map((m) => JSON.stringify(m)).join("\n");
      const child = spawnCli(["send", "-", "--url", s.url, "--retry-window", "1h", "--json"], { cwd: dir });
      child.stdin?.end(input);
      const done = collect(child, 20_000);
      // Wait until the first attempt failed; by then it waits up to 1 s before retrying, so signal often lands in a wait.
      await expect.poll(() => s.requests.length, { interval: 25 }).toBeGreaterThanOrEqual(2);
      child.kill(signal);
      const result = await done;
      expect(result.code).toBe(code);
      const events = result.stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      expect(events[0]).toMatchObject({ event: "delivery", line: 1, delivered: false });
      expect(events.at(-1)).toMatchObject({ event: "summary", messages: 2, delivered: 0, notDelivered: 2, interrupted: true });
      expect(result.stderr).toMatch(/interrupted: 2 messages were not delivered \(1 not sent\)/);
      // The second message was never sent.
      expect(s.requests.every((r) => JSON.parse(r.body.toString()).userId === "u_1")).toBe(true);
    }
  });
});

describe("webhook-cli send over HTTPS", () => {
  let certs: TestCertificates;
  const httpsServer = httpsServersClosedAfterAll();
  beforeAll(() => {
    certs = generateCertificates();
  });

  it("a self-signed certificate is refused with no request received, exit 1", async () => {
    const h = await httpsServer(certs.selfSignedCert, certs.selfSignedKey);
    const result = await run(["--type", "track", "--url", h.url, "--retry-window", "30s"]);
    expect(result.code).toBe(1);
    expect(h.requests).toBe(0);
    expect(result.stdout).toMatch(/failed, 1 attempt/);
    expect(result.stdout).toMatch(/certificate of 127\.0\.0\.1:\d+ is not trusted \(self-signed certificate\)/);
    expect(result.stdout).toMatch(/--ca FILE/);
  });

  it("a CA-signed certificate is accepted with --ca", async () => {
    const h = await httpsServer(certs.cert, certs.key);
    const refused = await run(["--type", "track", "--url", h.url, "--retry-window", "30s"]);
    expect(refused.code).toBe(1);
    expect(h.requests).toBe(0);
    const accepted = await run(["--type", "track", "--url", h.url, "--ca", certs.caCertPath]);
    expect(accepted.code).toBe(0);
    expect(h.requests).toBe(1);
  });
});
