import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, UsageError, WebhookCliError } from "../../src/errors.js";
import { parseHeaderFlag } from "../../src/config/checks.js";
import { DEFAULT_USER_AGENT, resolveSettings } from "../../src/config/destination.js";
import { thrownBy } from "../helpers/errors.js";
import { describeError as describeForCli } from "../../src/cli/shell/exit-codes.js";

function tempDir(files: Record<string, string> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), "webhook-cli-settings-"));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

/** The error as the CLI prints it: library errors name fields (`urls`), the CLI their flags (`--url`). */
function describeError(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (error instanceof WebhookCliError) return describeForCli(error);
    throw error;
  }
  throw new Error("expected an error");
}

describe("resolveSettings", () => {
  it("takes --url and --header, with defaults", () => {
    const settings = resolveSettings({ urls: ["http://127.0.0.1:1/a"], headers: ["X-Env: ci"], cwd: tempDir(), env: {} });
    expect(settings).toEqual({
      destination: "classic",
      batchWaitMs: 1000,
      targets: [{ url: "http://127.0.0.1:1/a", headers: { "X-Env": "ci" } }],
      secret: undefined,
      secrets: [],
      userAgent: DEFAULT_USER_AGENT,
      aliasKeys: "spec",
      enabled: true,
      sources: [],
    });
  });

  it("reads ./webhook-cli.json when present; --url replaces its webhooks", () => {
    const config = { sharedSecret: "from-config", webhooks: [{ url: "https://a.example/h", headers: { "X-A": "1" } }], userAgent: "UA/2" };
    const cwd = tempDir({ "webhook-cli.json": JSON.stringify(config) });
    expect(resolveSettings({ cwd, env: {} })).toMatchObject({
      targets: [{ url: "https://a.example/h", headers: { "X-A": "1" } }],
      secret: "from-config",
      userAgent: "UA/2",
    });
    expect(resolveSettings({ cwd, env: {}, urls: ["http://b.example"] }).targets).toEqual([{ url: "http://b.example", headers: {} }]);
  });

  it("orders secrets flag > file > environment > config", () => {
    const cwd = tempDir({ "webhook-cli.json": JSON.stringify({ sharedSecret: "config" }), secret: "file\n" });
    expect(resolveSettings({ cwd, env: {} }).secret).toBe("config");
    expect(resolveSettings({ cwd, env: { WEBHOOK_SECRET: "env" } }).secret).toBe("env");
    expect(resolveSettings({ cwd, env: { WEBHOOK_SECRET: "env" }, secretFile: "secret" }).secret).toBe("file");
    expect(resolveSettings({ cwd, env: { WEBHOOK_SECRET: "env" }, secretFile: "secret", secret: "flag" }).secret).toBe("flag");
  });

  it("refuses an empty secret from any source, naming it with a neutral field", () => {
    const sourceOf = (fn: () => unknown): unknown => {
      const error = thrownBy(fn);
      expect(error).toBeInstanceOf(WebhookCliError);
      expect((error as WebhookCliError).message).toMatch(/empty/);
      return (error as WebhookCliError).source;
    };
    const cwd = tempDir({ empty: "\n", "webhook-cli.json": JSON.stringify({ sharedSecret: "config" }) });
    expect(sourceOf(() => resolveSettings({ cwd, env: {}, secret: "" }))).toEqual({ field: "secret" });
    expect(sourceOf(() => resolveSettings({ cwd, env: {}, secretFile: "empty" }))).toEqual({ field: "secretFile", file: "empty" });
    expect(sourceOf(() => resolveSettings({ cwd, env: { WEBHOOK_SECRET: "" } }))).toEqual({ env: "WEBHOOK_SECRET" });
    const emptyConfig = tempDir({ "webhook-cli.json": JSON.stringify({ sharedSecret: "" }) });
    expect(sourceOf(() => resolveSettings({ cwd: emptyConfig, env: {} }))).toEqual({ file: join(emptyConfig, "webhook-cli.json"), key: "sharedSecret" });
    expect(resolveSettings({ cwd: tempDir(), env: {} }).secret).toBeUndefined();
  });

  it("refuses a sixth URL, naming the flag", () => {
    const urls = Array.from({ length: 6 }, (_, i) => `http://127.0.0.1:${1000 + i}`);
    expect(() => resolveSettings({ urls, cwd: tempDir(), env: {} })).toThrow(UsageError);
    expect(describeError(() => resolveSettings({ urls, cwd: tempDir(), env: {} }))).toBe("--url: 6 URLs given; the destination takes at most 5");
  });

  it.each(["ftp://x.example", "example.com/hook", "mailto:a@b.c"])("refuses the URL %s, naming it", (url) => {
    expect(describeError(() => resolveSettings({ urls: [url], cwd: tempDir(), env: {} }))).toContain(`"${url}"`);
  });

  it("names the file and key of a bad config value", () => {
    const cwd = tempDir({ "c.json": JSON.stringify({ webhooks: [{ url: "http://ok.example" }, { url: "gopher://x" }] }) });
    const message = describeError(() => resolveSettings({ cwd, env: {}, configPath: "c.json" }));
    expect(message).toContain(`${join(cwd, "c.json")}: key "webhooks[1].url"`);
    const cwd2 = tempDir({ "c.json": JSON.stringify({ webhooks: [{ url: "http://ok.example", header: {} }] }) });
    expect(() => resolveSettings({ cwd: cwd2, env: {}, configPath: "c.json" })).toThrow(ConfigError);
    expect(describeError(() => resolveSettings({ cwd: cwd2, env: {}, configPath: "c.json" }))).toContain('key "webhooks[0]"');
  });

  it("names a config file that is not JSON", () => {
    const cwd = tempDir({ "webhook-cli.json": "{ nope" });
    expect(describeError(() => resolveSettings({ cwd, env: {} }))).toMatch(/webhook-cli\.json: not valid JSON/);
  });

  it("requires a target when asked", () => {
    expect(() => resolveSettings({ cwd: tempDir(), env: {}, requireTargets: true })).toThrow(/no webhook URL/);
  });
});

describe("headers", () => {
  it("parses Name: value", () => {
    expect(parseHeaderFlag("X-Team:  payments ")).toEqual(["X-Team", "payments"]);
    expect(parseHeaderFlag("Authorization: Bearer a:b")).toEqual(["Authorization", "Bearer a:b"]);
  });

  it.each([
    "Content-Type: text/plain",
    "x-signature: abc",
    "Host: evil",
    "Transfer-Encoding: chunked",
    "Connection: close",
    "Expect: 100-continue",
    "content-length: 3",
  ])("refuses %s, naming the header", (text) => {
    const name = text.split(":")[0] ?? "";
    expect(describeError(() => parseHeaderFlag(text))).toBe(`--header: header "${name}" cannot be set: webhook-cli sets it itself`);
  });

  it.each([
    ["Bad Name: x", "not a valid HTTP token"],
    ["NoColon", "not of the form"],
    ["X-A: caf\u00e9", null],
    ["X-A: \u2603", "outside Latin-1"],
  ])("%s", (text, problem) => {
    if (problem === null) expect(parseHeaderFlag(text)).toEqual(["X-A", "caf\u00e9"]);
    else expect(describeError(() => parseHeaderFlag(text))).toContain(problem);
  });

  it("refuses CR/LF in a config header value", () => {
    const cwd = tempDir({ "webhook-cli.json": JSON.stringify({ webhooks: [{ url: "http://a.example", headers: { "X-A": "a\r\nX-B: b" } }] }) });
    expect(describeError(() => resolveSettings({ cwd, env: {} }))).toContain('key "webhooks[0].headers.X-A"');
  });

  it("refuses --header without --url", () => {
    expect(describeError(() => resolveSettings({ headers: ["X-A: 1"], cwd: tempDir(), env: {} }))).toMatch(
      /^--header: --header applies to --url targets; give --url too/,
    );
  });

  it("names fields, not flags, to a library caller", () => {
    const error = thrownBy(() => resolveSettings({ headers: ["X-A: 1"], cwd: tempDir(), env: {} }));
    expect((error as WebhookCliError).describe()).toBe("headers: `headers` applies to `urls` targets; give `urls` too, or put headers in the config file");
    expect((error as WebhookCliError).source).toEqual({ field: "headers" });
  });
});
