import { createHmac } from "node:crypto";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "../helpers/http-server.js";
import { IDENTIFY, TRACK } from "../helpers/messages.js";
import { runInProcess, startInProcess, type InProcessRun } from "../helpers/run-cli.js";

const SECRET = "routing-secret";
const hmac = (body: string) => createHmac("sha1", SECRET).update(body).digest("hex");

async function post(url: string, body: string, method: "POST" | "PUT" = "POST"): Promise<{ status: number; body: string }> {
  const answer = await request(url, { method, body, headers: { "content-type": "application/json", "x-signature": hmac(body) } });
  return { status: answer.statusCode, body: await answer.body.text() };
}

const events = (run: InProcessRun): Record<string, unknown>[] =>
  run
    .stdout()
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe("listen --forward-to TYPE=URL: a URL per message type, the rest to the default (two apps on two ports)", () => {
  let tracks: TestServer;
  let rest: TestServer;
  let run: InProcessRun;
  let url: string;

  beforeAll(async () => {
    tracks = await startServer((_req, res) => void res.writeHead(201, { "content-type": "application/json" }).end('{"app":"tracks"}'));
    rest = await startServer((_req, res) => void res.writeHead(202, { "content-type": "application/json" }).end('{"app":"rest"}'));
    run = startInProcess([
      "listen",
      "--port",
      "0",
      "--json",
      "--secret",
      SECRET,
      "--forward-to",
      `track=${tracks.url}/track`,
      "--forward-to",
      `${rest.url}/webhook`,
    ]);
    url = (await run.waitFor(/"event":"listening","url":"([^"]+)"/))[1] as string;
  });

  afterAll(async () => {
    run.stop("SIGTERM");
    await run.code;
    await Promise.all([tracks.close(), rest.close()]);
  });

  it("the start event names the default and each type's URL", () => {
    expect(events(run)[0]).toMatchObject({ event: "listening", forwardTo: `${rest.url}/webhook`, forwardByType: { track: `${tracks.url}/track` } });
  });

  it("a track goes to the track app with its exact bytes and signature; the sender gets that app's answer", async () => {
    const body = JSON.stringify(TRACK);
    expect(await post(`${url}/hooks`, body)).toEqual({ status: 201, body: '{"app":"tracks"}' });
    expect(tracks.requests.map((one) => [one.url, one.body.toString(), one.headers["x-signature"]])).toEqual([["/track", body, hmac(body)]]);
    expect(rest.requests).toHaveLength(0);
  });

  it("another type, a batch, a mapped payload and a body that is no message go to the default", async () => {
    const bodies = [JSON.stringify(IDENTIFY), JSON.stringify([TRACK]), '{"sku":"sku-9"}', "not json"];
    for (const body of bodies) expect(await post(`${url}/hooks`, body, "PUT")).toEqual({ status: 202, body: '{"app":"rest"}' });
    expect(rest.requests.map((one) => [one.method, one.url, one.body.toString()])).toEqual(bodies.map((body) => ["PUT", "/webhook", body]));
    expect(tracks.requests).toHaveLength(1);
  });
});

describe("listen --forward-to TYPE=URL without a default", () => {
  let tracks: TestServer;
  let run: InProcessRun;
  let url: string;

  beforeAll(async () => {
    tracks = await startServer((_req, res) => void res.writeHead(201).end("tracked"));
    run = startInProcess(["listen", "--port", "0", "--secret", SECRET, "--forward-to", `track=${tracks.url}/track`]);
    url = (await run.waitFor(/Listening on (\S+)/))[1] as string;
    await run.waitFor(/Answering the rest here/);
  });

  afterAll(async () => {
    run.stop("SIGTERM");
    await run.code;
    await tracks.close();
  });

  it("the start lines name the type's URL and that the rest is answered here", () => {
    expect(run.stdout()).toContain(`Forwarding track to ${tracks.url}/track\nAnswering the rest here: no --forward-to without a type\n`);
  });

  it("a track is relayed; any other request is answered as listen answers without forwarding", async () => {
    expect(await post(`${url}/a`, JSON.stringify(TRACK))).toEqual({ status: 201, body: "tracked" });
    expect(await post(`${url}/b`, JSON.stringify(IDENTIFY))).toEqual({ status: 200, body: '{"ok":true}' });
    const forged = await request(`${url}/c`, { method: "POST", body: JSON.stringify([IDENTIFY]), headers: { "x-signature": "0".repeat(40) } });
    expect(forged.statusCode).toBe(401);
    await forged.body.text();
    expect(tracks.requests.map((one) => one.url)).toEqual(["/track"]);
  });
});

describe("listen --forward-to refusals (exit 2, nothing started)", () => {
  it("two URLs without a type name both", async () => {
    const result = await runInProcess(["listen", "--port", "0", "--forward-to", "http://127.0.0.1:1/a", "--forward-to", "http://127.0.0.1:2/b"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--forward-to: two URLs without a type: http:\/\/127\.0\.0\.1:1\/a and http:\/\/127\.0\.0\.1:2\/b/);
    expect(result.stdout).not.toContain("Listening on");
  });

  // As --url refuses it: the URL would be printed, and a relay sends no credentials of its own.
  it.each([
    ["the default URL", "http://alice:hunter2@127.0.0.1:1/app"],
    ["a type's URL", "track=http://alice:hunter2@127.0.0.1:1/app"],
    ["a type's URL, a user alone", "identify=http://alice@127.0.0.1:1/app"],
  ])("credentials (user:password@) in %s are refused, saying why, the password masked", async (_where, value) => {
    // --exit-after: a listen that took the URL ends by itself (as the old code's did, exit 0).
    const result = await runInProcess(["listen", "--port", "0", "--exit-after", "2s", "--forward-to", value]);
    expect(result.stderr).toMatch(
      /^error: --forward-to: "http:\/\/alice(:\*\*\*)?@127\.0\.0\.1:1\/app" has credentials in it \(user:password@\): listen would not send them; have the sender send them as a header \(send --header 'Authorization: Basic …'\), which listen relays\n$/,
    );
    expect(result).toMatchObject({ code: 2, stdout: "" });
    expect(result.stderr).not.toContain("hunter2");
  });

  it("a type's URL that is no http URL is named", async () => {
    const result = await runInProcess(["listen", "--port", "0", "--forward-to", "track=ftp://127.0.0.1/x"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--forward-to: "ftp:\/\/127\.0\.0\.1\/x" is not an http: or https: URL/);
  });
});
