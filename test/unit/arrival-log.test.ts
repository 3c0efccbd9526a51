import { describe, expect, it } from "vitest";
import { ArrivalLog, MAX_ARRIVAL_BYTES, MAX_ARRIVALS } from "../../src/control/arrival-log.js";
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

  it("gives back each arrival as arrivalOf made it, across the ring's growth and wrap, and matches on the same facts", () => {
    const log = new ArrivalLog({ entries: 1500, bytes: Number.MAX_SAFE_INTEGER });
    const made = [];
    for (let i = 1; i <= 4000; i++) {
      const base = request(i, i % 3 === 0 ? { nope: true } : track(`u${i % 7}`), 1_000 * i + (i % 5));
      const secret = i % 4 === 0 ? { verdict: judgeRequest(Buffer.from("{}"), { "x-signature": "bad" }, { secret: "s3cret" }) } : {};
      const source = {
        ...base,
        ...secret,
        status: i % 11 === 0 ? null : 200 + (i % 5),
        fault: i % 11 === 0 ? ("timeout" as const) : null,
        rule: i % 6 === 0 ? i % 4 : null,
      };
      log.add(source);
      made.push(arrivalOf(source));
    }
    const kept: unknown[] = [];
    log.scan({ match: {} }, (a) => void kept.push(a));
    expect(kept).toEqual(made.slice(-1500));
    expect(JSON.stringify(kept)).toBe(JSON.stringify(made.slice(-1500)));
    const tracks: number[] = [];
    log.scan({ match: { type: "track", userId: "u3", verdict: "valid" }, since: 3_000_000 }, (a) => void tracks.push(a.index));
    expect(tracks).toEqual(made.filter((a) => a.index >= 3000 && a.type === "track" && a.userId === "u3" && a.valid).map((a) => a.index));
    expect(tracks.length).toBeGreaterThan(10);
    const recent = log.recent({ since: 3_990_000 }, 4);
    expect(recent.count).toBe(11);
    expect(recent.arrivals).toEqual(made.slice(-4));
    expect(log.totals).toEqual({ received: 4000, dropped: 2500 });
  });

  it("keeps order when the byte bound has moved the ring's start before it grows", () => {
    // Long user ids first (the bound holds a few hundred), then short ones fill the ring past its first size.
    const log = new ArrivalLog({ entries: 100_000, bytes: 1100 * 224 });
    const made = [];
    for (let i = 1; i <= 3000; i++) {
      const source = request(i, track(i <= 2000 ? `${"x".repeat(300)}${i}` : `u${i}`));
      log.add(source);
      made.push(arrivalOf(source));
    }
    const kept: unknown[] = [];
    log.scan({ match: {} }, (a) => void kept.push(a));
    expect(kept.length).toBeGreaterThan(1000);
    expect(kept).toEqual(made.slice(-kept.length));
  });

  it("tells a listener of each arrival as arrivalOf makes it, and stops when it unsubscribes", () => {
    const log = new ArrivalLog();
    const heard: unknown[] = [];
    const stop = log.subscribe((arrival, at) => void heard.push([arrival, at]));
    const first = request(1, track("u1"));
    log.add(first);
    stop();
    log.add(request(2, track("u2")));
    expect(heard).toEqual([[arrivalOf(first), 1_000]]);
  });

  it("keeps the scheme each request was checked by, and the report names one other than X-Signature", async () => {
    const { createHmac } = await import("node:crypto");
    const body = JSON.stringify(track("u1"));
    const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const timestamp = String(Math.floor(Date.now() / 1000));
    const mac = createHmac("sha256", Buffer.from(secret.slice(6), "base64"))
      .update(`msg_1.${timestamp}.${body}`)
      .digest("base64");
    const standard = { "webhook-id": "msg_1", "webhook-timestamp": timestamp, "webhook-signature": `v1,${mac}` };
    const signed = (index: number, headers: Record<string, string>) => ({
      ...request(index, track("u1")),
      verdict: judgeRequest(Buffer.from(body), headers, { secret }),
    });
    const log = new ArrivalLog({ entries: 10, bytes: Number.MAX_SAFE_INTEGER });
    log.add(signed(1, standard));
    log.add(signed(2, { "x-signature": createHmac("sha1", secret).update(body).digest("hex") }));
    log.add(signed(3, { ...standard, "webhook-signature": "v1,AAAA" }));
    const kept: ReturnType<typeof arrivalOf>[] = [];
    log.scan({ match: { verdict: "any" } }, (a) => void kept.push(a));
    expect(kept.map((a) => [a.scheme, a.signature])).toEqual([
      ["standard", "ok"],
      ["default", "ok"],
      ["standard", "failed"],
    ]);
    const report = arrivalsReport(kept, 3);
    expect(report).toContain('#1 POST /hooks  track  u1  "E"  valid (standard signature)  → 200');
    expect(report).toContain('#2 POST /hooks  track  u1  "E"  valid  → 200');
    expect(report).toMatch(/#3 [^\n]*invalid \(webhook-signature: the signature does not match/);
  });
});
