import { existsSync } from "node:fs";
import { join } from "node:path";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Inspection } from "../../src/inspector/inspection.js";
import type { ReceivedRequest } from "../../src/receiver/received-request.js";
import { startReceiver, type Receiver } from "../../src/receiver/server.js";
import { hostileRequests, sendRaw, wireBytes } from "../helpers/hostile-requests.js";
import { startServer } from "../helpers/http-server.js";
import { tempDir } from "../helpers/setup.js";
import { MISSING_TOOLS_MESSAGE, runInShell, SHELLS, shellAvailability } from "../helpers/shells.js";

// The command the inspector's "Copy as curl" gives, run by real shells and curl against the
// listen that recorded the request: what arrives again must be what was recorded.
const { missing, skip } = shellAvailability();

describe.runIf(!skip && missing.length > 0)("curl command tests in CI", () => {
  it("find bash, zsh, fish, curl and base64", () => {
    expect.fail(`${MISSING_TOOLS_MESSAGE}; missing: ${missing.join(", ")}`);
  });
});

// Headers a copied command leaves out on purpose: those about the sender's connection (and the one
// its Connection header names) and credentials, which the page never shows.
const LEFT_OUT = ["connection", "keep-alive", "x-hop", "authorization", "cookie"];

describe.skipIf(skip || missing.length > 0)("Copy as curl, pasted into bash, zsh and fish", () => {
  const files = tempDir("webhook-cli-copy-curl-");
  const marker = join(files.dir, "pwned");
  const received: ReceivedRequest[] = [];
  let receiver: Receiver;
  let inspection: Inspection;
  let page: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    inspection = new Inspection({ secret: undefined });
    receiver = await startReceiver({
      onRequest: (one) => {
        received.push(one);
        inspection.add(one);
      },
    });
    inspection.setReceiverUrl(receiver.url);
    page = await inspection.serve(0);
    // A ~/.curlrc that adds a header, and a proxy that does not exist: the command uses neither.
    files.file(".curlrc", 'header = "X-From-Curlrc: yes"\n');
    env = {
      PATH: process.env["PATH"],
      HOME: files.dir,
      CURL_HOME: files.dir,
      XDG_CONFIG_HOME: files.dir,
      http_proxy: "http://127.0.0.1:9",
      ALL_PROXY: "http://127.0.0.1:9",
      LANG: "C.UTF-8",
    };
  });

  afterAll(async () => {
    await inspection?.close();
    await receiver?.close();
  });

  const detail = async (id: number): Promise<Record<string, unknown>> => {
    const response = await request(`${page}/api/requests/${id}`);
    return (await response.body.json()) as Record<string, unknown>;
  };

  /** Sends a request as raw bytes; returns what listen recorded of it and the inspector's row id. */
  const record = async (bytes: Buffer, head = false): Promise<{ recorded: ReceivedRequest; id: number; status: string }> => {
    const before = received.length;
    const status = (await sendRaw(receiver.port, bytes, { head })).split("\r\n")[0];
    expect(received).toHaveLength(before + 1);
    return { recorded: received[before] as ReceivedRequest, id: inspection.store.list().at(-1)?.id ?? 0, status: status ?? "" };
  };

  for (const hostile of hostileRequests(marker)) {
    it(`${hostile.name}: sends the recorded method, path, headers and bytes once, and runs nothing else`, async () => {
      const { recorded, id } = await record(wireBytes(hostile, new URL(receiver.url).host), hostile.method === "HEAD");
      const shown = await detail(id);
      const command = shown["curl"];
      if (typeof command !== "string") throw new Error(`no command: ${String(shown["curlProblem"])}`);
      const expected = Object.fromEntries(Object.entries(recorded.headers).filter(([name]) => !LEFT_OUT.includes(name)));
      for (const shell of Object.keys(SHELLS)) {
        const before = received.length;
        await runInShell(shell, command, env);
        // Exactly one request: no URL globbing (`[1-5]`, `{a,b}`), no second URL.
        expect(received.length, shell).toBe(before + 1);
        const copy = received[before] as ReceivedRequest;
        expect(copy.raw.toString("base64"), shell).toBe(recorded.raw.toString("base64"));
        expect({ method: copy.method, path: copy.path }, shell).toEqual({ method: recorded.method, path: recorded.path });
        expect(copy.headers, shell).toEqual(expected);
        expect(existsSync(marker), `${shell} ran a command from the request`).toBe(false);
      }
    });
  }

  it("with --forward-to, sends the same bytes and headers to the app's URL, whatever the path", async () => {
    const app = await startServer();
    const forwarding = new Inspection({ secret: undefined, routes: { fallback: `${app.url}/webhook?from=listen`, byType: {} } });
    try {
      forwarding.setReceiverUrl(receiver.url);
      const forwardPage = await forwarding.serve(0);
      const hostile = hostileRequests(marker).find((one) => one.path === "/hook[1-5]") ?? expect.fail("no /hook[1-5] case");
      const { recorded } = await record(wireBytes({ ...hostile, body: Buffer.from("@/etc/passwd") }, new URL(receiver.url).host));
      forwarding.add(recorded);
      const shown = (await (await request(`${forwardPage}/api/requests/1`)).body.json()) as Record<string, unknown>;
      for (const shell of Object.keys(SHELLS)) await runInShell(shell, shown["curl"] as string, env);
      expect(app.requests.map((one) => [one.method, one.url, one.body.toString("latin1")])).toEqual(
        Array(3).fill(["POST", "/webhook?from=listen", "@/etc/passwd"]),
      );
      expect(app.requests[0]?.headers["x-signature"]).toBe(recorded.headers["x-signature"]);
    } finally {
      await forwarding.close();
      await app.close();
    }
  });

  it("a request-target that is not a path is answered 400, shown as invalid, and not offered as a command", async () => {
    const other = await startServer();
    try {
      for (const target of [`*@127.0.0.1:${other.port}/x`, `http://127.0.0.1:${other.port}/x`, "*"]) {
        const body = '{"type":"track","userId":"u1","event":"e"}';
        const bytes = Buffer.from(`POST ${target} HTTP/1.1\r\nHost: ${new URL(receiver.url).host}\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
        const { recorded, id, status } = await record(bytes);
        expect(status, target).toBe("HTTP/1.1 400 Bad Request");
        expect(recorded, target).toMatchObject({ method: "POST", path: target, status: 400, verdict: { valid: false } });
        const shown = await detail(id);
        expect(shown["curl"], target).toBeNull();
        expect(shown["curlProblem"], target).toContain("not a path starting with /");
      }
      expect(other.requests).toHaveLength(0);
    } finally {
      await other.close();
    }
  });
});
