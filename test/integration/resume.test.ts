import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { replay } from "../../src/replay/replay.js";
import { createSelection } from "../../src/replay/select.js";
import type { ReplayOptions } from "../../src/replay/types.js";
import { seededRandom } from "../../src/util/clock.js";
import { startServer, type Responder, type TestServer } from "../helpers/http-server.js";
import { closeServersAfterEach, tempDir } from "../helpers/setup.js";

// Interrupted replays against a real receiver that fails some lines and delays others:
// delivered ∪ dead-lettered ∪ {lines ≥ printed N} covers every line, and following the hint
// (from line N, then the dead-letter file) ends with every line delivered.
const { servers } = closeServersAfterEach();
const { dir, ndjson: file } = tempDir("resume-int-");

const LINES = 60;
const lines = Array.from({ length: LINES }, (_, i) =>
  JSON.stringify({ version: 1, type: "track", userId: `u${i % 7}`, event: "Step", properties: { line: i + 1 }, timestamp: "2024-01-01T00:00:00.000Z" }),
);
const path = file(lines);
const lineOf = (body: Buffer | string): number => (JSON.parse(body.toString()) as { properties: { line: number } }).properties.line;

/** Per line: 400 (fails for good), 503 (retried within the 4 h window, so until the interruption) or 200 after a random delay; seeded. */
function randomReceiver(seed: number): Responder {
  const random = seededRandom(seed);
  const plan = lines.map(() => {
    const r = random();
    return { status: r < 0.1 ? 400 : r < 0.2 ? 503 : 200, delayMs: Math.floor(random() * 30) };
  });
  return (req, res) => {
    const { status, delayMs } = plan[lineOf(req.body) - 1] ?? { status: 200, delayMs: 0 };
    setTimeout(() => {
      res.statusCode = status;
      res.end();
    }, delayMs);
  };
}

async function server(respond?: Responder): Promise<TestServer> {
  const s = await startServer(respond);
  servers.push(s);
  return s;
}

function settings(target: TestServer): ReplayOptions["settings"] {
  return { targets: [{ url: target.url, headers: {} }], secret: "s", userAgent: "test" };
}

const deadLettered = (file: string): number[] =>
  readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => (JSON.parse(l) as { body: { properties: { line: number } } }).body.properties.line);

/** Interrupts a replay after `abortAfterMs`, checks the cover, then follows the hint against a healthy receiver. */
async function interruptAndResume(
  seed: number,
  concurrency: number,
  withDeadLetter: boolean,
  abortAfterMs: number,
  rate?: number,
): Promise<{ stopped: boolean }> {
  const flaky = await server(randomReceiver(seed));
  const deadLetter = withDeadLetter ? join(dir, `dl-${seed}-${concurrency}-${abortAfterMs}.ndjson`) : undefined;
  const delivered = new Set<number>();
  const controller = new AbortController();
  setTimeout(() => controller.abort("SIGINT"), abortAfterMs);
  const first = await replay({
    path,
    name: path,
    settings: settings(flaky),
    concurrency,
    ...(rate !== undefined ? { rate } : {}),
    signal: controller.signal,
    ...(deadLetter ? { deadLetter } : {}),
    onMessage: (entry, result) => {
      if (result?.delivered) delivered.add(entry.line);
    },
  });
  const context = `seed ${seed}, concurrency ${concurrency}, rate ${rate ?? "-"}, ${withDeadLetter ? "with" : "without"} --dead-letter, abort at ${abortAfterMs} ms`;
  // Interrupted while validating, the dead-letter file was never opened.
  const dead = deadLetter && existsSync(deadLetter) ? deadLettered(deadLetter) : [];
  if (first.resumeLine === undefined) return { stopped: false };
  const mark = first.resumeLine;
  // Only final failures are dead-lettered, each once, and none of them was delivered.
  expect(dead.length, context).toBe(deadLetter ? first.failed : 0);
  for (const line of dead) expect(delivered.has(line), context).toBe(false);
  for (let line = 1; line <= LINES; line++) {
    expect(delivered.has(line) || dead.includes(line) || line >= mark, `${context}: line ${line} lost (resume at ${mark})`).toBe(true);
  }
  expect(first.deliveredAfterResume, context).toBe([...delivered].filter((line) => line >= mark).length);

  // Following the hint against a healthy receiver: from line N, then the dead-letter file.
  const healthy = await server();
  const resumed = await replay({ path, name: path, settings: settings(healthy), concurrency, selection: createSelection({ fromLine: mark }) });
  expect(resumed.delivered, context).toBe(LINES - mark + 1);
  if (deadLetter && dead.length > 0) await replay({ path: deadLetter, name: deadLetter, settings: settings(healthy) });
  const finallyDelivered = new Set([...delivered, ...healthy.requests.map((r) => lineOf(r.body))]);
  expect(
    [...finallyDelivered].sort((a, b) => a - b),
    context,
  ).toEqual(lines.map((_, i) => i + 1));
  return { stopped: true };
}

describe("an interrupted replay resumes without losing a line (real receiver)", () => {
  for (const concurrency of [1, 32]) {
    for (const withDeadLetter of [false, true]) {
      it(`concurrency ${concurrency}, ${withDeadLetter ? "with" : "without"} --dead-letter, interrupted at several points`, async () => {
        let stopped = 0;
        for (const [seed, abortAfterMs] of [
          [1, 5],
          [2, 40],
          [3, 120],
          [4, 250],
        ] as const) {
          if ((await interruptAndResume(seed, concurrency, withDeadLetter, abortAfterMs)).stopped) stopped += 1;
        }
        // A 503 line is never delivered before the abort, so every run is interrupted.
        expect(stopped).toBe(4);
      }, 30_000);
    }
  }

  it("property: seeded random receivers, concurrencies and interruption times, many runs", async () => {
    const random = seededRandom(2026);
    let stopped = 0;
    for (let run = 0; run < 24; run++) {
      const concurrency = 1 + Math.floor(random() * 40);
      const rate = random() < 0.4 ? 100 + Math.floor(random() * 900) : undefined;
      if ((await interruptAndResume(100 + run, concurrency, random() < 0.5, Math.floor(random() * 200), rate)).stopped) stopped += 1;
    }
    expect(stopped).toBeGreaterThan(20);
  }, 60_000);
});
