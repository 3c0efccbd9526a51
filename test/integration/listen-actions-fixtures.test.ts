import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sendRaw } from "../helpers/hostile-requests.js";
import { startServer, type TestServer } from "../helpers/http-server.js";
import { jsonEvents, startInProcess, type InProcessRun } from "../helpers/run-cli.js";
import { tempDir } from "../helpers/setup.js";

/*
 * Requests made by the real Webhooks (Actions) destination's own code (@segment/action-destinations
 * 3.497.0, captured byte for byte: fixtures/actions/README.md), sent to a real `listen` with their
 * method, path, headers in wire order and exact body bytes.
 */

interface Captured {
  method: string;
  path: string;
  headers: [string, string][];
  body: { base64: string; length: number };
  /** Which bytes X-Signature covers, as the capture script checked; absent without a secret. */
  signature?: { covers: "whole body" | "first element" | "no header" | "neither" };
}
interface Fixture {
  scenario: string;
  settings?: { sharedSecret?: string };
  requests?: Captured[];
}

const DIR = fileURLToPath(new URL("../../fixtures/actions/captured/", import.meta.url));
const SECRET = "s3cr3t";

/** Every request the destination sent to a webhook URL (a redirect's GET goes elsewhere, and listen answers GET 405). */
const SENT = readdirSync(DIR)
  .filter((file) => file.endsWith(".json"))
  .flatMap((file) => {
    const fixture = JSON.parse(readFileSync(join(DIR, file), "utf8")) as Fixture;
    return (fixture.requests ?? [])
      .filter((request) => request.method !== "GET")
      .map((request, i) => ({
        name: `${fixture.scenario}#${i}`,
        signed: fixture.settings?.sharedSecret === SECRET,
        request,
        bytes: Buffer.from(request.body.base64, "base64"),
      }));
  });

/** The request as the destination wrote it, to `port`: Host and Connection are the connection's own. */
function wire(request: Captured, port: number, body: Buffer): Buffer {
  const headers = request.headers.filter(([name]) => !["host", "connection"].includes(name.toLowerCase()));
  const head = [`${request.method} ${request.path} HTTP/1.1`, `Host: 127.0.0.1:${port}`, "Connection: close", ...headers.map(([n, v]) => `${n}: ${v}`)];
  return Buffer.concat([Buffer.from(`${head.join("\r\n")}\r\n\r\n`, "latin1"), body]);
}

const RULES = { "whole body": "body", "first element": "first-element" } as const;

/** What listen must say of a request, from what the capture script found. */
function expected(sent: (typeof SENT)[number]): Record<string, unknown> {
  const covers = sent.request.signature?.covers;
  const text = sent.bytes.toString("utf8");
  const parsed: unknown = text === "" ? undefined : JSON.parse(text);
  const bodyKind =
    parsed === undefined ? "none" : Array.isArray(parsed) ? "batch" : typeof (parsed as { type?: unknown }).type === "string" ? "message" : "payload";
  if (covers === "neither") return { signatureValid: false, signatureRule: null, bodyKind, status: 401 };
  return {
    signatureValid: covers === "whole body" || covers === "first element" ? true : null,
    signatureRule: covers === "whole body" || covers === "first element" ? RULES[covers] : null,
    bodyKind,
    status: 200,
  };
}

interface Listening {
  run: InProcessRun;
  port: number;
  record: string;
  answers: Map<string, string>;
  events: Record<string, unknown>[];
  lines: Record<string, unknown>[];
}

describe("listen receives what the real Webhooks (Actions) destination sends", () => {
  const files = tempDir("webhook-cli-actions-fixtures-");
  // A listen with the fixtures' secret for the signed captures, one without for the captures made without a secret.
  const listens: Record<"signed" | "unsigned", Listening> = {} as Record<"signed" | "unsigned", Listening>;

  beforeAll(async () => {
    for (const kind of ["signed", "unsigned"] as const) {
      const record = join(files.dir, `${kind}.ndjson`);
      const run = startInProcess(["listen", "--port", "0", "--json", "--record", record, ...(kind === "signed" ? ["--secret", SECRET] : [])]);
      const [, port] = await run.waitFor(/"event":"listening".*"port":(\d+)/);
      listens[kind] = { run, port: Number(port), record, answers: new Map(), events: [], lines: [] };
    }
    // One at a time, so events and recording lines come in the order sent.
    for (const sent of SENT) {
      const listen = listens[sent.signed ? "signed" : "unsigned"];
      listen.answers.set(sent.name, await sendRaw(listen.port, wire(sent.request, listen.port, sent.bytes)));
    }
    for (const listen of Object.values(listens)) {
      listen.run.stop("SIGTERM");
      await listen.run.code;
      listen.events = jsonEvents(listen.run.stdout(), "request");
      listen.lines = readFileSync(listen.record, "utf8")
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as Record<string, unknown>);
    }
  }, 60_000);

  afterAll(() => {
    for (const listen of Object.values(listens)) listen.run.stop("SIGTERM");
  });

  it("covers single, PUT, PATCH, mapped, empty-data, no-data, batched and unsigned requests", () => {
    const names = SENT.map((sent) => sent.name.replace(/#\d+$/, ""));
    for (const scenario of [
      "single-post-default",
      "single-put",
      "single-patch",
      "single-mapped-properties",
      "single-mapped-object",
      "single-data-empty-object",
      "single-data-path-missing",
      "single-data-path-missing-put",
      "single-data-path-missing-patch",
      "batch-default-signed",
      "batch-mapped-properties-signed",
      "batch-patch-headers",
      "batch-one-event",
      "batch-first-data-empty",
      "batch-first-data-missing",
      "batch-unsigned",
      "single-post-unsigned",
    ]) {
      expect(names).toContain(scenario);
    }
    expect(SENT.length).toBeGreaterThanOrEqual(40);
  });

  it.each(SENT.map((sent) => [sent.name, sent] as const))("%s: accepted and verified by the rule the fixture names", (_name, sent) => {
    const listen = listens[sent.signed ? "signed" : "unsigned"];
    const index = SENT.filter((one) => one.signed === sent.signed).indexOf(sent);
    const want = expected(sent);
    const event = listen.events[index];
    expect(listen.answers.get(sent.name)).toMatch(new RegExp(`^HTTP/1\\.1 ${String(want["status"])} `));
    expect(event).toMatchObject({ method: sent.request.method, path: sent.request.path, ...want });
    // Every request the destination means as valid is valid: shape included (payloads, batches, no data).
    expect(event?.["shapeErrors"]).toEqual([]);
    if (sent.request.signature?.covers === "no header") expect(event?.["signatureNote"]).toMatch(/^no X-Signature: Webhooks \(Actions\) sends none/);

    // The recording keeps the method and the exact bytes (replay sends them back), and a batch's rule.
    const line = listen.lines[index] as { method: string; body: unknown; rawBody?: string; signatureRule?: string };
    expect(line.method).toBe(sent.request.method);
    const recorded = line.rawBody !== undefined ? Buffer.from(line.rawBody, "base64") : Buffer.from(JSON.stringify(line.body));
    expect(recorded.equals(sent.bytes)).toBe(true);
    expect(line.signatureRule).toBe(want["bodyKind"] === "batch" && want["signatureRule"] !== null ? want["signatureRule"] : undefined);
  });

  it("the summary counts only the forged signature as invalid", () => {
    const summary = JSON.parse(listens.signed.run.stdout().trim().split("\n").at(-1) ?? "{}") as Record<string, unknown>;
    const signed = SENT.filter((sent) => sent.signed);
    expect(summary).toMatchObject({ event: "summary", received: signed.length, invalid: 1 });
    expect(signed.filter((sent) => sent.request.signature?.covers === "neither").map((sent) => sent.name)).toEqual(["single-header-overrides#0"]);
  });
});

describe("listen --forward-to relays the method", () => {
  let app: TestServer;
  let run: InProcessRun;
  let port: number;

  beforeAll(async () => {
    app = await startServer((_req, res) => {
      res.writeHead(204).end();
    });
    run = startInProcess(["listen", "--port", "0", "--json", "--secret", SECRET, "--forward-to", `${app.url}/webhook`]);
    port = Number((await run.waitFor(/"event":"listening".*"port":(\d+)/))[1]);
  });

  afterAll(async () => {
    run.stop("SIGTERM");
    await run.code;
    await app.close();
  });

  it.each([
    "single-put#0",
    "single-patch#0",
    "batch-patch-headers#0",
    "single-data-path-missing-patch#0",
    "single-data-path-missing-put#0",
    "batch-default-signed#0",
  ])("%s: the app gets the same method, bytes and X-Signature; the sender gets the app's answer", async (name) => {
    const sent = SENT.find((one) => one.name === name);
    if (!sent) throw new Error(`no fixture ${name}`);
    const before = app.requests.length;
    expect(await sendRaw(port, wire(sent.request, port, sent.bytes))).toMatch(/^HTTP\/1\.1 204 /);
    const relayed = app.requests[before];
    expect(relayed?.method).toBe(sent.request.method);
    expect(relayed?.url).toBe("/webhook");
    expect(relayed?.body.equals(sent.bytes)).toBe(true);
    const signature = sent.request.headers.find(([header]) => header === "x-signature")?.[1];
    expect(relayed?.headers["x-signature"]).toBe(signature);
    expect(relayed?.headers["content-length"] ?? "0").toBe(String(sent.bytes.length));
  });
});
