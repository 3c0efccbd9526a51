import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { validateHeader } from "../../src/config/checks.js";
import type { HttpMethod, Target } from "../../src/config/destination.js";
import { batchRequest } from "../../src/delivery/actions-request.js";
import { DeliveryEngine } from "../../src/delivery/deliver.js";
import { mappingFromValue } from "../../src/messages/mapping.js";
import { FakeTransport, VirtualClock } from "../../src/testing.js";

/*
 * The engine builds, from the same events and mapping, the request the real Webhooks (Actions)
 * destination sent (fixtures/actions/captured, made by its own code): the same method, the same
 * body bytes, the same X-Signature, User-Agent and Content-Type, the same custom headers. The
 * scenarios whose mapping or headers webhook-cli refuses up front (directives, a path without
 * "$.", a header it sets itself) are left out: the settings checks refuse them.
 */

interface Fixture {
  scenario: string;
  entry: string;
  settings: { sharedSecret?: string };
  mapping: { method: unknown; data?: unknown; headers?: Record<string, string> };
  events: Record<string, unknown>[];
  requests: { method: string; headers: [string, string][]; body: { base64: string } }[];
  outcome: unknown;
}

const DIR = fileURLToPath(new URL("../../fixtures/actions/captured/", import.meta.url));
const FIXTURES = readdirSync(DIR)
  .filter((file) => file.endsWith(".json"))
  .map((file) => JSON.parse(readFileSync(join(DIR, file), "utf8")) as Fixture)
  .filter((fixture) => typeof fixture.entry === "string");

/** The target webhook-cli would build from the fixture's mapping, or why it refuses the mapping. */
function targetOf(fixture: Fixture): Target | string {
  const { method, data, headers = {} } = fixture.mapping;
  if (typeof method !== "string") return "the method is a directive";
  try {
    for (const [name, value] of Object.entries(headers)) validateHeader(name, value, {});
    const mapping = data === undefined || data === null ? undefined : mappingFromValue(data, { key: "data" });
    if (data === null || data === undefined) return "no data field (webhook-cli's default mapping is the whole message)";
    return { url: "http://127.0.0.1:PORT/hook", headers, method: method as HttpMethod, ...(mapping ? { mapping } : {}) };
  } catch (error) {
    return (error as Error).message;
  }
}

const header = (pairs: [string, string][], name: string) => pairs.find(([n]) => n.toLowerCase() === name)?.[1];

describe("the engine sends what the real Webhooks (Actions) destination sent", () => {
  const built = FIXTURES.map((fixture) => ({ fixture, target: targetOf(fixture) }));

  it("covers the single, PUT, PATCH, mapped, empty-data and batch scenarios", () => {
    const covered = built.filter((b) => typeof b.target === "object").map((b) => b.fixture.scenario);
    for (const name of [
      "single-post-default",
      "single-put",
      "single-patch",
      "single-mapped-object",
      "single-data-path-missing",
      "batch-default-signed",
      "batch-first-data-missing",
      "batch-invalid-data-dropped",
      "batch-patch-headers",
      "batch-unsigned",
    ]) {
      expect(covered).toContain(name);
    }
    expect(
      built
        .filter((b) => typeof b.target === "string")
        .map((b) => b.fixture.scenario)
        .sort(),
    ).toEqual([
      "batch-keys-not-applied",
      "single-data-omitted",
      "single-directives",
      "single-header-non-latin1",
      "single-header-overrides",
      "single-path-semantics",
    ]);
  });

  for (const { fixture, target } of built) {
    if (typeof target === "string") continue;
    it(fixture.scenario, async () => {
      const clock = new VirtualClock(0, { autoAdvance: true });
      const transport = new FakeTransport({ clock });
      const engine = new DeliveryEngine(
        { targets: [target], secret: fixture.settings.sharedSecret, userAgent: "Segment (Actions)", destination: "actions" },
        { clock, transport, retryWindowMs: 0 },
      );
      if (fixture.entry.includes("performBatch")) {
        const { content } = batchRequest(
          target,
          fixture.events.map((event) => ({ body: JSON.stringify(event) })),
        );
        if (content) await engine.deliverContent(target, content);
      } else await engine.deliver(JSON.stringify(fixture.events[0]));
      const real = fixture.requests[0];
      const ours = transport.requests[0];
      // Nothing listened: the request never reached a server to be captured.
      if (real === undefined && JSON.stringify(fixture.outcome).includes("ECONNREFUSED")) return expect(ours).toBeDefined();
      if (real === undefined) return expect(ours).toBeUndefined();
      expect(ours?.body).toBe(Buffer.from(real.body.base64, "base64").toString("utf8"));
      expect(transport.requests).toHaveLength(1);
      const sent = Object.entries(ours?.headers ?? {}).map(([n, v]) => [n.toLowerCase(), v] as [string, string]);
      for (const name of ["x-signature", "user-agent", "content-type", ...Object.keys(fixture.mapping.headers ?? {}).map((n) => n.toLowerCase())]) {
        expect(header(sent, name), name).toBe(header(real.headers, name));
      }
      expect(engine.prepare("{}", target).method).toBe(real.method);
    });
  }
});
