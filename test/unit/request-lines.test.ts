import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { RequestLineMaker, requestLines, type Painter } from "../../src/cli/terminal/request-lines.js";
import type { ReceivedRequest } from "../../src/receiver/received-request.js";
import { judgeRequest } from "../../src/receiver/verdict.js";

const secret = "s3cret";
const sign = (body: Buffer) => createHmac("sha1", secret).update(body).digest("hex");
const track = { version: 1, type: "track", userId: "u1", event: "Order Completed", properties: {}, timestamp: "2024-01-01T00:00:00.000Z" };

let index = 0;
function received(body: unknown, change: Partial<ReceivedRequest> = {}, signed: "ok" | "bad" | "none" = "ok"): ReceivedRequest {
  const raw = Buffer.from(body === undefined ? "" : typeof body === "string" ? body : JSON.stringify(body));
  const headers = signed === "none" ? {} : { "x-signature": signed === "ok" ? sign(raw) : "0".repeat(40) };
  const verdict = judgeRequest(raw, headers, { secret: signed === "none" ? undefined : secret });
  return {
    index: ++index,
    receivedAt: new Date(0),
    method: "POST",
    path: "/hooks",
    headers,
    verdict,
    status: 200,
    fault: null,
    injected: false,
    raw,
    forwarded: null,
    rule: null,
    ...change,
  };
}

const plain: Painter = { ok: (t) => t, bad: (t) => t, dim: (t) => t, warn: (t) => t };
const tagged: Painter = { ok: (t) => `<ok>${t}</ok>`, bad: (t) => `<bad>${t}</bad>`, dim: (t) => `<dim>${t}</dim>`, warn: (t) => `<warn>${t}</warn>` };

describe("listen's request lines, made one request after another", () => {
  it("are the lines requestLines makes, whatever changes from one request to the next", () => {
    const base = () => received(track);
    // Each differs from `base` in one thing its line shows, plain or not.
    const others: (() => ReceivedRequest)[] = [
      () => received(track, { method: "PUT" }),
      () => received(track, { path: "/other" }),
      () => received(track, { status: 201 }),
      () => received(track, { status: 503, injected: true }),
      () => received(track, { rule: 2 }),
      () => received(track, { rule: 0 }),
      () => received(track, { status: null, fault: "timeout" }),
      () => received(track, { status: null, fault: "drop" }),
      () => received({ ...track, userId: "u2" }),
      () => received({ ...track, event: "Other" }),
      () => received({ ...track, type: "identify", event: undefined, traits: {} }),
      () => received({ ...track, type: "screen", event: undefined, name: "Home" }),
      () => received({ ...track, properties: { a: 1 } }),
      () => received({ mapped: true }),
      () => received(undefined),
      () => received(undefined, {}, "none"),
      () => received(track, {}, "none"),
      () => received(track, {}, "bad"),
      () => received({ ...track, event: 3 }),
      () => received({ ...track, extra: 1 }),
      () => received("not json"),
      () => received([track, track]),
      () => received([null, track], {}, "none"),
      () => received(track, { forwarded: { fromApp: true, status: 202, ms: 12, headers: {}, body: Buffer.from("") } as ReceivedRequest["forwarded"] }),
    ];
    for (const paint of [plain, tagged]) {
      for (const verbose of [false, true]) {
        const maker = new RequestLineMaker(paint, verbose);
        for (const other of others) {
          for (const request of [base(), base(), other(), other(), base(), other()]) {
            expect(maker.lines(request)).toBe(requestLines(request, paint, verbose));
          }
        }
      }
    }
  });

  it("tell apart requests that differ in any one thing a plain line shows", () => {
    const base = received(track);
    const withVerdict = (change: Partial<ReceivedRequest["verdict"]>) => ({ ...base, index: ++index, verdict: { ...base.verdict, ...change } });
    const withRequest = (change: Partial<ReceivedRequest>) => ({ ...base, index: ++index, ...change });
    const pairs: [ReceivedRequest, ReceivedRequest][] = [
      [base, withRequest({ method: "PUT" })],
      [base, withRequest({ path: "/other" })],
      [base, withRequest({ status: 201 })],
      [withRequest({ status: 503 }), withRequest({ status: 503, injected: true })],
      [base, withRequest({ rule: 0 })],
      [withRequest({ rule: 1 }), withRequest({ rule: 2 })],
      [withRequest({ status: null, fault: "timeout" }), withRequest({ status: null, fault: "drop" })],
      [base, withVerdict({ bodyKind: "payload" })],
      [base, withVerdict({ type: "page" })],
      [base, withVerdict({ userId: "u2" })],
      [base, withVerdict({ userId: undefined })],
      [base, withVerdict({ name: "Other" })],
      [base, withVerdict({ signatureValid: null })],
      [base, withVerdict({ signatureRule: "first-element" })],
      [withVerdict({ signatureValid: null, signatureRule: null }), withVerdict({ signatureValid: null, signatureRule: null, signatureNote: "a note" })],
      [base, withVerdict({ size: 999 })],
    ];
    // Alike in every plain fact, but not plain: each is made again.
    const issue = (message: string) => [{ key: "k", message }];
    const notPlain: [ReceivedRequest, ReceivedRequest][] = [
      [
        withVerdict({ bodyKind: "batch", batch: { elements: 2, messages: 2, payloads: 0, empty: 0 } }),
        withVerdict({ bodyKind: "batch", batch: { elements: 3, messages: 3, payloads: 0, empty: 0 } }),
      ],
      [withVerdict({ signatureValid: false, signatureError: "a" }), withVerdict({ signatureValid: false, signatureError: "b" })],
      [withVerdict({ shapeErrors: issue("a") }), withVerdict({ shapeErrors: issue("b") })],
      [withVerdict({ shapeWarnings: issue("a") }), withVerdict({ shapeWarnings: [...issue("a"), ...issue("b")] })],
    ];
    const verboseOnly: [ReceivedRequest, ReceivedRequest][] = [
      [
        withRequest({ raw: Buffer.from(JSON.stringify({ ...track, userId: "u8" })) }),
        withRequest({ raw: Buffer.from(JSON.stringify({ ...track, userId: "u9" })) }),
      ],
    ];
    for (const paint of [plain, tagged]) {
      for (const verbose of [false, true]) {
        const maker = new RequestLineMaker(paint, verbose);
        for (const [a, b] of [...notPlain, ...(verbose ? verboseOnly : [])]) {
          expect(requestLines(a, paint, verbose)).not.toBe(requestLines({ ...b, index: a.index }, paint, verbose));
          for (const request of [a, b, a, b]) expect(maker.lines(request)).toBe(requestLines(request, paint, verbose));
        }
      }
    }
    for (const paint of [plain, tagged]) {
      const maker = new RequestLineMaker(paint, false);
      for (const [a, b] of pairs) {
        expect(requestLines(a, paint, false)).not.toBe(requestLines({ ...b, index: a.index }, paint, false));
        for (const request of [a, b, a, b]) expect(maker.lines(request)).toBe(requestLines(request, paint, false));
      }
    }
  });

  it("make the text past the number once for a burst of alike requests", () => {
    const maker = new RequestLineMaker(plain, false);
    const first = maker.lines(received(track));
    const second = maker.lines(received(track));
    expect(first).toMatch(/^#\d+ POST \/hooks {2}track {2}u1 {2}"Order Completed" {2}signature ok {2}\d+ B {2}→ 200$/);
    expect(second.slice(second.indexOf(" "))).toBe(first.slice(first.indexOf(" ")));
    expect(second).not.toBe(first);
  });
});
