import { describe, expect, it } from "vitest";
import { isDestinationEnabled } from "../../src/serve/integrations.js";

describe("isDestinationEnabled (docs/serve-api.md#routing)", () => {
  it("enables by default: no integrations, empty, or unrelated keys", () => {
    expect(isDestinationEnabled(undefined)).toBe(true);
    expect(isDestinationEnabled({})).toBe(true);
    expect(isDestinationEnabled({ Mixpanel: false })).toBe(true);
    expect(isDestinationEnabled({ All: true })).toBe(true);
  });

  it("All: false disables unless the destination's key enables it", () => {
    expect(isDestinationEnabled({ All: false })).toBe(false);
    expect(isDestinationEnabled({ All: false, Webhooks: true })).toBe(true);
    expect(isDestinationEnabled({ All: false, Webhooks: { anything: 1 } })).toBe(true);
    expect(isDestinationEnabled({ All: false, Mixpanel: true })).toBe(false);
  });

  it("the destination's own false disables, even with All: true", () => {
    expect(isDestinationEnabled({ Webhooks: false })).toBe(false);
    expect(isDestinationEnabled({ All: true, Webhooks: false })).toBe(false);
  });

  it("keys are case sensitive", () => {
    expect(isDestinationEnabled({ webhooks: false })).toBe(true);
    expect(isDestinationEnabled({ All: false, webhooks: true })).toBe(false);
    expect(isDestinationEnabled({ all: false })).toBe(true);
  });

  it("ignores values that are neither booleans nor objects", () => {
    expect(isDestinationEnabled({ All: false, Webhooks: "yes" })).toBe(false);
    expect(isDestinationEnabled({ Webhooks: 0 })).toBe(true);
    expect(isDestinationEnabled([false])).toBe(true);
  });
});
