import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { describeError as describeForCli, exitReportFor } from "../../src/cli/shell/exit-codes.js";
import { ACTIONS_USER_AGENT, DEFAULT_USER_AGENT, resolveSettings } from "../../src/config/destination.js";
import { mappingText } from "../../src/messages/mapping.js";
import { WebhookCliError } from "../../src/errors.js";

function dirWith(config?: unknown): string {
  const dir = mkdtempSync(join(tmpdir(), "webhook-cli-actions-settings-"));
  if (config !== undefined) writeFileSync(join(dir, "webhook-cli.json"), JSON.stringify(config));
  return dir;
}

/** The error as the CLI prints it, with its exit status. */
function refusal(fn: () => unknown): { text: string; exit: number } {
  try {
    fn();
  } catch (error) {
    if (error instanceof WebhookCliError) return { text: describeForCli(error), exit: exitReportFor(error).code };
    throw error;
  }
  throw new Error("expected an error");
}

const URL_A = "http://127.0.0.1:1/a";

describe("the destination setting", () => {
  it("is classic by default, with classic's User-Agent; actions changes the default User-Agent only", () => {
    const classic = resolveSettings({ urls: [URL_A], cwd: dirWith(), env: {} });
    expect(classic).toMatchObject({ destination: "classic", userAgent: DEFAULT_USER_AGENT, batchWaitMs: 1000 });
    const actions = resolveSettings({ urls: [URL_A], destination: "actions", cwd: dirWith(), env: {} });
    expect(actions).toMatchObject({ destination: "actions", userAgent: ACTIONS_USER_AGENT, targets: [{ url: URL_A, headers: {} }] });
    expect(resolveSettings({ urls: [URL_A], destination: "actions", userAgent: "Mine/1", cwd: dirWith(), env: {} }).userAgent).toBe("Mine/1");
  });

  it("comes from the config file's destination; the flag wins", () => {
    const cwd = dirWith({ destination: "actions", webhooks: [{ url: URL_A }] });
    expect(resolveSettings({ cwd, env: {} }).destination).toBe("actions");
    expect(resolveSettings({ cwd, env: {}, destination: "classic" }).destination).toBe("classic");
  });

  it("--method, --data and --batch-size apply to every --url target", () => {
    const settings = resolveSettings({
      urls: [URL_A, "http://127.0.0.1:1/b"],
      destination: "actions",
      method: "PUT",
      data: "$.properties",
      batchSize: 100,
      batchWaitMs: 250,
      cwd: dirWith(),
      env: {},
    });
    expect(settings.batchWaitMs).toBe(250);
    for (const target of settings.targets) {
      expect(target).toMatchObject({ method: "PUT", batchSize: 100 });
      expect(mappingText(target.mapping!)).toBe("$.properties");
    }
  });

  it("in the config file each webhook has its own method, data, batchSize and headers", () => {
    const cwd = dirWith({
      destination: "actions",
      batchWait: "250ms",
      webhooks: [
        { url: URL_A, method: "PATCH", data: { email: { "@path": "$.traits.email" } }, batchSize: 10, headers: { "X-A": "1" } },
        { url: "http://127.0.0.1:1/b", data: "$.properties" },
        { url: "http://127.0.0.1:1/c" },
      ],
    });
    const settings = resolveSettings({ cwd, env: {} });
    expect(settings.batchWaitMs).toBe(250);
    const [a, b, c] = settings.targets;
    expect(a).toMatchObject({ method: "PATCH", batchSize: 10, headers: { "X-A": "1" } });
    expect(mappingText(a!.mapping!)).toBe('{"email":{"@path":"$.traits.email"}}');
    expect(mappingText(b!.mapping!)).toBe("$.properties");
    expect(c).toEqual({ url: "http://127.0.0.1:1/c", headers: {} });
  });
});

describe("settings refused, naming the flag or the config key (exit 2, nothing sent)", () => {
  it("the Actions flags without --destination actions", () => {
    for (const [input, flag] of [
      [{ method: "PUT" }, "--method"],
      [{ data: "$.properties" }, "--data"],
      [{ batchSize: 10 }, "--batch-size"],
      [{ batchWaitMs: 10 }, "--batch-wait"],
    ] as const) {
      expect(refusal(() => resolveSettings({ urls: [URL_A], cwd: dirWith(), env: {}, ...input }))).toEqual({
        text: `${flag}: ${flag} applies to Webhooks (Actions): add --destination actions`,
        exit: 2,
      });
    }
  });

  it("a webhook's Actions keys in a classic config", () => {
    const cwd = dirWith({ webhooks: [{ url: URL_A }, { url: URL_A, batchSize: 5 }] });
    const { text, exit } = refusal(() => resolveSettings({ cwd, env: {} }));
    expect(exit).toBe(2);
    expect(text).toContain('key "webhooks[1].batchSize"');
    expect(text).toContain('"batchSize" applies to Webhooks (Actions): set "destination": "actions"');
  });

  it("a --data outside the supported subset, a bad path, bad JSON", () => {
    const refused = (data: string) => refusal(() => resolveSettings({ urls: [URL_A], destination: "actions", data, cwd: dirWith(), env: {} }));
    expect(refused('{"x": {"@template": "{{userId}}"}}')).toEqual({
      text: '--data: at /x: the directive @template of the real mapping kit is not supported; --data takes literals and {"@path": "$.…"} only',
      exit: 2,
    });
    expect(refused("properties").text).toMatch(/^--data: /);
    expect(refused("$properties").text).toContain('does not start with "$."');
    expect(refused("{not json").text).toMatch(/^--data: not valid JSON/);
  });

  it("a config webhook's data outside the subset names its key", () => {
    const cwd = dirWith({ destination: "actions", webhooks: [{ url: URL_A, data: { a: { "@if": {} } } }] });
    const { text, exit } = refusal(() => resolveSettings({ cwd, env: {} }));
    expect(exit).toBe(2);
    expect(text).toContain('key "webhooks[0].data"');
    expect(text).toContain("@if");
  });

  it("--method, --data, --batch-size with the config's webhooks rather than --url", () => {
    const cwd = dirWith({ destination: "actions", webhooks: [{ url: URL_A }] });
    expect(refusal(() => resolveSettings({ cwd, env: {}, method: "PUT" })).text).toBe(
      '--method: --method applies to --url targets; give --url too, or put "method" in each of the config file\'s webhooks',
    );
  });

  it("a bad method, batch size or batch wait in the config file", () => {
    const bad = (config: unknown) => refusal(() => resolveSettings({ cwd: dirWith(config), env: {} }));
    expect(bad({ destination: "actions", webhooks: [{ url: URL_A, method: "GET" }] }).text).toContain('key "webhooks[0].method"');
    expect(bad({ destination: "actions", webhooks: [{ url: URL_A, batchSize: 4001 }] }).text).toContain('key "webhooks[0].batchSize"');
    expect(bad({ destination: "actions", batchWait: "soon" }).text).toMatch(/key "batchWait".*invalid duration "soon"/);
    expect(bad({ destination: "webhooks" }).text).toContain('key "destination"');
  });
});
