import { createHmac } from "node:crypto";
import { appendFileSync, mkdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IDENTIFY, TRACK } from "../helpers/messages.js";
import { jsonEvents, runInProcess, startInProcess, type InProcessRun } from "../helpers/run-cli.js";
import { tempDir } from "../helpers/setup.js";

const SECRET = "inspect-secret";
const hmac = (body: string | Buffer) => createHmac("sha1", SECRET).update(body).digest("hex");
const files = tempDir("webhook-cli-inspect-");

const ada = JSON.stringify({ ...TRACK, userId: "ada", properties: { note: "needle in a body" } });
const bob = JSON.stringify({ ...IDENTIFY, userId: "bob" });
const FIRST = JSON.stringify({ ...TRACK, userId: "batch-first" });
const batch = `[${FIRST},${JSON.stringify({ ...TRACK, userId: "batch-second" })}]`;
const carol = JSON.stringify({ ...TRACK, userId: "carol" });

async function send(url: string, body: string, signature: string, method: "POST" | "PUT" = "POST"): Promise<number> {
  const answer = await request(url, { method, body, headers: { "content-type": "application/json", "x-signature": signature } });
  await answer.body.dump();
  return answer.statusCode;
}

async function api(url: string, init: { method?: "GET" | "POST"; body?: unknown } = {}): Promise<{ status: number; json: Record<string, unknown> }> {
  const answer = await request(url, {
    method: init.method ?? "GET",
    ...(init.body !== undefined ? { body: JSON.stringify(init.body), headers: { "content-type": "application/json" } } : {}),
  });
  return { status: answer.statusCode, json: (await answer.body.json()) as Record<string, unknown> };
}

const labels = (json: Record<string, unknown>): string[] => (json["rows"] as { label: string }[]).map((row) => row.label);

/** A receiving listen's `request` events. */
const requestEvents = (run: InProcessRun): Record<string, unknown>[] => jsonEvents(run.stdout(), "request");

describe("webhook-cli inspect FILE: a recording in the inspector page, read only", () => {
  const recording = join(files.dir, "rec", "received.ndjson");
  let before: { bytes: Buffer; mtimeMs: number };
  let inspect: InProcessRun;
  let target: InProcessRun;
  let page: string;
  let targetUrl: string;

  beforeAll(async () => {
    mkdirSync(join(files.dir, "rec"));
    const listen = startInProcess(["listen", "--port", "0", "--secret", SECRET, "--record", recording, "--count", "4", "--json"]);
    const url = (await listen.waitFor(/"event":"listening","url":"([^"]+)"/))[1] as string;
    expect(await send(`${url}/hooks`, ada, hmac(ada))).toBe(200);
    expect(await send(`${url}/hooks`, bob, hmac(bob))).toBe(200);
    expect(await send(`${url}/batch`, batch, hmac(FIRST), "PUT")).toBe(200);
    expect(await send(`${url}/hooks`, carol, "0".repeat(40))).toBe(401);
    expect(await listen.code).toBe(1);
    appendFileSync(recording, "{not json\n");
    before = { bytes: readFileSync(recording), mtimeMs: statSync(recording).mtimeMs };

    target = startInProcess(["listen", "--port", "0", "--secret", SECRET, "--json"]);
    targetUrl = (await target.waitFor(/"event":"listening","url":"([^"]+)"/))[1] as string;
    inspect = startInProcess(["inspect", recording, "--port", "0", "--secret", SECRET, "--json"]);
    page = (await inspect.waitFor(/"event":"inspecting","url":"([^"]+)"/))[1] as string;
  });

  afterAll(async () => {
    inspect?.stop("SIGINT");
    target?.stop("SIGINT");
    expect(await inspect?.code).toBe(0);
    await target?.code;
  });

  it("announces the page and the requests it holds; /api/info tells the page it is a recording", async () => {
    expect(JSON.parse(inspect.stdout().split("\n")[0] ?? "{}")).toMatchObject({ event: "inspecting", url: page, requests: 5, skipped: 0 });
    const info = await api(`${page}/api/info`);
    expect(info.json).toMatchObject({ mode: "file", file: "received.ndjson", requests: 5, receiverUrl: null, size: before.bytes.length });
  });

  it("pages through the lines newest first, each row labelled by its line number and judged as listen judged it", async () => {
    const first = await api(`${page}/api/rows?limit=2`);
    expect(labels(first.json)).toEqual(["5", "4"]);
    const rows = first.json["rows"] as Record<string, unknown>[];
    expect(rows[0]).toMatchObject({ kind: "invalid", valid: false });
    expect(rows[1]).toMatchObject({ userId: "carol", signature: "failed" });
    const rest = await api(`${page}/api/rows?before=${first.json["next"]}`);
    expect(labels(rest.json)).toEqual(["3", "2", "1"]);
    expect(rest.json["next"]).toBeNull();
    expect(rest.json["rows"]).toMatchObject([
      { method: "PUT", path: "/batch", kindLabel: "batch of 2", signature: "ok", signatureRule: "first-element" },
      { type: "identify", userId: "bob" },
      { type: "track", userId: "ada", valid: true },
    ]);
    const junk = await api(`${page}/api/requests/5`);
    expect(junk.json["shapeErrors"]).toEqual([{ key: "(line)", message: expect.stringMatching(/^line 5 is not JSON/) }]);
  });

  it("searches the whole file on the server: text in bodies, type and verdict", async () => {
    expect(labels((await api(`${page}/api/search?q=NEEDLE`)).json)).toEqual(["1"]);
    expect(labels((await api(`${page}/api/search?type=batch`)).json)).toEqual(["3"]);
    expect(labels((await api(`${page}/api/search?verdict=signature`)).json)).toEqual(["4"]);
    expect(labels((await api(`${page}/api/search?q=batch-second&type=track`)).json)).toEqual([]);
    expect((await api(`${page}/api/search?q=bob`)).json).toMatchObject({ next: null, scanned: before.bytes.length - 5 });
  });

  it("Resend needs a URL (a recording has no receiver); copy-as-curl goes to the URL given", async () => {
    const refused = await api(`${page}/api/requests/1/resend`, { method: "POST", body: {} });
    expect(refused.status).toBe(400);
    expect(refused.json["error"]).toMatch(/type the URL to resend to/);
    expect((await api(`${page}/api/requests/1`)).json).toMatchObject({ curl: null, curlProblem: expect.stringMatching(/type the URL/) });
    const curl = (await api(`${page}/api/requests/1?url=${encodeURIComponent(`${targetUrl}/typed`)}`)).json["curl"];
    expect(curl).toContain(`-X POST '${targetUrl}/typed'`);
  });

  it("edit-then-resend: the edited batch is re-signed over element 0 and verifies at a listen; the original row is unchanged", async () => {
    const edited = batch.replace('"batch-first"', '"edited-first"');
    const resent = await api(`${page}/api/requests/3/resend`, { method: "POST", body: { url: `${targetUrl}/edited`, body: edited } });
    expect(resent.status).toBe(200);
    expect(resent.json).toMatchObject({ label: "R1", resendOf: 3, resendOfLabel: "3", resendEdited: true, appStatus: 200, signature: "ok" });
    await expect.poll(() => requestEvents(target).at(-1)).toMatchObject({ path: "/edited", signatureValid: true, signatureRule: "first-element" });
    expect((await api(`${page}/api/requests/${resent.json["id"]}`)).json).toMatchObject({ bodyRaw: edited, resendEdited: true });
    expect((await api(`${page}/api/requests/3`)).json).toMatchObject({ bodyRaw: batch, resendOf: null });

    // An edit that leaves no element 0 cannot be signed by the rule the row verified with.
    const broken = await api(`${page}/api/requests/3/resend`, { method: "POST", body: { url: targetUrl, body: '{"no":"array"}' } });
    expect(broken.status).toBe(400);
    expect(broken.json["error"]).toMatch(/must stay a JSON array/);
  });

  it("an edited message is re-signed over the whole body; an unedited resend sends the recorded bytes", async () => {
    const edited = ada.replace('"ada"', '"ada-edited"');
    expect((await api(`${page}/api/requests/1/resend`, { method: "POST", body: { url: targetUrl, body: edited } })).json).toMatchObject({ resendEdited: true });
    await expect.poll(() => requestEvents(target).at(-1)).toMatchObject({ userId: "ada-edited", signatureValid: true, signatureRule: "body" });
    expect((await api(`${page}/api/requests/2/resend`, { method: "POST", body: { url: targetUrl } })).json).toMatchObject({ resendEdited: false, label: "R3" });
    await expect.poll(() => requestEvents(target).at(-1)).toMatchObject({ userId: "bob", signatureValid: true });
    expect(labels((await api(`${page}/api/rows?limit=4`)).json)).toEqual(["R3", "R2", "R1", "5"]);
  });

  it("refuses an edited body over 1 MiB", async () => {
    const huge = await api(`${page}/api/requests/1/resend`, { method: "POST", body: { url: targetUrl, body: "x".repeat(1024 * 1024 + 1) } });
    expect(huge.status).toBe(400);
    expect(huge.json["error"]).toMatch(/over 1048576 bytes/);
  });

  it("Download gives the recording's own lines, as they stand in the file", async () => {
    const answer = await request(`${page}/api/download?ids=3,1`);
    const lines = before.bytes.toString().split("\n");
    expect(await answer.body.text()).toBe(`${lines[0]}\n${lines[2]}\n`);
  });

  it("never writes the file", () => {
    expect(readFileSync(recording).equals(before.bytes)).toBe(true);
    expect(statSync(recording).mtimeMs).toBe(before.mtimeMs);
  });
});

describe("webhook-cli inspect refusals (exit 2)", () => {
  it("a file that cannot be read, and a directory, are named", async () => {
    const missing = await runInProcess(["inspect", join(files.dir, "nope.ndjson"), "--port", "0"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/nope\.ndjson.*cannot read/);
    const directory = await runInProcess(["inspect", files.dir, "--port", "0"]);
    expect(directory.code).toBe(2);
    expect(directory.stderr).toMatch(/not a regular file/);
  });
});
