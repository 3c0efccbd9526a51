// The mapping resolved here against what the real Webhooks (Actions) destination sent for the same
// events and mapping (fixtures/actions/captured, made by fixtures/actions/capture.mjs).
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { UsageError } from "../../src/errors.js";
import { mappingFromValue, parseMapping, resolveMapping, type ResolvedData } from "../../src/messages/mapping.js";
import { sign } from "../../src/signing/x-signature.js";

interface CapturedRequest {
  method: string;
  headers: [string, string][];
  body: { length: number; base64: string; text: string };
}
interface Fixture {
  scenario: string;
  entry: string;
  settings: { sharedSecret?: string };
  mapping: Record<string, unknown>;
  events: Record<string, unknown>[];
  requests: CapturedRequest[];
  outcome: {
    result?: { multistatus?: { status: number; errormessage?: string }[] }[];
    error?: { name: string; message: string };
  };
}

const dir = new URL("../../fixtures/actions/captured/", import.meta.url);
const fixtures: Fixture[] = readdirSync(dir)
  .filter((name) => name.endsWith(".json") && name !== "manifest.json" && name !== "responses.json")
  .map((name) => JSON.parse(readFileSync(new URL(name, dir), "utf8")) as Fixture);

// Fixtures whose `data` mapping is outside the subset, each checked below for a clear refusal.
const OUTSIDE_SUBSET = new Set(["single-directives", "single-path-semantics", "single-data-omitted"]);
const source = { flag: "--data" };
const single = fixtures.filter((f) => f.entry.includes("perform") && !f.entry.includes("performBatch"));
const batch = fixtures.filter((f) => f.entry.includes("performBatch"));
const inSubset = (f: Fixture) => !OUTSIDE_SUBSET.has(f.scenario);

function signatureHeader(request: CapturedRequest): string | undefined {
  return request.headers.find(([name]) => name.toLowerCase() === "x-signature")?.[1];
}

function bytesOf(resolved: ResolvedData): Buffer | null {
  return resolved.kind === "data" ? Buffer.from(JSON.stringify(resolved.data), "utf8") : null;
}

describe("resolveMapping against the real destination's single requests", () => {
  it("covers the fixtures it means to", () => {
    // Every single-event fixture is either compared below or refused on purpose.
    expect(single.filter(inSubset).length).toBe(single.length - OUTSIDE_SUBSET.size);
    expect(single.filter(inSubset).length).toBeGreaterThanOrEqual(30);
  });

  it.each(single.filter(inSubset).map((f) => [f.scenario, f] as const))("%s", (_name, fixture) => {
    expect(fixture.events).toHaveLength(1);
    const resolved = resolveMapping(mappingFromValue(fixture.mapping.data, source), fixture.events[0]);
    const request = fixture.requests[0];
    if (request === undefined) {
      if (fixture.outcome.error?.name === "AggregateAjvError") {
        // The real one refused the event's data: nothing was sent.
        expect(resolved).toEqual({ kind: "refused", reason: fixture.outcome.error.message });
      } else {
        // Nothing was sent for another reason (a bad header, a closed port): the data was fine.
        expect(resolved.kind).toBe("data");
      }
      return;
    }
    const sent = Buffer.from(request.body.base64, "base64");
    if (sent.length === 0) {
      expect(resolved).toEqual({ kind: "none" });
      expect(signatureHeader(request)).toBeUndefined();
      return;
    }
    expect(resolved.kind).toBe("data");
    expect(bytesOf(resolved)?.equals(sent)).toBe(true);
    const header = signatureHeader(request);
    if (fixture.settings.sharedSecret !== undefined && header !== "forged") {
      expect(header).toBe(sign(fixture.settings.sharedSecret, JSON.stringify((resolved as { data: unknown }).data)));
    }
  });
});

describe("resolveMapping against the real destination's batches", () => {
  it.each(batch.map((f) => [f.scenario, f] as const))("%s", (_name, fixture) => {
    const mapping = mappingFromValue(fixture.mapping.data, source);
    const results = fixture.events.map((event) => resolveMapping(mapping, event));
    // The body: each event's data, null for none, refused events left out.
    const elements = results.filter((r) => r.kind !== "refused").map((r) => (r.kind === "data" ? r.data : null));
    const request = fixture.requests[0];
    if (request === undefined) throw new Error("every batch fixture sent one request");
    expect(Buffer.from(JSON.stringify(elements), "utf8").equals(Buffer.from(request.body.base64, "base64"))).toBe(true);
    // The refused events are the ones the real one answered 400, with its message.
    const statuses = fixture.outcome.result?.[0]?.multistatus ?? [];
    expect(statuses).toHaveLength(fixture.events.length);
    results.forEach((result, index) => {
      const status = statuses[index];
      if (result.kind === "refused") expect(status).toMatchObject({ status: 400, errormessage: result.reason });
      else expect(status?.status).toBe(200);
    });
    // Signed when the first element is data, over that element alone.
    const first = elements[0];
    const header = signatureHeader(request);
    if (fixture.settings.sharedSecret === undefined || first === null || first === undefined) expect(header).toBeUndefined();
    else expect(header).toBe(sign(fixture.settings.sharedSecret, JSON.stringify(first)));
  });

  it("includes a batch with a refused event, one with a null first element and one with {} first", () => {
    const names = batch.map((f) => f.scenario);
    expect(names).toEqual(expect.arrayContaining(["batch-invalid-data-dropped", "batch-first-data-missing", "batch-first-data-empty"]));
  });
});

describe("fixtures outside the subset", () => {
  const byName = (name: string) => {
    const fixture = fixtures.find((f) => f.scenario === name);
    if (!fixture) throw new Error(`missing fixture ${name}`);
    return fixture;
  };

  it("single-directives is refused at its first directive, by name", () => {
    const data = byName("single-directives").mapping.data;
    expect(() => mappingFromValue(data, source)).toThrow(UsageError);
    expect(() => mappingFromValue(data, source)).toThrow(/at \/template: the directive @template of the real mapping kit is not supported/);
  });

  it("single-data-omitted (a mapping without data) cannot be written as --data; it is the same as a path to nothing", () => {
    const fixture = byName("single-data-omitted");
    expect("data" in fixture.mapping).toBe(false);
    expect(fixture.requests[0]?.body.length).toBe(0);
    expect(resolveMapping(parseMapping("$.properties.absent", source), fixture.events[0])).toEqual({ kind: "none" });
  });

  describe("single-path-semantics", () => {
    const fixture = byName("single-path-semantics");
    const data = fixture.mapping.data as Record<string, unknown>;

    it("is refused for its two paths without $.", () => {
      expect(() => mappingFromValue(data, source)).toThrow(
        /at \/noDollarPrefix: the path "properties\.revenue" does not start with "\$\.": write "\$\.properties\.revenue"/,
      );
      const { noDollarPrefix: _, ...rest } = data;
      expect(() => mappingFromValue(rest, source)).toThrow(/at \/dollarOnly: the path "\$" does not start with "\$\."/);
    });

    it("resolves the rest byte for byte as the real one did", () => {
      const { noDollarPrefix: _a, dollarOnly: _b, ...subset } = data;
      const sentText = fixture.requests[0]?.body.text ?? "";
      // Removing a key from the captured body must not change how the rest is written.
      expect(JSON.stringify(JSON.parse(sentText))).toBe(sentText);
      const { noDollarPrefix, ...expected } = JSON.parse(sentText) as Record<string, unknown>;
      expect(noDollarPrefix).toBe(42.5);
      // "$" alone found nothing in the real one: its key is not in the captured body.
      expect("dollarOnly" in expected).toBe(false);
      const resolved = resolveMapping(mappingFromValue(subset, source), fixture.events[0]);
      expect(resolved.kind).toBe("data");
      expect(JSON.stringify((resolved as { data: unknown }).data)).toBe(JSON.stringify(expected));
      // The pieces the brief names, spelled out: a falsy step is returned as is, a missing path in an array is null.
      expect(expected).toMatchObject({ zeroThenDeeper: 0, nullThenDeeper: null, stringLength: 15, arrayOfPaths: ["user_1", null, "literal"] });
    });
  });
});
