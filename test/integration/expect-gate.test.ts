import { createServer as createHttpServer, type ServerResponse } from "node:http";
import { createServer as createTcpServer, type Server, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runInProcess } from "../helpers/run-cli.js";
import { tempDir } from "../helpers/setup.js";

// `expect` as a CI gate must end and must not be fooled (docs/commands/expect.md#bounds): a control
// URL that accepts and never answers, or trickles its answer, ends at --timeout plus the 5 s
// grace with exit 2; an answer past 1 MiB is refused; --from names a regular file, never a pipe
// or a device. (A stopped listen and a FIFO, which need real processes, are in test/e2e/expect.test.ts.)

const { dir } = tempDir("webhook-cli-expect-gate-");
const servers: Server[] = [];
const sockets = new Set<Socket>();
afterEach(async () => {
  for (const socket of sockets) socket.destroy();
  sockets.clear();
  await Promise.all(servers.splice(0).map((server) => new Promise((done) => server.close(done))));
});

async function listening(server: Server): Promise<string> {
  servers.push(server);
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** What a stopped process's port does: the kernel accepts the connection, and nothing ever answers. */
const silentServer = () => listening(createTcpServer(() => {}));

/** Answers 200 at once, then one byte of body every 50 ms, forever: each byte restarts an idle timer. */
const tricklingServer = () =>
  listening(
    createHttpServer((_req, res: ServerResponse) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write("{");
      const timer = setInterval(() => res.write(" "), 50);
      res.on("close", () => clearInterval(timer));
    }),
  );

// Without a deadline of its own, expect waited for undici's 300 s timeouts (or, trickled, for ever):
// this test's own limit is far past the 5.2 s expect now takes, so a loaded machine cannot fail it.
const FAR_PAST_THE_DEADLINE_MS = 60_000;

describe("expect --timeout is a deadline on the client side", () => {
  it.each([
    ["accepts and never answers", silentServer],
    ["answers and trickles its body", tricklingServer],
  ])(
    "a control URL that %s: exit 2 at its deadline, saying it does not answer",
    async (_what, start) => {
      const url = await start();
      const result = await runInProcess(["expect", "--from", url, "--timeout", "200ms"], { cwd: dir });
      expect(result.stderr).toBe(`error: --from: ${url} does not answer: no answer within 5.2s (--timeout 200ms and 5.0s more): is listen stopped?\n`);
      expect(result).toMatchObject({ code: 2, stdout: "" });
    },
    FAR_PAST_THE_DEADLINE_MS,
  );
});

describe("expect reads the control API's answer with a size bound", () => {
  it("an answer over 1 MiB is refused (exit 2), not believed", async () => {
    // A well-formed "met" answer padded past the bound: read whole, it would pass the gate.
    const answer = JSON.stringify({
      met: true,
      count: 1,
      matched: 1,
      received: 1,
      dropped: 0,
      complete: true,
      requests: [],
      window: { received: 1, recent: [] },
      pad: "x".repeat(2 * 1024 * 1024),
    });
    const url = await listening(createHttpServer((_req, res) => res.writeHead(200, { "content-type": "application/json" }).end(answer)));
    const result = await runInProcess(["expect", "--from", url, "--timeout", "1s"], { cwd: dir });
    expect(result).toEqual({ code: 2, stdout: "", stderr: `error: --from: ${url}: GET /api/wait answered more than 1 MiB: not listen's control API\n` });
  });
});

describe("expect --from takes a regular file", () => {
  it.each([
    ["a device", "/dev/null", /^error: \/dev\/null: --from: not a regular file \(a pipe, a device or a directory\): give a file\n$/],
    ["a directory", ".", /^error: \.: --from: not a regular file/],
    ["a file over 1 MiB", "big.url", /^error: big\.url: --from: the file is over 1 MiB, the most this option reads\n$/],
  ])("refuses %s at once (exit 2)", async (_what, from, error) => {
    writeFileSync(join(dir, "big.url"), `http://127.0.0.1:9\nhttp://127.0.0.1:9\n${" ".repeat(1024 * 1024)}`);
    const result = await runInProcess(["expect", "--from", from, "--timeout", "1s"], { cwd: dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(error);
    expect(result.stdout).toBe("");
  });
});
