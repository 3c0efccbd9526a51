import { describe, expect, it } from "vitest";
import { ArrivalLog, MAX_ARRIVAL_BYTES, MAX_ARRIVALS } from "../../src/inspector/arrival-log.js";
import { arrivalOf, arrivalsReport } from "../../src/receiver/arrivals.js";
import { judgeRequest } from "../../src/receiver/verdict.js";

const request = (index: number, body: unknown, at = 1_000 * index) => ({
  index,
  receivedAt: new Date(at),
  method: "POST",
  path: "/hooks",
  verdict: judgeRequest(Buffer.from(JSON.stringify(body)), {}),
  status: 200,
  fault: null,
  rule: null,
});
const track = (userId: string) => ({ version: 1, type: "track", userId, event: "E", properties: {}, timestamp: "2024-01-01T00:00:00Z" });

describe("the control API's arrival log", () => {
  it("keeps the newest within its bounds in entries and in bytes, and says which windows it no longer covers whole", () => {
    const log = new ArrivalLog({ entries: 3, bytes: Number.MAX_SAFE_INTEGER });
    for (let i = 1; i <= 5; i++) log.add(request(i, track(`u${i}`)));
    const kept: number[] = [];
    log.scan({ match: {} }, (a) => void kept.push(a.index));
    expect(kept).toEqual([3, 4, 5]);
    expect(log.totals).toEqual({ received: 5, dropped: 2 });
    expect(log.complete(undefined)).toBe(false);
    expect(log.complete(2_000)).toBe(false);
    expect(log.complete(2_001)).toBe(true);

    const small = new ArrivalLog({ entries: 100, bytes: 2_000 });
    // Each entry is clipped to 256 characters of user id, so a huge one costs under a kilobyte.
    for (let i = 1; i <= 10; i++) small.add(request(i, track("x".repeat(100_000))));
    expect(small.totals.dropped).toBeGreaterThan(5);
    const last: number[] = [];
    small.scan({ match: {} }, (a) => void last.push(a.index));
    expect(last.at(-1)).toBe(10);
    expect(MAX_ARRIVALS).toBe(100_000);
    expect(MAX_ARRIVAL_BYTES).toBe(32 * 1024 * 1024);
  });

  it("an arrival keeps a few clipped fields; the report escapes what a sender chose", () => {
    const arrival = arrivalOf(request(1, track(`evil\u001b[2J${"y".repeat(300)}`)));
    expect(arrival.userId?.length).toBe(257);
    expect(arrivalsReport([arrival], 3)).toBe(
      `3 requests arrived (the last 1 kept: 1 track (valid))\n  … 2 earlier\n  #1 POST /hooks  track  evil\\e[2J${"y".repeat(248)}…  "E"  valid  → 200`,
    );
  });
});
