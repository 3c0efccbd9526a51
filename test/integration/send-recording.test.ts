import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { runInProcess } from "../helpers/run-cli.js";
import { closeServersAfterEach, tempDir } from "../helpers/setup.js";

// `send` given what `replay` reads (docs/fixtures.md): it says so, instead of listing the shape
// problems of a message that is not one.
const { dir, file } = tempDir("webhook-cli-send-recording-");
const { server } = closeServersAfterEach();
const RECORDING = fileURLToPath(new URL("../../fixtures/events.ndjson", import.meta.url));

describe("send given recorded requests", () => {
  it("a listen --record file (the shipped fixtures/events.ndjson): exit 2 naming replay, nothing sent; replay sends it", async () => {
    const s = await server();
    const local = file("events.ndjson", readFileSync(RECORDING, "utf8"));
    const sent = await runInProcess(["send", local, "--url", s.url, "--secret", "s3cret"], { cwd: dir });
    expect(sent).toEqual({
      code: 2,
      stdout: "",
      stderr: `error: ${local}:1: a recorded request (listen --record or a dead-letter file), not a message: replay sends recordings (webhook-cli replay ${local} --url URL); nothing was sent\n`,
    });
    expect(s.requests).toHaveLength(0);
    const replayed = await runInProcess(["replay", local, "--url", s.url, "--secret", "s3cret"], { cwd: dir });
    expect(replayed.code).toBe(0);
    expect(s.requests).toHaveLength(7);
  });

  it("on standard input, and a dead-letter line after a good message: the same, at its line", async () => {
    const s = await server();
    const [first] = readFileSync(RECORDING, "utf8").split("\n");
    const envelope = JSON.parse(first as string) as { body: unknown };
    const stdin = await runInProcess(["send", "-", "--url", s.url], { cwd: dir, input: `${first}\n` });
    expect(stdin.stderr).toBe(
      "error: stdin:1: a recorded request (listen --record or a dead-letter file), not a message: replay sends recordings (webhook-cli replay - --url URL); nothing was sent\n",
    );
    expect(stdin.code).toBe(2);
    const deadLetter = JSON.stringify({ ...(JSON.parse(first as string) as object), failure: { reason: "HTTP 500", attempts: 3, status: 500 } });
    const mixed = await runInProcess(["send", file("mixed.ndjson", `${JSON.stringify(envelope.body)}\n${deadLetter}\n`), "--url", s.url], { cwd: dir });
    expect(mixed.stderr).toMatch(/mixed\.ndjson:2: a recorded request \(listen --record or a dead-letter file\), not a message: replay sends recordings/);
    expect(mixed.code).toBe(2);
    expect(s.requests).toHaveLength(0);
  });
});
