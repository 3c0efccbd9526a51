import { describe, expect, it } from "vitest";
import { curlCommand, type CurlTarget } from "../../src/inspector/curl.js";
import { RequestStore, type Inspected } from "../../src/receiver/history/store.js";
import { judgeRequest } from "../../src/receiver/verdict.js";
import { hostileRequests, type HostileRequest } from "../helpers/hostile-requests.js";

const LISTEN: CurlTarget = { receiverUrl: "http://127.0.0.1:8080", forwardUrl: null };

/** The row the inspector keeps of a request: header names lower-cased, repeats joined as node:http does. */
function stored(request: Pick<HostileRequest, "method" | "path" | "headers" | "body">): Inspected {
  const headers: Record<string, string> = { host: "127.0.0.1:8080" };
  for (const [name, value] of request.headers) {
    const key = name.toLowerCase();
    headers[key] = headers[key] === undefined ? value : `${headers[key]}, ${value}`;
  }
  if (request.method === "POST") headers["content-length"] = String(request.body.length);
  return new RequestStore().add({
    label: "1",
    receivedAt: new Date(0),
    method: request.method,
    path: request.path,
    headers,
    raw: request.body,
    verdict: judgeRequest(request.body, headers, {}),
    status: 200,
    fault: null,
    injected: false,
    response: null,
  });
}

function command(request: Pick<HostileRequest, "method" | "path" | "headers" | "body">, target = LISTEN): string {
  const copy = curlCommand(stored(request), target, undefined);
  if (copy.command === null) throw new Error(`no command: ${copy.problem}`);
  return copy.command;
}

const post = (fields: Partial<HostileRequest>): HostileRequest => ({
  name: "",
  method: "POST",
  path: "/hooks",
  headers: [["Content-Type", "application/json"]],
  body: Buffer.from("{}"),
  ...fields,
});

describe("Copy as curl: a command safe to paste", () => {
  for (const request of hostileRequests("/tmp/webhook-cli-never-created")) {
    it(`${request.name}: printable ASCII and continued lines only, the body piped, no globbing`, () => {
      const text = command(request);
      // No TAB, ESC, Ctrl-C or other control character, nothing outside ASCII.
      expect(text).toMatch(/^[\x20-\x7e\n]*$/);
      // Every line break continues the one command: a paste never runs half of it.
      expect(
        text
          .split("\n")
          .slice(0, -1)
          .every((line) => line.endsWith(" \\")),
      ).toBe(true);
      expect(text).toContain("curl -q -sS -g --path-as-is --noproxy '*' ");
      // curl reads only standard input (the piped body) or nothing: never a file named by the sender.
      for (const match of text.matchAll(/--data-binary (\S+)/g)) expect(["@-", "''"]).toContain(match[1]);
      expect(text.match(/--data-binary/g)?.length ?? 0).toBeLessThanOrEqual(1);
      if (request.body.length > 0) expect(text.startsWith(`printf '%s' '${request.body.toString("base64")}' | base64 --decode | curl `)).toBe(true);
      // Every -H argument starts with a header name or a quote, never with @ (curl would read a file).
      for (const match of text.matchAll(/-H (\S)/g)) expect(match[1]).not.toBe("@");
    });
  }

  it("turns off curl's own Accept, User-Agent, Content-Type and Expect unless the recording had them", () => {
    expect(command(post({ headers: [] }))).toContain("-H 'Accept:' -H 'User-Agent:' -H 'Content-Type:' -H 'Expect:'");
    const own = command(
      post({
        headers: [
          ["User-Agent", "Segment.io/1.0"],
          ["Accept", "*/*"],
          ["Content-Type", "text/plain"],
          ["Expect", "100-continue"],
        ],
      }),
    );
    expect(own).toContain("-H 'user-agent: Segment.io/1.0'");
    expect(own).toContain("-H 'expect: 100-continue'");
    expect(own).not.toMatch(/-H '(Accept|User-Agent|Content-Type|Expect):'/);
  });

  it("sends an empty header as `Name;` (curl removes a header given as `Name:`)", () => {
    expect(command(post({ headers: [["X-Empty", ""]] }))).toContain("-H 'x-empty;'");
  });

  it("writes ' and \\ in headers and paths outside single quotes, and other bytes through base64", () => {
    const text = command(
      post({
        path: "/a'b\\c",
        headers: [
          ["X-Q", "O'Brien \\ x"],
          ["X-Latin1", "caf\xe9\tx"],
        ],
      }),
    );
    expect(text).toContain(`'http://127.0.0.1:8080/a'"'"'b'"\\\\"'c'`);
    expect(text).toContain(`-H 'x-q: O'"'"'Brien '"\\\\"' x'`);
    expect(text).toContain(`-H "$(printf '%s' '${Buffer.from("x-latin1: caf\xe9\tx", "latin1").toString("base64")}' | base64 --decode)"`);
  });

  it("sends an announced empty body as --data-binary '' and none when there was none", () => {
    expect(command(post({ body: Buffer.alloc(0) }))).toMatch(/--data-binary ''$/);
    const put = command({ method: "PUT", path: "/x", headers: [], body: Buffer.alloc(0) });
    expect(put).not.toContain("--data-binary");
    expect(put).toContain("-X PUT 'http://127.0.0.1:8080/x'");
    expect(command({ method: "HEAD", path: "/x", headers: [], body: Buffer.alloc(0) })).toContain("--head 'http://127.0.0.1:8080/x'");
  });

  it("with --forward-to, names the app's URL as it is", () => {
    const text = command(post({ path: "/hooks?x=1" }), { receiverUrl: "http://127.0.0.1:8080", forwardUrl: "http://localhost:3000/webhook" });
    expect(text).toContain(" -X POST 'http://localhost:3000/webhook' \\\n");
    expect(text).not.toContain("8080");
  });
});

describe("Copy as curl: requests that cannot be copied, and why", () => {
  const problem = (request: Inspected, target = LISTEN): string | null => curlCommand(request, target, undefined).problem;

  it("a request-target that is not a path: glued to listen's URL it would name another host", () => {
    for (const path of ["*@127.0.0.1:9/x", "http://evil.example/x", "*", "evil.example:80", "?a=b", ""]) {
      const row = stored(post({ path }));
      expect(curlCommand(row, LISTEN, undefined).command, path).toBeNull();
      expect(problem(row), path).toContain("not a path starting with /");
      // Refused by listen, never forwarded: nothing to send to the app either.
      expect(problem(row, { ...LISTEN, forwardUrl: "http://localhost:3000/" }), path).toContain("not a path");
    }
  });

  it("a path that curl would not send byte for byte", () => {
    expect(problem(stored(post({ path: "/a#frag" })))).toContain("#");
    for (const path of ["/a b", "/caf\xe9", "/a\tb", "/a\x1bb"]) expect(problem(stored(post({ path }))), path).toContain("bytes that curl would not send");
  });

  it("a body listen did not read (405, 413): its bytes are not known", () => {
    const unread = { ...stored(post({ body: Buffer.alloc(0) })) };
    unread.headers = { ...unread.headers, "content-length": "2000000" };
    expect(problem(unread)).toContain("without reading its body");
    const chunkedGet = stored({ method: "GET", path: "/", headers: [["Transfer-Encoding", "chunked"]], body: Buffer.alloc(0) });
    expect(problem(chunkedGet)).toContain("without reading its body");
    const chunked = { ...stored(post({ body: Buffer.alloc(0) })), headers: { host: "127.0.0.1:8080", "transfer-encoding": "chunked" } };
    expect(curlCommand(chunked, LISTEN, undefined).command).toMatch(/--data-binary ''$/);
    expect(problem({ ...chunked, status: 413 })).toContain("without reading its body");
  });
});
