import { request } from "undici";
import { describe, expect, it } from "vitest";
import { startInProcess } from "../helpers/run-cli.js";
import { closeServersAfterEach } from "../helpers/setup.js";

// Control characters a sender can put in what listen, send and serve print: none may reach the terminal raw.
const CONTROL = /[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/;
const SGR = /\x1b\[[0-9;]*m/g;
const hostileTrack = JSON.stringify({
  version: 1,
  type: "track",
  userId: "u\x9b2J\x1b]52;c;ZWNobyBoaQ==\x07\x1b[2J\n#9 POST /forged  track  admin  signature ok  1 B  → 200",
  event: "E\x9b31m\u202e",
  properties: {},
  timestamp: "2024-01-01T00:00:00.000Z",
  "k\x1b[8m": 1,
});

async function post(url: string, body: string): Promise<void> {
  const response = await request(url, { method: "POST", headers: { "content-type": "application/json" }, body });
  await response.body.dump();
}

async function listenOnce(args: string[], env: Record<string, string> = {}): Promise<{ stdout: string; stderr: string }> {
  const run = startInProcess(["listen", "--port", "0", "--count", "1", ...args], { env });
  const [, url] = await run.waitFor(/(?:Listening on |"url":")(http[^"\s]+)/);
  await post(`${url}/hook`, hostileTrack);
  await run.code;
  return { stdout: run.stdout(), stderr: run.stderr() };
}

const { server } = closeServersAfterEach();

describe("received text on the terminal", () => {
  it("listen shows a sender's control characters escaped, and a newline in a userId forges no line", async () => {
    const { stdout } = await listenOnce(["--verbose"]);
    expect(stdout).not.toMatch(CONTROL);
    expect(stdout).toContain("\\e]52;c;");
    expect(stdout).not.toMatch(/^#9 POST/m);
  });

  it("with colour on, listen's own colours stay and the sender's codes are escaped", async () => {
    const { stdout } = await listenOnce(["--verbose"], { NO_COLOR: "", FORCE_COLOR: "1" });
    expect(stdout).toMatch(SGR);
    expect(stdout.replace(SGR, "")).not.toMatch(CONTROL);
    expect(stdout).toContain("\\e[2J");
  });

  it("listen --json writes DEL, C1 and bidi controls as \\u escapes", async () => {
    const { stdout } = await listenOnce(["--json"]);
    expect(stdout).not.toMatch(CONTROL);
    const request = stdout
      .split("\n")
      .map((line) => JSON.parse(line || "{}"))
      .find((event) => event.event === "request");
    expect(request.userId).toContain("\x1b]52;c;");
  });

  it("send --verbose shows a receiver's answer escaped", async () => {
    const app = await server((_req, res) => {
      res.writeHead(200, { "x-note": "a\x9bb" }).end("ok\x1b]0;title\x07\n\x1b[2J");
    });
    const run = startInProcess(["send", "--type", "track", "--url", app.url, "--verbose"]);
    expect(await run.code).toBe(0);
    expect(run.stderr()).not.toMatch(CONTROL);
    expect(run.stderr()).toContain("ok\\e]0;title\\x07");
  });
});
