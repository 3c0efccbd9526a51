import { describe, expect, it } from "vitest";
import { normalizePath, routeFor, routeRequest } from "../../src/serve/endpoints.js";
import { cpuMs } from "../helpers/cpu-time.js";

describe("routeRequest", () => {
  it("knows the browser's short paths as the six calls", () => {
    const short = { i: "identify", t: "track", p: "page", s: "screen", g: "group", a: "alias" } as const;
    for (const [letter, type] of Object.entries(short)) {
      expect(routeRequest("POST", `/v1/${letter}`)).toEqual({ kind: "route", route: { kind: "single", type, label: `/v1/${letter}` } });
      expect(routeRequest("POST", `/v1/${type}`)).toEqual({ kind: "route", route: { kind: "single", type, label: `/v1/${type}` } });
    }
  });

  it("knows every client's batch paths, delete and metrics", () => {
    expect(routeFor("/v1/batch")).toEqual({ kind: "batch", label: "/v1/batch" });
    expect(routeFor("/v1/import")).toEqual({ kind: "batch", label: "/v1/import" });
    expect(routeFor("/v1/b")).toEqual({ kind: "batch", label: "/v1/b" });
    expect(routeFor("/v1/delete")).toEqual({ kind: "delete", label: "/v1/delete" });
    expect(routeFor("/v1/m")).toEqual({ kind: "metrics", label: "/v1/m" });
    // analytics-java's endpoint() posts to /v1/import/ (trailing slash).
    expect(routeRequest("POST", "/v1/import/")).toEqual({ kind: "route", route: { kind: "batch", label: "/v1/import" } });
  });

  it("serves the settings at the browser's path and at the mobile clients' path without /v1", () => {
    expect(routeRequest("GET", "/v1/projects/wk_123/settings")).toEqual({
      kind: "route",
      route: { kind: "settings", writeKey: "wk_123", label: "/v1/projects/{writeKey}/settings" },
    });
    expect(routeRequest("HEAD", "/v1/projects/wk_123/settings/")).toMatchObject({ kind: "route", route: { writeKey: "wk_123" } });
    expect(routeFor("/projects/wk_123/settings")).toEqual({ kind: "settings", writeKey: "wk_123", label: "/projects/{writeKey}/settings" });
    expect(routeFor("/v1/projects/a%20b/settings")).toMatchObject({ writeKey: "a b" });
    expect(routeFor("/v1/projects/%E0%A4%A/settings")).toMatchObject({ writeKey: "%E0%A4%A" });
    expect(routeFor("/v1/projects//settings")).toBeUndefined();
    expect(routeFor("/v1/projects/settings")).toBeUndefined();
    expect(routeFor("/v1/projects/a/b/settings")).toBeUndefined();
    expect(routeFor("/v1/projects/wk/settingsx")).toBeUndefined();
  });

  it("labels by route, never by the key in the path, so counts stay bounded", () => {
    const labels = new Set(["k1", "k2", "k3"].map((key) => (routeFor(`/v1/projects/${key}/settings`) as { label: string }).label));
    expect([...labels]).toEqual(["/v1/projects/{writeKey}/settings"]);
  });

  it("answers health on GET and HEAD", () => {
    expect(routeRequest("GET", "/health")).toEqual({ kind: "route", route: { kind: "health", label: "/health" } });
    expect(routeRequest("HEAD", "/health/")).toMatchObject({ kind: "route" });
    expect(routeRequest("POST", "/health")).toEqual({ kind: "wrong_method", route: { kind: "health", label: "/health" }, methods: ["GET", "HEAD"] });
  });

  it("makes OPTIONS on any known path a preflight, with that path's methods", () => {
    expect(routeRequest("OPTIONS", "/v1/t")).toEqual({ kind: "preflight", route: { kind: "single", type: "track", label: "/v1/t" }, methods: ["POST"] });
    expect(routeRequest("OPTIONS", "/v1/projects/wk/settings")).toMatchObject({ kind: "preflight", methods: ["GET", "HEAD"] });
    expect(routeRequest("OPTIONS", "/v1/nope")).toEqual({ kind: "not_found", path: "/v1/nope" });
  });

  it("refuses other methods on ingest paths (405 with Allow) and unknown paths (404)", () => {
    expect(routeRequest("GET", "/v1/batch")).toEqual({ kind: "wrong_method", route: { kind: "batch", label: "/v1/batch" }, methods: ["POST"] });
    expect(routeRequest("PUT", "/v1/t")).toMatchObject({ kind: "wrong_method" });
    for (const path of ["/", "", "/v1", "/v1/", "/v1/Track", "/v2/batch", "/v1/x", "/v1/tt", "/v1/batch/x", "/v1/__proto__", "/health/x"]) {
      expect(routeRequest("POST", path)).toMatchObject({ kind: "not_found" });
    }
  });

  it("ignores a query string, repeated slashes and trailing slashes", () => {
    expect(routeFor(normalizePath("/v1/batch?x=1"))).toMatchObject({ kind: "batch" });
    expect(routeRequest("POST", "/v1/track///")).toMatchObject({ kind: "route", route: { type: "track" } });
    // A client given "host:port/v1/" as its API host, or a cdnURL with a trailing slash.
    expect(routeRequest("POST", "/v1//b")).toMatchObject({ kind: "route", route: { kind: "batch" } });
    expect(routeRequest("GET", "//v1/projects/wk/settings")).toMatchObject({ kind: "route", route: { kind: "settings", writeKey: "wk" } });
    expect(normalizePath("/a//b///c////?//")).toBe("/a/b/c");
    expect(normalizePath("/")).toBe("/");
    expect(normalizePath("?a")).toBe("");
  });

  it("takes time linear in the path: request lines full of slashes or near-misses do not spin the CPU", () => {
    // Node takes request lines up to its 16 KB header limit.
    const hostile = [
      `${"/".repeat(16_000)}x`,
      `/v1/${"/".repeat(16_000)}`,
      `/v1/projects/${"a/".repeat(8_000)}settings`,
      `/projects/${"%".repeat(16_000)}/settings`,
      `${"/x/".repeat(5_000)}?${"/".repeat(1000)}`,
    ];
    for (const path of hostile) {
      expect(
        cpuMs(() => {
          for (let i = 0; i < 20; i++) routeRequest("POST", path);
        }),
      ).toBeLessThan(100);
    }
  });
});
