import { describe, expect, it } from "vitest";
import { publicBaseUrl, settingsAnswer } from "../../src/serve/settings-answer.js";
import { cpuMs } from "../helpers/cpu-time.js";

describe("settingsAnswer", () => {
  it("points the library at serve: the key from the path, host + /v1 without scheme, the protocol, metrics sampled at 0", () => {
    expect(settingsAnswer({ writeKey: "wk_web", baseUrl: "http://127.0.0.1:8088" })).toEqual({
      integrations: { "Segment.io": { apiKey: "wk_web", apiHost: "127.0.0.1:8088/v1", protocol: "http" } },
      metrics: { sampleRate: 0, host: "127.0.0.1:8088/v1" },
    });
  });

  it("says https for a TLS serve, and keeps an IPv6 host bracketed", () => {
    expect(settingsAnswer({ writeKey: "k", baseUrl: "https://localhost:8443" }).integrations["Segment.io"]).toEqual({
      apiKey: "k",
      apiHost: "localhost:8443/v1",
      protocol: "https",
    });
    expect(settingsAnswer({ writeKey: "k", baseUrl: "http://[::1]:8088" }).integrations["Segment.io"].apiHost).toBe("[::1]:8088/v1");
  });

  it("holds one integration only and nothing that makes analytics.js load more (remote plugins, middleware, httpConfig)", () => {
    const body = settingsAnswer({ writeKey: "k", baseUrl: "http://127.0.0.1:1" });
    expect(Object.keys(body)).toEqual(["integrations", "metrics"]);
    expect(Object.keys(body.integrations)).toEqual(["Segment.io"]);
    expect(body.integrations["Segment.io"]).not.toHaveProperty("httpConfig");
  });

  it("turns on analytics.js batching when asked", () => {
    expect(settingsAnswer({ writeKey: "k", baseUrl: "http://127.0.0.1:1", batching: {} }).integrations["Segment.io"].deliveryStrategy).toEqual({
      strategy: "batching",
    });
    expect(
      settingsAnswer({ writeKey: "k", baseUrl: "http://127.0.0.1:1", batching: { size: 5, timeoutMs: 200 } }).integrations["Segment.io"].deliveryStrategy,
    ).toEqual({
      strategy: "batching",
      config: { size: 5, timeout: 200 },
    });
  });

  it("is JSON whatever the key holds", () => {
    const key = 'a"b\\c</script>';
    expect(JSON.parse(JSON.stringify(settingsAnswer({ writeKey: key, baseUrl: "http://127.0.0.1:1" }))).integrations["Segment.io"].apiKey).toBe(key);
  });
});

describe("publicBaseUrl", () => {
  const fallback = "http://127.0.0.1:8088";

  it("is the Host the client dialled, with serve's scheme", () => {
    expect(publicBaseUrl("localhost:8088", false, fallback)).toBe("http://localhost:8088");
    expect(publicBaseUrl("192.168.1.20:8443", true, fallback)).toBe("https://192.168.1.20:8443");
    expect(publicBaseUrl("[::1]:8088", false, fallback)).toBe("http://[::1]:8088");
    expect(publicBaseUrl("Example.TEST", false, fallback)).toBe("http://example.test");
  });

  it("falls back to serve's own URL when Host is missing or no host", () => {
    for (const host of [undefined, "", "a/b", "evil.test/x?", "user@host", "host:port", "host:99999", "[1:2]", "a b", `${"a".repeat(300)}`, "[::1]:8088]"]) {
      expect(publicBaseUrl(host, false, fallback), String(host)).toBe(fallback);
    }
  });

  it("takes time linear in a hostile Host", () => {
    const hosts = [`${"a".repeat(16_000)}:`, `[${":".repeat(16_000)}`, `${"1".repeat(8000)}:${"1".repeat(8000)}x`];
    expect(
      cpuMs(() => {
        for (const host of hosts) publicBaseUrl(host, false, fallback);
      }),
    ).toBeLessThan(50);
  });
});
