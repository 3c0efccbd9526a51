import { connect } from "node:net";

/** A request as a hostile sender writes it on the wire; header values are Latin-1 (one char per byte). */
export interface HostileRequest {
  name: string;
  method: string;
  path: string;
  headers: [string, string][];
  body: Buffer;
}

const JSON_TYPE: [string, string] = ["Content-Type", "application/json"];
const SIGNED: [string, string] = ["X-Signature", "0123456789abcdef0123456789abcdef01234567"];
const TRACK = Buffer.from('{"type":"track","userId":"u1","event":"Signed Up"}');

/**
 * Bodies, headers, paths and methods that a copied curl command must send unchanged without
 * running or reading anything else; `marker` is a file that must never be created.
 */
export function hostileRequests(marker: string): HostileRequest[] {
  const touch = `touch ${marker}`;
  const post = (name: string, fields: Partial<HostileRequest>): HostileRequest => ({
    name,
    method: "POST",
    path: "/hooks",
    headers: [JSON_TYPE, SIGNED],
    body: TRACK,
    ...fields,
  });
  const bodies: [string, Buffer | string][] = [
    ["a body naming a local file", "@/etc/passwd"],
    ["a body reading standard input", "@-"],
    ["a bare @", "@"],
    ["Ctrl-C then a command", `{"a":1}\x03${touch}\n`],
    ["a bracketed-paste end then a command", `\x1b[201~${touch}\n\x1b[200~`],
    ["escape sequences", "\x1b]0;title\x07\x1b[2J\x1b[31mred\x1b[0m\x9b31m"],
    ["NUL bytes", "a\0b\0"],
    ["newlines and carriage returns", "line1\nline2\r\n\n"],
    ["quotes", `'single' "double" '\\''`],
    ["backslashes", "back\\slash \\' \\\\ \\n \\"],
    ["command substitution", `$(${touch}) \${HOME} $HOME`],
    ["backticks", `\`${touch}\``],
    ["history expansion", "!! !$ !-1 ^a^b"],
    ["bytes that are not UTF-8", Buffer.from([0xff, 0xfe, 0x80, 0x00, 0xc3, 0x27, 0x5c])],
    ["curl options", "--data-binary @/etc/passwd -K /etc/passwd"],
    ["a tab and DEL", "a\tb\x7f"],
    ["a larger binary body", Buffer.from(Array.from({ length: 20_000 }, (_, i) => (i * 7919) % 256))],
  ];
  const headers: [string, [string, string][]][] = [
    ["a header with quotes", [["X-Quote", `O'Brien "the" ''`]]],
    ["a header with backslashes", [["X-Backslash", "a\\b\\\\c\\' \\"]]],
    ["a header with $ and backticks", [["X-Dollar", `$(${touch}) \${HOME} $HOME \`${touch}\``]]],
    ["a header with history expansion", [["X-Bang", "!! !$"]]],
    ["a header name with token punctuation", [["X'q$b!n%&*+.^_|~`", "v"]]],
    ["a header with a tab and Latin-1 bytes", [["X-Latin1", "caf\xe9\tna\xefve \xff"]]],
    ["an empty header", [["X-Empty", ""]]],
    [
      "a repeated header",
      [
        ["X-Dup", "1"],
        ["X-Dup", "2"],
      ],
    ],
    [
      "its own User-Agent and Accept",
      [
        ["User-Agent", "Segment.io/1.0"],
        ["Accept", "application/json"],
      ],
    ],
    [
      "hop-by-hop and credential headers (left out)",
      [
        ["Connection", "keep-alive, X-Hop"],
        ["X-Hop", "1"],
        ["Authorization", "Bearer app-token"],
        ["Cookie", "id=1"],
      ],
    ],
    ["Expect: 100-continue", [["Expect", "100-continue"]]],
  ];
  const paths = [
    "/hook[1-5]",
    "/{a,b}",
    "/%00",
    "/a/../b/./c/..",
    "/?a=b&c",
    "/q'uote\"d",
    "/back\\slash",
    `/$(touch\${IFS}${marker})`,
    "/`id`;id|id&id",
    "/~root/*",
    "//evil.example/x",
    "/@evil.example:1/x",
  ];
  return [
    ...bodies.map(([name, body]) => post(name, { body: Buffer.isBuffer(body) ? body : Buffer.from(body, "latin1") })),
    post("no Content-Type", { headers: [SIGNED] }),
    post("an empty body with Content-Length: 0", { body: Buffer.alloc(0) }),
    ...headers.map(([name, extra]) => post(name, { headers: [JSON_TYPE, SIGNED, ...extra] })),
    ...paths.map((path) => post(`the path ${path}`, { path })),
    post("a PUT", { method: "PUT", body: Buffer.alloc(0), headers: [] }),
    post("a HEAD", { method: "HEAD", path: "/h?x=1", body: Buffer.alloc(0), headers: [] }),
  ];
}

/** The request's bytes: no Content-Length for a body-less method, else one matching the body. */
export function wireBytes(request: HostileRequest, host: string): Buffer {
  const lines = [`${request.method} ${request.path} HTTP/1.1`, `Host: ${host}`, ...request.headers.map(([name, value]) => `${name}: ${value}`)];
  if (request.method === "POST") lines.push(`Content-Length: ${request.body.length}`);
  return Buffer.concat([Buffer.from(`${lines.join("\r\n")}\r\n\r\n`, "latin1"), request.body]);
}

/** Sends raw bytes on a new connection; resolves with the final answer (status line, headers, body) once it is in, or the server closes. */
export function sendRaw(port: number, bytes: Buffer, options: { head?: boolean } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => socket.write(bytes));
    let text = "";
    // 100 Continue (for Expect) comes before the answer.
    const final = (): string => text.replace(/^(HTTP\/1\.1 1\d\d[^\r]*\r\n\r\n)+/, "");
    socket.on("data", (chunk: Buffer) => {
      text += chunk.toString("latin1");
      // One answer is all a test waits for; the connection may stay open (keep-alive).
      if (answerComplete(final(), options.head ?? false)) socket.end();
    });
    socket.on("error", reject);
    socket.on("close", () => resolve(final()));
  });
}

function answerComplete(text: string, head: boolean): boolean {
  const end = text.indexOf("\r\n\r\n");
  if (end === -1) return false;
  const length = /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, end));
  return head || length === null || Buffer.byteLength(text, "latin1") - end - 4 >= Number(length[1]);
}
