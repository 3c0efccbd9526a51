import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { sendRaw } from "../helpers/hostile-requests.js";
import { IDENTIFY, PAGE, TRACK } from "../helpers/messages.js";
import { jsonEvents, runInProcess, startInProcess, type InProcessRun } from "../helpers/run-cli.js";
import { tempDir } from "../helpers/setup.js";

/*
 * send --destination actions → an in-process listen with the same secret: every request is
 * accepted and verified, by the rule the real destination uses (docs/actions.md#signature).
 */

const SECRET = "s3cr3t";
const { dir, ndjson } = tempDir("webhook-cli-send-actions-");
const EVENTS = ndjson([TRACK, IDENTIFY, PAGE, { ...TRACK, userId: "u_4", properties: { plan: "team", seats: 3 } }].map((m) => JSON.stringify(m)));

interface Listen {
  run: InProcessRun;
  url: string;
  record: string;
}
const listens: InProcessRun[] = [];
afterEach(() => {
  for (const run of listens.splice(0)) run.stop("SIGTERM");
});

/** Posts `body` to the listen as is, with `signature`. */
function post(l: Listen, method: string, body: string, signature: string): Promise<string> {
  const port = Number(new URL(l.url).port);
  const bytes = Buffer.from(body, "utf8");
  const head = `${method} /hook HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\nContent-Type: application/json\r\nX-Signature: ${signature}\r\nContent-Length: ${bytes.length}\r\n\r\n`;
  return sendRaw(port, Buffer.concat([Buffer.from(head, "latin1"), bytes]));
}

async function listen(name: string): Promise<Listen> {
  const record = join(dir, `${name}.ndjson`);
  const run = startInProcess(["listen", "--port", "0", "--json", "--secret", SECRET, "--record", record]);
  listens.push(run);
  const [, url] = await run.waitFor(/"event":"listening","url":"([^"]+)"/);
  return { run, url: url as string, record };
}

/** listen's request events and recording lines, once it stopped. */
async function received(l: Listen): Promise<{ events: Record<string, unknown>[]; lines: Record<string, unknown>[] }> {
  l.run.stop("SIGTERM");
  await l.run.code;
  const events = jsonEvents(l.run.stdout(), "request");
  const lines = readFileSync(l.record, "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { events, lines };
}

function send(args: string[]) {
  return runInProcess(["send", EVENTS, "--destination", "actions", "--secret", SECRET, "--retry-window", "0", ...args], { cwd: dir });
}

describe("send --destination actions → listen: every request verifies, by the rule named", () => {
  for (const method of ["POST", "PUT", "PATCH"] as const) {
    it(`single events, ${method}: the whole message, signed over the body, User-Agent Segment (Actions)`, async () => {
      const l = await listen(`single-${method}`);
      const result = await send(["--url", `${l.url}/hook`, ...(method === "POST" ? [] : ["--method", method.toLowerCase()])]);
      expect(result.stderr).not.toMatch(/error|warning/i);
      expect(result.code).toBe(0);
      const { events, lines } = await received(l);
      expect(events).toHaveLength(4);
      for (const event of events) expect(event).toMatchObject({ method, signatureValid: true, signatureRule: "body", bodyKind: "message", status: 200 });
      expect(lines.map((line) => line["method"])).toEqual([method, method, method, method]);
      expect(lines[0]?.["headers"]).toMatchObject({ "user-agent": "Segment (Actions)", "content-type": "application/json" });
      expect(lines[0]?.["body"]).toEqual(TRACK);
    });
  }

  it("mapped: --data builds each body; a path that finds nothing sends no body, unsigned by design", async () => {
    const l = await listen("mapped");
    const result = await send([
      "--url",
      `${l.url}/hook`,
      "--data",
      '{"plan": {"@path": "$.properties.plan"}, "seats": {"@path": "$.properties.seats"}, "v": 2}',
    ]);
    expect(result.code).toBe(0);
    const { events, lines } = await received(l);
    expect(events.map((e) => [e["bodyKind"], e["signatureValid"], e["signatureRule"]])).toEqual([
      ["payload", true, "body"],
      ["payload", true, "body"],
      ["payload", true, "body"],
      ["payload", true, "body"],
    ]);
    expect(lines.map((line) => line["body"])).toEqual([{ plan: "pro", v: 2 }, { v: 2 }, { v: 2 }, { plan: "team", seats: 3, v: 2 }]);

    const empty = await listen("no-data");
    const none = await send(["--url", `${empty.url}/hook`, "--data", "$.traits", "--method", "PUT"]);
    expect(none.code).toBe(0);
    const got = await received(empty);
    // Only the identify has traits; the other three are sent without a body, and the real destination signs none of those.
    expect(got.events.map((e) => [e["method"], e["bodyKind"], e["signatureValid"]])).toEqual([
      ["PUT", "none", null],
      ["PUT", "payload", true],
      ["PUT", "none", null],
      ["PUT", "none", null],
    ]);
  });

  it("an event whose data is not an object is not sent, and the run fails (exit 1)", async () => {
    const l = await listen("refused");
    const result = await send(["--url", `${l.url}/hook`, "--data", "$.event", "--json"]);
    expect(result.code).toBe(1);
    const deliveries = result.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { event: string; delivered: boolean; urls: { attempts: number; error: string | null }[] })
      .filter((e) => e.event === "delivery");
    // The tracks' event is a string: refused. The identify and the page have none: sent without data.
    expect(deliveries.map((d) => d.delivered)).toEqual([false, true, true, false]);
    expect(deliveries[0]?.urls[0]).toMatchObject({
      attempts: 0,
      status: null,
      error: expect.stringMatching(/^not sent: Data must be an object but it was a string/),
    });
    const { events } = await received(l);
    expect(events.map((e) => e["bodyKind"])).toEqual(["none", "none"]);
  });

  it("several URLs each get every event; one failing fails the run but not the others", async () => {
    const l = await listen("two");
    const result = await send(["--url", `${l.url}/a`, "--url", "http://127.0.0.1:1/closed", "--json"]);
    expect(result.code).toBe(1);
    const { events } = await received(l);
    expect(events).toHaveLength(4);
    expect(result.stdout).toContain('"delivered":false');
  });

  it("--dry-run prints the request each URL would get: its method, User-Agent, signature and mapped body", async () => {
    const result = await send(["--url", "http://127.0.0.1:1/hook", "--method", "PATCH", "--data", "$.properties", "--dry-run"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("PATCH http://127.0.0.1:1/hook");
    expect(result.stdout).toContain("User-Agent: Segment (Actions)");
    expect(result.stdout).toContain('{"plan":"pro"}');
  });

  it("batched: arrays of up to --batch-size events verify by the first-element rule, and so does the same batch with its second element changed", async () => {
    const l = await listen("batched");
    const result = await send(["--url", `${l.url}/hook`, "--batch-size", "3", "--method", "PUT", "--json"]);
    expect(result.code).toBe(0);
    // Still one delivery event per message.
    expect(result.stdout.split("\n").filter((line) => line.includes('"event":"delivery"'))).toHaveLength(4);
    const recorded = readFileSync(l.record, "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { body: unknown[]; headers: Record<string, string> });
    const [batch] = recorded;
    const tampered = JSON.stringify([batch!.body[0], { ...(batch!.body[1] as object), userId: "mallory" }, batch!.body[2]]);
    expect(await post(l, "PUT", tampered, batch!.headers["x-signature"] as string)).toMatch(/^HTTP\/1.1 200/);
    const { events } = await received(l);
    expect(events.map((e) => [e["method"], e["bodyKind"], e["signatureValid"], e["signatureRule"]])).toEqual([
      ["PUT", "batch", true, "first-element"],
      ["PUT", "batch", true, "first-element"],
      ["PUT", "batch", true, "first-element"],
    ]);
    expect(recorded.map((line) => line.body.length)).toEqual([3, 1]);
  });

  it("replay resends recorded PUT, PATCH, batch and no-data requests byte for byte, with their method, signed by their rule (under either destination)", async () => {
    const first = await listen("recorded");
    expect((await send(["--url", `${first.url}/hook`, "--batch-size", "2", "--method", "PATCH"])).code).toBe(0);
    expect((await send(["--url", `${first.url}/hook`, "--method", "PUT", "--data", "$.traits"])).code).toBe(0);
    const original = (await received(first)).lines;
    for (const destination of ["classic", "actions"]) {
      const again = await listen(`replayed-${destination}`);
      const replayed = await runInProcess(
        ["replay", first.record, "--url", `${again.url}/hook`, "--secret", SECRET, "--destination", destination, "--retry-window", "0", "--concurrency", "1"],
        {
          cwd: dir,
        },
      );
      expect(replayed.code, replayed.stderr).toBe(0);
      const { events, lines } = await received(again);
      expect(lines.map((line) => line["method"])).toEqual(original.map((line) => line["method"]));
      expect(lines.map((line) => [line["body"], line["rawBody"]])).toEqual(original.map((line) => [line["body"], line["rawBody"]]));
      expect(events.map((e) => [e["bodyKind"], e["signatureValid"], e["signatureRule"]])).toEqual(
        original.map((line) =>
          Array.isArray(line["body"]) ? ["batch", true, "first-element"] : line["body"] === null ? ["none", null, null] : ["payload", true, "body"],
        ),
      );
    }
  });
});
