import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { watchKeys, type KeyInput } from "../../src/cli/commands/listen/keys.js";
import { isLoopbackHost } from "../../src/http/loopback.js";
import { RequestStore, type DropNotice, type NewInspected } from "../../src/receiver/history/store.js";
import { curlCommand, shellWord } from "../../src/inspector/curl.js";
import { detail, recordLine } from "../../src/inspector/view.js";
import { recordedResponse, relayedHeaders, type ForwardResult } from "../../src/receiver/forward.js";
import { judgeRequest } from "../../src/receiver/verdict.js";

function row(raw: Buffer, extra: Partial<NewInspected> = {}): NewInspected {
  const headers = { "content-type": "application/json", "x-signature": "abc", cookie: "id=1", connection: "keep-alive" };
  return {
    label: "1",
    receivedAt: new Date("2024-01-01T00:00:00.000Z"),
    method: "POST",
    path: "/hooks",
    headers,
    raw,
    verdict: judgeRequest(raw, headers, {}),
    status: 200,
    fault: null,
    injected: false,
    response: null,
    ...extra,
  };
}

describe("RequestStore", () => {
  it("keeps the newest N rows, finds them by id, and tells subscribers of each", () => {
    const store = new RequestStore({ keep: 3 });
    const seen: number[] = [];
    store.subscribe((added) => seen.push(added.id));
    for (let i = 0; i < 100; i++) store.add(row(Buffer.from("{}"), { label: String(i + 1) }));
    expect(store.list().map((r) => r.id)).toEqual([98, 99, 100]);
    expect(store.get(97)).toBeUndefined();
    expect(store.get(99)?.label).toBe("99");
    expect(store.get(101)).toBeUndefined();
    expect(seen).toHaveLength(100);
  });

  it("bounds the rows in bytes: the oldest go first, the newest stays, and the notice names the bound", () => {
    const store = new RequestStore({ maxBytes: 5 * 1024 * 1024 });
    const notices: (DropNotice | null)[] = [];
    store.subscribe((_row, dropped) => notices.push(dropped));
    const mib = Buffer.alloc(1024 * 1024, 0x20);
    for (let i = 0; i < 20; i++) store.add(row(mib, { label: String(i + 1) }));
    const kept = store.list();
    expect(kept.map((r) => r.label)).toEqual(["17", "18", "19", "20"]);
    expect(kept.reduce((sum, r) => sum + r.bytes, 0)).toBeLessThanOrEqual(5 * 1024 * 1024);
    expect(notices.slice(0, 4)).toEqual([null, null, null, null]);
    expect(notices[4]).toEqual({ oldestId: 2, dropped: 1, message: "oldest rows dropped: history over 5 MB (--ui-history-mb)" });
    expect(store.dropNotice()).toMatchObject({ oldestId: 17, dropped: 16 });
    expect(store.whyGone(3)).toBe("request 3 is no longer kept: oldest rows dropped: history over 5 MB (--ui-history-mb)");
    expect(store.whyGone(99)).toBe("no request 99");
    // One row larger than the bound is still kept: the newest is always shown.
    const tiny = new RequestStore({ maxBytes: 1024 });
    tiny.add(row(mib));
    tiny.add(row(mib));
    expect(tiny.list().map((r) => r.id)).toEqual([2]);
  });

  it("keeps exactly `keep` rows (no older ones waiting to be dropped), and with keep 0 only the latest received", () => {
    const store = new RequestStore({ keep: 1 });
    for (let i = 0; i < 100; i++) store.add(row(Buffer.from("{}"), { label: String(i + 1) }));
    expect(store.list().map((r) => r.label)).toEqual(["100"]);
    expect((store as unknown as { rows: unknown[] }).rows.filter((r) => r !== undefined)).toHaveLength(1);
    expect(store.dropNotice()?.message).toBe("oldest rows dropped: history over 1 request (--ui-keep)");

    const latestOnly = new RequestStore({ keep: 0 });
    latestOnly.add(row(Buffer.from("{}"), { label: "1" }));
    latestOnly.add(row(Buffer.from("{}"), { label: "R1", resend: { of: 1, ofLabel: "1", url: "http://x" } }));
    expect(latestOnly.list()).toEqual([]);
    expect(latestOnly.latestReceived()?.label).toBe("1");
    expect(latestOnly.dropNotice()).toBeNull();
  });

  it("a row keeps the raw bytes but no decoded text or parsed body, and an app's answer whole only under 64 KB", () => {
    const store = new RequestStore();
    const stored = store.add(row(Buffer.from('{"type":"track"}')));
    expect(Object.keys(stored.verdict)).not.toContain("body");
    expect(Object.keys(stored.verdict)).not.toContain("text");
    const answer = (body: Buffer) => store.add(row(Buffer.from("{}"), { response: { status: 200, ms: 1, headers: {}, body, error: null } })).response;
    expect(answer(Buffer.from("ok"))).toMatchObject({ body: Buffer.from("ok"), bodySize: 2, bodySha256: null });
    const big = Buffer.alloc(7 * 1024 * 1024, 0x61);
    expect(answer(big)).toEqual({
      status: 200,
      ms: 1,
      headers: {},
      error: null,
      body: null,
      bodySize: big.length,
      bodySha256: createHash("sha256").update(big).digest("hex"),
    });
  });

  it("a row cuts long user ids and keeps at most 50 issues of each kind, counting the rest", () => {
    const message: Record<string, unknown> = { type: "track", userId: "u".repeat(100_000), event: "E" };
    for (let i = 0; i < 5_000; i++) message[`unknown${i}`] = i;
    const stored = new RequestStore().add(row(Buffer.from(JSON.stringify(message))));
    expect(stored.verdict.userId).toBe(`${"u".repeat(256)}…`);
    expect(stored.verdict.shapeWarnings).toHaveLength(50);
    expect(stored.verdict.moreShapeWarnings).toBe(4_950);
    expect(stored.bytes).toBeLessThan(stored.raw.length + 32 * 1024);
  });

  it("latestReceived skips resent rows", () => {
    const store = new RequestStore();
    store.add(row(Buffer.from("{}"), { label: "1" }));
    store.add(row(Buffer.from("{}"), { label: "R1", resend: { of: 1, ofLabel: "1", url: "http://x" } }));
    expect(store.latestReceived()?.label).toBe("1");
  });
});

describe("one row in detail", () => {
  const context = { secret: undefined, curl: { receiverUrl: "http://127.0.0.1:1", forwardUrl: null } };

  it("pretty-prints the body read again from the bytes, or gives it raw with a note when the pretty form would be too large", () => {
    const store = new RequestStore();
    const small = detail(store.add(row(Buffer.from('{"type":"track","a":[1]}'))), context);
    expect(small).toMatchObject({ bodyPretty: '{\n  "type": "track",\n  "a": [\n    1\n  ]\n}', bodyNote: null, bodyRaw: '{"type":"track","a":[1]}' });
    const nested = `${'{"a":'.repeat(499)}[${Array(260_000).fill("0").join(",")}]${"}".repeat(499)}`;
    const deep = detail(store.add(row(Buffer.from(nested))), context);
    expect(deep["bodyPretty"]).toBeNull();
    expect(deep["bodyNote"]).toMatch(/^not pretty-printed: its pretty form would be over 4 MB/);
    expect(deep["bodyRaw"]).toBe(nested);
    expect(JSON.stringify(deep).length).toBeLessThan(3 * nested.length);
  });

  it("shows a kept answer pretty, and a large one as its size and digest", () => {
    const store = new RequestStore();
    const answered = (body: Buffer) =>
      detail(store.add(row(Buffer.from("{}"), { response: { status: 200, ms: 1, headers: {}, body, error: null } })), context)["response"];
    expect(answered(Buffer.from('{"ok":true}'))).toMatchObject({ body: '{"ok":true}', bodyPretty: '{\n  "ok": true\n}', bodySize: 11 });
    const big = Buffer.alloc(100 * 1024, 0x61);
    expect(answered(big)).toMatchObject({ body: null, bodyPretty: null, bodySize: big.length, bodySha256: createHash("sha256").update(big).digest("hex") });
  });

  it("lists the kept shape warnings and one line counting the rest", () => {
    const message: Record<string, unknown> = { type: "track", userId: "u", event: "E" };
    for (let i = 0; i < 60; i++) message[`unknown${i}`] = i;
    const shown = detail(new RequestStore().add(row(Buffer.from(JSON.stringify(message)))), context)["shapeWarnings"] as { message: string }[];
    expect(shown).toHaveLength(51);
    expect(shown[50]?.message).toBe("… and 10 more warnings (the first 50 are kept)");
  });
});

describe("Copy as curl and Download", () => {
  it("curl pipes the bytes through base64 with the end-to-end headers, without credentials, hop-by-hop ones or curl's own", () => {
    const text = `{"name":"O'Brien"}`;
    const stored = new RequestStore().add(row(Buffer.from(text)));
    const curl = curlCommand(stored, { receiverUrl: "http://localhost:3000", forwardUrl: null }, undefined);
    expect(curl).toEqual({
      problem: null,
      command:
        `printf '%s' '${Buffer.from(text).toString("base64")}' | base64 --decode | curl -q -sS -g --path-as-is --noproxy '*' -X POST 'http://localhost:3000/hooks' \\\n` +
        `  -H 'content-type: application/json' \\\n  -H 'x-signature: abc' \\\n  -H 'Accept:' -H 'User-Agent:' -H 'Expect:' \\\n  --data-binary @-`,
    });
  });

  it("quotes a word for bash, zsh and fish alike: ' and \\ outside single quotes", () => {
    expect(shellWord("POST")).toBe("POST");
    expect(shellWord("")).toBe("''");
    expect(shellWord("a b")).toBe("'a b'");
    expect(shellWord("O'Brien")).toBe(`'O'"'"'Brien'`);
    expect(shellWord("\\'x\\")).toBe(`"\\\\'"'x'"\\\\"`);
    // The shell gives back exactly the text.
    for (const text of ["O'Brien", "a\\b", "'\\''", "$(x) `y` !! ~ * {a,b} [1-2]"]) {
      expect(execFileSync("sh", ["-c", `printf %s ${shellWord(text)}`]).toString()).toBe(text);
    }
  });

  it("a downloaded line is a recording line with rawBody when the bytes are not JSON.stringify's", () => {
    const raw = Buffer.from('{ "type": "track" }');
    const line = JSON.parse(recordLine(new RequestStore().add(row(raw)), undefined)) as Record<string, unknown>;
    expect(line).toMatchObject({ method: "POST", path: "/hooks", body: { type: "track" }, rawBody: raw.toString("base64") });
    expect((line["headers"] as Record<string, string>)["cookie"]).toBe("[redacted]");
  });
});

describe("forwarding pieces", () => {
  it("drops hop-by-hop headers and the ones Connection names, keeps the rest in order", () => {
    const raw = ["Host", "a", "X-Signature", "s", "Connection", "keep-alive, X-Trace", "X-Trace", "t", "Keep-Alive", "5", "X-Env", "ci", "Content-Length", "2"];
    expect(relayedHeaders(raw)).toEqual(["X-Signature", "s", "X-Env", "ci"]);
  });

  it("records the app's body below 64 KB, a hash and the size above, and why when there was no answer", () => {
    const answer = (body: Buffer): ForwardResult => ({
      status: 200,
      fromApp: true,
      ms: 4,
      headers: { "set-cookie": ["a=1"], "x-app": "1" },
      body,
      error: null,
    });
    expect(recordedResponse(answer(Buffer.from("ok")))).toEqual({ status: 200, ms: 4, headers: { "set-cookie": "[redacted]", "x-app": "1" }, body: "ok" });
    expect(recordedResponse(answer(Buffer.from([0xff])))).toMatchObject({ bodyBase64: "/w==" });
    const big = Buffer.alloc(64 * 1024, 0x61);
    expect(recordedResponse(answer(big))).toMatchObject({ bodySize: 65_536, bodySha256: createHash("sha256").update(big).digest("hex") });
    expect(recordedResponse({ status: 502, fromApp: false, ms: 1, headers: {}, body: Buffer.alloc(0), error: "refused" })).toEqual({
      status: null,
      ms: 1,
      error: "refused",
    });
  });
});

describe("inspector guards and keys", () => {
  it("treats only loopback names as loopback", () => {
    for (const host of ["localhost:4040", "127.0.0.1:4040", "127.1.2.3", "[::1]:4040", "x.localhost"]) expect(isLoopbackHost(host), host).toBe(true);
    for (const host of ["evil.example", "localhost.evil.example", "10.0.0.1:4040", "127.0.0.1.nip.io", ""]) expect(isLoopbackHost(host), host).toBe(false);
  });

  it("r calls its handler on a terminal; Ctrl-C interrupts; the terminal is restored", () => {
    const input = Object.assign(new PassThrough(), {
      isTTY: true,
      modes: [] as boolean[],
      setRawMode(mode: boolean) {
        this.modes.push(mode);
      },
    });
    let resent = 0;
    let interrupted = 0;
    const stop = watchKeys(input as unknown as KeyInput, { r: () => (resent += 1) }, () => (interrupted += 1));
    input.write("r");
    input.write("xR");
    input.write("\u0003");
    expect([resent, interrupted]).toEqual([2, 1]);
    stop();
    input.write("r");
    expect(resent).toBe(2);
    expect(input.modes).toEqual([true, false]);
  });

  it("does nothing when stdin is not a terminal", () => {
    const input = new PassThrough();
    let calls = 0;
    watchKeys(input as unknown as KeyInput, { r: () => (calls += 1) })();
    input.write("r");
    expect(calls).toBe(0);
  });
});
