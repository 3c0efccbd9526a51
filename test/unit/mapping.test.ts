import { describe, expect, it } from "vitest";
import { ConfigError, UsageError, WebhookCliError } from "../../src/errors.js";
import {
  DEFAULT_MAPPING,
  mappingFromValue,
  mappingText,
  parseMapping,
  resolveMapping,
  UNSUPPORTED_DIRECTIVES,
  type Mapping,
} from "../../src/messages/mapping.js";
import { followPath, splitPath } from "../../src/messages/mapping-path.js";

const flag = { flag: "--data" };
const message = {
  type: "track",
  event: "Order Completed",
  userId: "user_1",
  properties: {
    revenue: 42.5,
    zero: 0,
    empty: "",
    no: false,
    coupon: null,
    nested: {},
    "dotted.key": "dk",
    products: [
      { sku: "sku-1", quantity: 1 },
      { sku: "sku-2", quantity: 2 },
    ],
  },
  traits: { email: "ada@example.com" },
};

function resolve(mapping: string | Record<string, unknown>, input: unknown = message) {
  return resolveMapping(typeof mapping === "string" ? parseMapping(mapping, flag) : mappingFromValue(mapping, flag), input);
}

function dataOf(mapping: string | Record<string, unknown>, input: unknown = message): unknown {
  const resolved = resolve(mapping, input);
  if (resolved.kind !== "data") throw new Error(`expected data, got ${JSON.stringify(resolved)}`);
  return resolved.data;
}

function refusal(run: () => unknown): WebhookCliError {
  try {
    run();
  } catch (error) {
    if (error instanceof WebhookCliError) return error;
    throw error;
  }
  throw new Error("expected a refusal");
}

describe("paths", () => {
  it("$. is the whole message, as it is", () => {
    expect(dataOf("$.")).toBe(message);
    expect(JSON.stringify(dataOf("$."))).toBe(JSON.stringify(message));
    expect(DEFAULT_MAPPING.root).toEqual(parseMapping("$.", flag).root);
    expect(resolveMapping(DEFAULT_MAPPING, message)).toEqual({ kind: "data", data: message });
  });

  it("finds objects by dots, [n], .n and quoted keys", () => {
    expect(dataOf("$.properties")).toBe(message.properties);
    expect(dataOf("$.properties.products[1]")).toEqual({ sku: "sku-2", quantity: 2 });
    expect(dataOf("$.properties.products.0")).toEqual({ sku: "sku-1", quantity: 1 });
    expect(dataOf(`$.properties["products"][0]`)).toEqual({ sku: "sku-1", quantity: 1 });
    expect(dataOf({ sku: { "@path": "$.properties.products[0].sku" }, q: { "@path": "$.properties.products.1.quantity" } })).toEqual({ sku: "sku-1", q: 2 });
    expect(dataOf({ email: { "@path": "$.traits.email" }, q: { "@path": "$.properties['products'][1]['quantity']" } })).toEqual({
      email: "ada@example.com",
      q: 2,
    });
  });

  it("tolerates surrounding whitespace in the flag text", () => {
    expect(dataOf("  $.traits\n")).toEqual({ email: "ada@example.com" });
  });

  it("splits like the real get: empty pieces skipped, quotes removed, [x] without digit or quote is part of the key", () => {
    expect(splitPath("")).toEqual([]);
    expect(splitPath(".")).toEqual([]);
    expect(splitPath("a..b.")).toEqual(["a", "b"]);
    expect(splitPath("a[0].b")).toEqual(["a", "0", "b"]);
    expect(splitPath("a[b]")).toEqual(["a[b]"]);
    expect(splitPath(`a['b']["c"]`)).toEqual(["a", "b", "c"]);
    expect(splitPath("a[12][3]")).toEqual(["a", "12", "3"]);
    expect(dataOf("$..")).toBe(message);
    expect(dataOf("$.properties..products.0")).toEqual({ sku: "sku-1", quantity: 1 });
  });

  it("a key with a dot in it cannot be reached (the real get splits on every dot)", () => {
    expect(resolve("$.properties.dotted.key")).toEqual({ kind: "none" });
    expect(resolve(`$.properties["dotted.key"]`)).toEqual({ kind: "none" });
  });

  it("steps with &&: a falsy value on the way is the answer as it is", () => {
    const m = {
      zero: { "@path": "$.properties.zero.deeper" },
      empty: { "@path": "$.properties.empty.deeper" },
      no: { "@path": "$.properties.no.deeper" },
      nullStep: { "@path": "$.properties.coupon.code" },
      missingStep: { "@path": "$.properties.absent.code" },
    };
    expect(JSON.stringify(dataOf(m))).toBe(`{"zero":0,"empty":"","no":false,"nullStep":null}`);
  });

  it("reads own length and indexes of strings and arrays, nothing inherited", () => {
    const m = {
      len: { "@path": "$.event.length" },
      first: { "@path": "$.event.0" },
      count: { "@path": "$.properties.products.length" },
      ctor: { "@path": "$.properties.constructor" },
      toStr: { "@path": "$.event.toString" },
      proto: { "@path": "$.properties.__proto__" },
      numberProp: { "@path": "$.properties.revenue.toFixed" },
      notIndex: { "@path": "$.properties.products.01" },
    };
    expect(dataOf(m)).toEqual({ len: 15, first: "O", count: 2 });
    expect(followPath({ a: 1 }, ["hasOwnProperty"])).toBeUndefined();
  });

  it("finds an own __proto__ key of a parsed message", () => {
    const parsed = JSON.parse(`{"__proto__":{"x":1},"y":2}`) as unknown;
    expect(dataOf({ p: { "@path": "$.__proto__.x" } }, parsed)).toEqual({ p: 1 });
  });
});

describe("objects", () => {
  it("drops a key whose path finds nothing, keeps null, keeps {} and an object whose keys all vanished", () => {
    const m = {
      event: { "@path": "$.event" },
      missing: { "@path": "$.properties.absent" },
      coupon: { "@path": "$.properties.coupon" },
      nested: { "@path": "$.properties.nested" },
      vanished: { inner: { "@path": "$.nope" }, deeper: { a: { "@path": "$.nope.too" } } },
      literalNull: null,
    };
    expect(JSON.stringify(dataOf(m))).toBe(`{"event":"Order Completed","coupon":null,"nested":{},"vanished":{"deeper":{}},"literalNull":null}`);
  });

  it("keeps the mapping's key order and literals as given", () => {
    const m = { z: 1, a: { "@path": "$.userId" }, m: [1, "two", { three: true }], s: "text", f: false };
    expect(JSON.stringify(dataOf(m))).toBe(`{"z":1,"a":"user_1","m":[1,"two",{"three":true}],"s":"text","f":false}`);
  });

  it("resolves @path in arrays, a missing one as null (as the real one does)", () => {
    const m = {
      list: [{ "@path": "$.userId" }, { "@path": "$.properties.absent" }, "literal", [{ "@path": "$.properties.zero" }], { id: { "@path": "$.nope" } }],
    };
    expect(JSON.stringify(dataOf(m))).toBe(`{"list":["user_1",null,"literal",[0],{}]}`);
  });

  it('a top-level {"@path"} is the path', () => {
    expect(parseMapping(`{"@path": "$.properties"}`, flag).root).toEqual(parseMapping("$.properties", flag).root);
    expect(mappingText(parseMapping(`{"@path": "$.properties"}`, flag))).toBe("$.properties");
  });

  it("an object of literals only is sent as it is, the same frozen value each time", () => {
    const mapping = parseMapping(`{"source": "cli", "n": [1, {"a": null}]}`, flag);
    const one = resolveMapping(mapping, message);
    const two = resolveMapping(mapping, { other: 1 });
    expect(one).toEqual({ kind: "data", data: { source: "cli", n: [1, { a: null }] } });
    expect(two).toEqual(one);
    expect(Object.isFrozen((one as { data: object }).data)).toBe(true);
  });

  it("an empty object is data {} (sent and signed by the real one)", () => {
    expect(resolve("{}")).toEqual({ kind: "data", data: {} });
    expect(resolve({ a: { "@path": "$.absent" } })).toEqual({ kind: "data", data: {} });
  });

  it("does not keep the caller's object: the spec is a copy", () => {
    const value = { a: { "@path": "$.userId" } };
    const mapping = mappingFromValue(value, flag);
    value.a["@path"] = "$.event";
    expect(mapping.spec).toEqual({ a: { "@path": "$.userId" } });
    expect(dataOf(value)).toEqual({ a: "Order Completed" });
    expect(resolveMapping(mapping, message)).toEqual({ kind: "data", data: { a: "user_1" } });
  });
});

describe("what data resolves to", () => {
  it.each([
    ["a path to nothing", "$.properties.absent"],
    ["a path to null", "$.properties.coupon"],
    ["a path to an empty string", "$.properties.empty"],
    ["a path through null", "$.properties.coupon.code"],
  ])("%s: no data", (_name, path) => {
    expect(resolve(path)).toEqual({ kind: "none" });
  });

  it.each([
    ["$.event", "Data must be an object but it was a string."],
    ["$.properties.revenue", "Data must be an object but it was a number."],
    ["$.properties.zero", "Data must be an object but it was a number."],
    ["$.properties.zero.deeper", "Data must be an object but it was a number."],
    ["$.properties.no", "Data must be an object but it was a boolean."],
    ["$.properties.products", "Data must be an object but it was an array."],
  ])("%s: refused with the real one's message", (path, reason) => {
    expect(resolve(path)).toEqual({ kind: "refused", reason });
  });

  it("a message that is not an object is refused as the real mapping kit refuses it", () => {
    expect(resolveMapping(DEFAULT_MAPPING, [1])).toEqual({ kind: "refused", reason: "data must be an object, got array" });
    expect(resolveMapping(DEFAULT_MAPPING, null)).toEqual({ kind: "refused", reason: "data must be an object, got null" });
    expect(resolveMapping(DEFAULT_MAPPING, "x")).toEqual({ kind: "refused", reason: "data must be an object, got string" });
  });
});

describe("refusals", () => {
  const at = (text: string | Record<string, unknown>) => refusal(() => (typeof text === "string" ? parseMapping(text, flag) : mappingFromValue(text, flag)));

  it("is a UsageError naming the flag, or a ConfigError naming the config key", () => {
    const usage = at("nope");
    expect(usage).toBeInstanceOf(UsageError);
    expect(usage.code).toBe("E_USAGE");
    expect(usage.describe()).toMatch(/^--data: "nope" is neither a path starting with "\$\." \(such as "\$\.properties"\) nor a JSON object$/);
    const config = refusal(() => mappingFromValue({ a: { "@if": {} } }, { file: "webhook.json", key: "webhooks[1].data" }));
    expect(config).toBeInstanceOf(ConfigError);
    expect(config.code).toBe("E_CONFIG");
    expect(config.describe()).toMatch(/^webhook\.json: key "webhooks\[1\]\.data": at \/a: the directive @if of the real mapping kit is not supported/);
  });

  it.each(UNSUPPORTED_DIRECTIVES.map((d) => [d]))("refuses %s by name, where it is", (directive) => {
    const error = at({ outer: { list: [1, { [directive]: "x" }] } });
    expect(error.message).toBe(
      `at /outer/list/1: the directive ${directive} of the real mapping kit is not supported; --data takes literals and {"@path": "$.…"} only`,
    );
    expect(at(`{"${directive}": "x"}`).message).toContain(`the directive ${directive} of`);
  });

  it("lists every directive of the real mapping kit but @path", () => {
    expect([...UNSUPPORTED_DIRECTIVES].sort()).toEqual([
      "@arrayPath",
      "@case",
      "@excludeWhenNull",
      "@flatten",
      "@if",
      "@json",
      "@liquid",
      "@literal",
      "@merge",
      "@replace",
      "@template",
      "@transform",
    ]);
  });

  it("refuses an unknown @-key, alone or beside literal keys", () => {
    expect(at({ a: { "@x": 1 } }).message).toMatch(/^at \/a: "@x" is not a supported directive \(a key starting with @ is a directive\)/);
    expect(at({ a: { "@type": "t", b: 2 } }).message).toMatch(/^at \/a: "@type" is not a supported directive/);
  });

  it("refuses _metadata, __segment_internal_directive and __proto__ as keys", () => {
    expect(at({ _metadata: { a: 1 } }).message).toMatch(/^at \/_metadata: the key "_metadata" is not supported/);
    expect(at({ deep: { __segment_internal_directive: 1 } }).message).toMatch(
      /^at \/deep\/__segment_internal_directive: the key "__segment_internal_directive" is not supported/,
    );
    expect(at(`{"a": {"__proto__": {"@path": "$.event"}}}`).message).toMatch(
      /^at \/a\/__proto__: the key "__proto__" is not supported: the real destination silently loses this key/,
    );
    expect(at({ a: { "@path": "$.event", _metadata: {} } }).message).toBe(`at /a: {"@path": …} must be alone in its object, but it has "_metadata" beside it`);
  });

  it("refuses @path mixed with other keys or other directives", () => {
    expect(at({ a: { "@path": "$.event", b: 1 } }).message).toBe(`at /a: {"@path": …} must be alone in its object, but it has "b" beside it`);
    expect(at({ a: { "@template": "{{x}}", "@path": "$.event" } }).message).toContain(`has "@template" beside it`);
    expect(at(`{"@path": "$.event", "x": 1}`).message).toBe(`{"@path": …} must be alone in its object, but it has "x" beside it`);
  });

  it.each([
    [1, "a number (1)"],
    [null, "null"],
    [true, "a boolean (true)"],
    [["$.a"], "a JSON array"],
    [{ "@template": "$.a" }, "a directive"],
    [{ a: 1 }, "an object"],
  ])("refuses @path with %j", (value, what) => {
    expect(at({ a: { "@path": value } }).message).toBe(`at /a: "@path" takes a path string such as "$.properties", not ${what}`);
  });

  it("refuses paths not starting with $. with a hint", () => {
    expect(at("$").message).toBe(`the path "$" does not start with "$.": "$" alone finds nothing in the real destination; the whole message is "$."`);
    expect(at("$properties").message).toBe(`the path "$properties" does not start with "$.": write "$.properties"`);
    expect(at(`$["properties"]`).message).toMatch(/does not start with "\$\."/);
    expect(at({ a: { "@path": "properties.revenue" } }).message).toBe(
      `at /a: the path "properties.revenue" does not start with "$.": write "$.properties.revenue"`,
    );
    expect(at({ a: { "@path": "" } }).message).toBe(`at /a: the path "" does not start with "$.": write "$."`);
    expect(at({ a: { "@path": " $.event" } }).message).toMatch(/does not start with/);
    expect(at("properties.revenue").message).toMatch(/is neither a path starting with "\$\."/);
  });

  it.each([
    ["42", /^a number \(42\) is not a mapping: .*the real destination would refuse every event/],
    ["true", /^a boolean \(true\) is not a mapping/],
    ["null", /^null is not a mapping: .*\(it would send no data for any event\)$/],
    [`"$.properties"`, /^the JSON string "\$\.properties" is not a mapping: .*; write the path without JSON quotes: \$\.properties$/],
    [`[{"@path": "$."}]`, /^a JSON array is not a mapping/],
    ["", /^"" is neither a path/],
  ])("refuses the top-level literal %s", (text, pattern) => {
    expect(at(text).message).toMatch(pattern);
  });

  it("refuses invalid JSON and too deep JSON with the parser's reason", () => {
    expect(at(`{"a": }`).message).toMatch(/^not valid JSON: /);
    expect(at(`{"a":${"[".repeat(600)}${"]".repeat(600)}}`).message).toMatch(/^not valid JSON: nested deeper than 512 levels$/);
  });

  it("refuses values that are not JSON from a config value", () => {
    expect(at({ a: Number.NaN }).message).toBe("at /a: NaN is not a JSON number");
    expect(at({ a: undefined }).message).toBe("at /a: nothing is not a JSON value");
    expect(at({ a: () => 1 }).message).toBe("at /a: a function is not a JSON value");
    expect(refusal(() => mappingFromValue(7, { file: "c.json", key: "data" })).message).toMatch(/^a number \(7\) is not a mapping/);
  });

  it("refuses a mapping value nested deeper than 512 levels without overflowing", () => {
    let deep: Record<string, unknown> = { "@path": "$." };
    for (let i = 0; i < 600; i++) deep = { a: deep };
    expect(at(deep).message).toBe("the mapping is nested deeper than 512 levels");
  });
});

describe("mappingFromValue and mappingText", () => {
  it("takes a path string, JSON text or an object", () => {
    const fromPath: Mapping = mappingFromValue("$.traits", flag);
    expect(mappingText(fromPath)).toBe("$.traits");
    expect(fromPath.spec).toEqual({ "@path": "$.traits" });
    expect(mappingText(mappingFromValue(`{"e": {"@path": "$.event"}}`, flag))).toBe(`{"e":{"@path":"$.event"}}`);
    expect(mappingText(mappingFromValue({ e: { "@path": "$.event" } }, flag))).toBe(`{"e":{"@path":"$.event"}}`);
    expect(mappingText(DEFAULT_MAPPING)).toBe("$.");
  });
});
