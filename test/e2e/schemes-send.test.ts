import { describe, expect, it } from "vitest";
import { SCHEME_NAMES, type SchemeName } from "../../src/signing/schemes.js";
import type { ReceivedRequest } from "../helpers/http-server.js";
import { runInProcess, startInProcess } from "../helpers/run-cli.js";
import { ANY_SCHEME_SECRET, ID_HEADER, OTHER_SECRET, ownerVerifies, timestampOf, withChangedByte } from "../helpers/scheme-judges.js";
import { closeServersAfterEach, tempDir } from "../helpers/setup.js";

// `send` and `replay` under each scheme, run in process against a real server on 127.0.0.1; what
// they deliver is judged by each scheme's owner (test/helpers/scheme-judges.ts), never by our verifier.
const { dir, ndjson, file } = tempDir("webhook-cli-schemes-send-");
const { server } = closeServersAfterEach();
const MESSAGE = {
  version: 1,
  type: "track",
  userId: "user_1",
  event: "Order Completed",
  properties: { total: 42, city: "東京" },
  messageId: "m-1.a",
  timestamp: "2024-01-01T00:00:00.000Z",
};
const OTHER_MESSAGE = { ...MESSAGE, userId: "user_2", messageId: "m-2.b" };

/** The full URL a request reached (Twilio's signature covers it). */
const urlOf = (base: string, request: ReceivedRequest): string => `${base}${request.url}`;

async function judged(scheme: SchemeName, secret: string, base: string, request: ReceivedRequest, body = request.body): Promise<boolean> {
  return ownerVerifies(scheme, secret, { headers: request.headers, body, url: urlOf(base, request) });
}

describe("send --scheme: the owner's verifier accepts what is sent, and refuses it changed", () => {
  it.each(SCHEME_NAMES)("%s", async (scheme) => {
    const target = await server();
    const result = await runInProcess(["send", "-", "--url", `${target.url}/hook?team=a`, "--scheme", scheme, "--secret", ANY_SCHEME_SECRET], {
      cwd: dir,
      input: JSON.stringify(MESSAGE),
    });
    expect(result, result.stderr).toMatchObject({ code: 0 });
    const [request] = target.requests as [ReceivedRequest];
    expect(await judged(scheme, ANY_SCHEME_SECRET, target.url, request)).toBe(true);
    expect(await judged(scheme, OTHER_SECRET, target.url, request)).toBe(false);
    expect(await judged(scheme, ANY_SCHEME_SECRET, target.url, request, withChangedByte(request.body))).toBe(false);
    if (scheme === "github") expect(request.headers["x-github-event"]).toBe("track");
    if (scheme === "twilio") expect(request.url).toMatch(/^\/hook\?team=a&bodySHA256=[0-9a-f]{64}$/);
  });

  it("rotation: standard, svix and stripe sign with each secret; the others with the first", async () => {
    for (const scheme of SCHEME_NAMES) {
      const target = await server();
      const args = ["send", "--type", "identify", "--url", target.url, "--scheme", scheme, "--secret", ANY_SCHEME_SECRET, "--secret", OTHER_SECRET];
      expect((await runInProcess(args, { cwd: dir })).code).toBe(0);
      const [request] = target.requests as [ReceivedRequest];
      expect(await judged(scheme, ANY_SCHEME_SECRET, target.url, request)).toBe(true);
      expect([scheme, await judged(scheme, OTHER_SECRET, target.url, request)]).toEqual([scheme, ["standard", "svix", "stripe"].includes(scheme)]);
    }
  });

  it("each webhook of the config file signs by its own scheme; --scheme names every one's", async () => {
    const [github, standard] = [await server(), await server()];
    const config = file(
      "schemes.json",
      JSON.stringify({
        webhooks: [
          { url: github.url, scheme: "github" },
          { url: standard.url, scheme: "standard" },
        ],
      }),
    );
    const result = await runInProcess(["send", "--type", "track", "--config", config, "--secret", ANY_SCHEME_SECRET], { cwd: dir });
    expect(result, result.stderr).toMatchObject({ code: 0 });
    expect(await judged("github", ANY_SCHEME_SECRET, github.url, github.requests[0] as ReceivedRequest)).toBe(true);
    expect(await judged("standard", ANY_SCHEME_SECRET, standard.url, standard.requests[0] as ReceivedRequest)).toBe(true);
    expect(github.requests[0]?.headers["webhook-signature"]).toBeUndefined();
    await runInProcess(["send", "--type", "track", "--config", config, "--secret", ANY_SCHEME_SECRET, "--scheme", "slack"], { cwd: dir });
    for (const target of [github, standard]) expect(await judged("slack", ANY_SCHEME_SECRET, target.url, target.requests[1] as ReceivedRequest)).toBe(true);
  });

  it("--retry-rules standard retries what the destination does not (a 400), honouring Retry-After on any answer", async () => {
    const answers = (status: number) => (_r: ReceivedRequest, res: import("node:http").ServerResponse, index: number) => {
      res.writeHead(index === 0 ? status : 200, { "retry-after": "0" }).end();
    };
    const classic = await server(answers(400));
    const args = (url: string) => ["send", "--type", "track", "--url", url, "--scheme", "standard", "--secret", ANY_SCHEME_SECRET];
    expect((await runInProcess(args(classic.url), { cwd: dir })).code).toBe(1);
    expect(classic.requests).toHaveLength(1);
    const standard = await server(answers(400));
    const result = await runInProcess([...args(standard.url), "--retry-rules", "standard"], { cwd: dir });
    expect(result, result.stderr).toMatchObject({ code: 0 });
    expect(standard.requests).toHaveLength(2);
    // 410 Gone stops a Standard Webhooks sender.
    const gone = await server(answers(410));
    expect((await runInProcess([...args(gone.url), "--retry-rules", "standard"], { cwd: dir })).code).toBe(1);
    expect(gone.requests).toHaveLength(1);
  });
});

describe("replay --scheme: re-signed with a fresh timestamp, under a stable message id", () => {
  /** A recording line as listen writes it, carrying the scheme's headers of a delivery long ago. */
  function recorded(scheme: SchemeName, id: string | undefined): string {
    const header = ID_HEADER[scheme];
    const headers: Record<string, string> = { "content-type": "application/json", "webhook-timestamp": "1700000000" };
    if (header !== undefined && id !== undefined) headers[header] = id;
    return JSON.stringify({ receivedAt: "2023-11-14T22:13:20.000Z", method: "POST", path: "/hook", headers, signatureValid: true, body: MESSAGE });
  }

  it.each(SCHEME_NAMES)("%s: the owner verifies each replayed line (a recorded one and a bare message)", async (scheme) => {
    const target = await server();
    const id = scheme === "github" || scheme === "shopify" ? "72d3162e-cc78-11e3-81ab-4c9367dc0958" : "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W";
    const input = ndjson([recorded(scheme, id), JSON.stringify(OTHER_MESSAGE)]);
    const result = await runInProcess(["replay", input, "--url", target.url, "--scheme", scheme, "--secret", ANY_SCHEME_SECRET, "--concurrency", "1"], {
      cwd: dir,
    });
    expect(result, result.stderr).toMatchObject({ code: 0 });
    expect(target.requests).toHaveLength(2);
    for (const request of target.requests) expect(await judged(scheme, ANY_SCHEME_SECRET, target.url, request)).toBe(true);
    const header = ID_HEADER[scheme];
    if (header !== undefined) expect(target.requests[0]?.headers[header]).toBe(id);
    // A recorded timestamp of 2023 is not sent again: the owner's 5-minute tolerance passed above, and it is today's.
    const sent = timestampOf(scheme, target.requests[0]?.headers ?? {});
    if (sent !== undefined) expect(Math.abs(sent - Date.now() / 1000)).toBeLessThan(60);
  });

  it("replaying a log twice sends each message under the same id both times; a retry keeps it too", async () => {
    const input = ndjson([JSON.stringify(MESSAGE), JSON.stringify(OTHER_MESSAGE)]);
    // The first attempt of each message gets 503 with Retry-After: 0 (retried at once), the second 200.
    const seen = new Set<string>();
    const target = await server((request, res) => {
      const id = String(request.headers["webhook-id"]);
      res.writeHead(seen.has(id) ? 200 : 503, { "retry-after": "0" }).end();
      seen.add(id);
    });
    const replay = () =>
      runInProcess(["replay", input, "--url", target.url, "--scheme", "standard", "--secret", ANY_SCHEME_SECRET, "--concurrency", "1"], { cwd: dir });
    expect((await replay()).code).toBe(0);
    expect((await replay()).code).toBe(0);
    const ids = target.requests.map((request) => request.headers["webhook-id"]);
    // Per run: message 1's attempt and retry, message 2's attempt and retry (a second run: each id is known, 200 at once).
    expect(ids).toHaveLength(6);
    expect(ids[0]).toBe(ids[1]);
    expect(ids[2]).toBe(ids[3]);
    expect(ids[0]).not.toBe(ids[2]);
    expect(ids.slice(4)).toEqual([ids[0], ids[2]]);
    expect(ids[0]).toMatch(/^msg_[A-Za-z0-9_-]{22}$/);
    for (const request of target.requests) expect(await judged("standard", ANY_SCHEME_SECRET, target.url, request)).toBe(true);
  });
});

describe("serve --scheme: what it forwards is signed by the scheme", () => {
  it("svix, with rotation: the owner verifies with either secret", async () => {
    const target = await server();
    const args = ["serve", "--port", "0", "--memory", "--write-key", "wk_test", "--url", `${target.url}/hook`, "--scheme", "svix"];
    const run = startInProcess([...args, "--secret", ANY_SCHEME_SECRET, "--secret", OTHER_SECRET], { cwd: dir });
    const [, url] = (await run.waitFor(/Listening on (\S+)/, 15_000)) as [string, string];
    const auth = `Basic ${Buffer.from("wk_test:").toString("base64")}`;
    const call = await fetch(`${url}/v1/track`, {
      method: "POST",
      headers: { authorization: auth, "content-type": "application/json" },
      body: JSON.stringify({ userId: "user_1", event: "Signed Up" }),
    });
    expect(call.status).toBe(200);
    await expect.poll(() => target.requests.length, { timeout: 10_000 }).toBe(1);
    const [request] = target.requests as [ReceivedRequest];
    expect(request.headers["svix-id"]).toMatch(/^msg_/);
    for (const secret of [ANY_SCHEME_SECRET, OTHER_SECRET]) expect(await judged("svix", secret, target.url, request)).toBe(true);
    run.stop("SIGINT");
    expect((await run.done).code).toBe(0);
  });
});

describe("bad input: a clear error, exit 2, nothing sent", () => {
  it.each([
    [["--scheme", "stndard", "--secret", ANY_SCHEME_SECRET], /--scheme: unknown scheme "stndard" \(Did you mean standard\?\)/],
    [["--scheme", "standard", "--secret", "not base64!"], /the secret is not a standard secret: it must be whsec_ followed by base64/],
    [["--scheme", "svix", "--secret", ANY_SCHEME_SECRET, "--secret", "whsec_"], /secret 2 of 2 is not a svix secret/],
    [["--retry-rules", "standrad"], /--retry-rules: invalid value "standrad" \(Did you mean standard\?\)/],
  ])("send %j", async (args, message) => {
    const target = await server();
    const result = await runInProcess(["send", "--type", "track", "--url", target.url, ...args], { cwd: dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(target.requests).toHaveLength(0);
  });

  it("a config webhook with an unknown scheme names the file and key", async () => {
    const config = file("bad-scheme.json", JSON.stringify({ webhooks: [{ url: "http://127.0.0.1:9/h", scheme: "sivx" }] }));
    const result = await runInProcess(["send", "--type", "track", "--config", config], { cwd: dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/bad-scheme\.json.*webhooks\[0\]\.scheme/);
  });
});
