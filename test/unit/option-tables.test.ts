import { Command } from "commander";
import { describe, expect, it } from "vitest";
import { UsageError, type WebhookCliError } from "../../src/errors.js";
import { AUDIENCE_SYNC_OPTIONS } from "../../src/cli/commands/audience/options.js";
import { FUNCTION_RUN_OPTIONS } from "../../src/cli/commands/function/options.js";
import { DELIVERY_OPTIONS } from "../../src/cli/options/delivery.js";
import { thrownBy } from "../helpers/errors.js";
import { flagOfField } from "../../src/cli/shell/field-flags.js";
import { DEMO_OPTIONS } from "../../src/cli/commands/demo/options.js";
import { GENERATE_OPTIONS } from "../../src/cli/commands/generate/options.js";
import { INSPECT_OPTIONS } from "../../src/cli/commands/inspect/options.js";
import { LISTEN_OPTIONS } from "../../src/cli/commands/listen/options.js";
import { EXPECT_OPTIONS } from "../../src/cli/commands/expect/options.js";
import { DEFAULT_HISTORY_MB, DEFAULT_KEEP } from "../../src/receiver/history/store.js";
import { parseTable } from "../../src/cli/options/parse.js";
import { REPLAY_CONCURRENCY_HELP, REPLAY_OPTIONS } from "../../src/cli/commands/replay/options.js";
import { SEND_OPTIONS } from "../../src/cli/commands/send/options.js";
import { SERVE_CONCURRENCY_HELP, SERVE_OPTIONS } from "../../src/cli/commands/serve/options.js";
import { SIGN_OPTIONS } from "../../src/cli/commands/sign/options.js";
import { VERIFY_OPTIONS } from "../../src/cli/commands/verify/options.js";
import { addOptions, helpOf, type OptionSpec } from "../../src/cli/options/spec.js";
import { DEFAULT_AUDIENCE_CONCURRENCY } from "../../src/audience/audience-sync.js";
import { DEFAULT_DELIVERY_CONCURRENCY as REPLAY_DEFAULT, DEFAULT_DELIVERY_CONCURRENCY as SERVE_DEFAULT } from "../../src/dispatch/dispatcher.js";

const TABLES = {
  SEND_OPTIONS,
  LISTEN_OPTIONS,
  REPLAY_OPTIONS,
  SERVE_OPTIONS,
  AUDIENCE_SYNC_OPTIONS,
  FUNCTION_RUN_OPTIONS,
  GENERATE_OPTIONS,
  DEMO_OPTIONS,
  INSPECT_OPTIONS,
  EXPECT_OPTIONS,
  SIGN_OPTIONS,
  VERIFY_OPTIONS,
};

/** Parses argv with a command declared from `table`, the way the CLI does. */
function parse<T extends readonly OptionSpec[]>(table: T, argv: string[], env: Record<string, string> = {}) {
  const saved = { ...process.env };
  Object.assign(process.env, env);
  try {
    const command = addOptions(new Command("t").exitOverride(), table);
    command.parse(argv, { from: "user" });
    return parseTable(table, command.opts());
  } finally {
    for (const key of Object.keys(env)) if (saved[key] === undefined) delete process.env[key];
  }
}

describe("option tables", () => {
  it.each(Object.entries(TABLES))("%s declares each flag and key once", (_, table) => {
    const flags = table.map((spec) => spec.flag);
    const keys = table.map((spec) => spec.key);
    expect(new Set(flags).size).toBe(flags.length);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it("help states the dispatchers' default concurrency, and why audience sync's differs", () => {
    const helpOfFlag = (table: readonly OptionSpec[], flag: string) => helpOf(table.find((spec) => spec.flag === flag) as OptionSpec);
    expect(helpOfFlag(REPLAY_OPTIONS, "--concurrency")).toContain(`${REPLAY_CONCURRENCY_HELP} (default: ${REPLAY_DEFAULT})`);
    expect(helpOfFlag(SERVE_OPTIONS, "--concurrency")).toContain(`${SERVE_CONCURRENCY_HELP} (default: ${SERVE_DEFAULT})`);
    expect(helpOfFlag(AUDIENCE_SYNC_OPTIONS, "--concurrency")).toMatch(
      new RegExp(`lower than replay's ${REPLAY_DEFAULT} because .+ \\(default: ${DEFAULT_AUDIENCE_CONCURRENCY}\\)$`),
    );
  });

  it("listen's inspector bounds default to the store's own defaults (the table repeats them to stay light)", () => {
    const defaultOf = (flag: string) => (LISTEN_OPTIONS as readonly OptionSpec[]).find((spec) => spec.flag === flag)?.default;
    expect(defaultOf("--ui-keep")).toBe(String(DEFAULT_KEEP));
    expect(defaultOf("--ui-history-mb")).toBe(String(DEFAULT_HISTORY_MB));
    expect(parse(LISTEN_OPTIONS, ["--ui-history-mb", "64"]).uiHistoryMb).toBe(64);
  });

  it("parses to typed values under the options' own keys", () => {
    const options = parse(DELIVERY_OPTIONS, ["--url", "http://a", "--url", "http://b", "--timeout", "250ms", "--retry-window", "2s", "--header", "X-A: 1"]);
    expect(options).toEqual({ urls: ["http://a", "http://b"], headers: ["X-A: 1"], timeoutMs: 250, retryWindowMs: 2000 });
    const listen = parse(LISTEN_OPTIONS, ["--fail-rate", "0.5", "--script", "503,drop", "--delay", "1s"]);
    expect(listen).toMatchObject({ port: 8080, host: "127.0.0.1", respond: 200, failStatus: 503, failRate: 0.5, delayMs: 1000, strict: false, json: false });
    expect(listen.script).toEqual([{ kind: "status", status: 503 }, { kind: "drop" }]);
    expect(parse(REPLAY_OPTIONS, ["--type", "track", "--type", "page"]).types).toEqual(["track", "page"]);
  });

  it("a bad value is a usage error naming its flag", () => {
    const error = (fn: () => unknown): string => {
      const e = thrownBy(fn);
      expect(e).toBeInstanceOf(UsageError);
      return (e as WebhookCliError).describe();
    };
    expect(error(() => parse(REPLAY_OPTIONS, ["--concurrency", "0"]))).toMatch(/^--concurrency: invalid value "0"/);
    expect(error(() => parse(REPLAY_OPTIONS, ["--type", "track", "--type", "trak"]))).toMatch(/^--type: unknown message type "trak"/);
    expect(error(() => parse(SEND_OPTIONS, ["--user-agent", ""]))).toMatch(/^--user-agent: /);
    expect(error(() => parse(LISTEN_OPTIONS, ["--exit-after", "5"]))).toMatch(/^--exit-after: /);
  });

  it("holds a short flag and an environment variable", () => {
    const table = [
      { key: "port", flag: "--port", short: "-p", arg: "<n>", kind: "integer", min: 0, max: 65535, help: "port" },
      { key: "host", flag: "--host", arg: "<addr>", kind: "string", env: "TEST_OPTION_HOST", help: "host" },
    ] as const satisfies readonly OptionSpec[];
    expect(parse(table, ["-p", "9"], { TEST_OPTION_HOST: "0.0.0.0" })).toEqual({ port: 9, host: "0.0.0.0" });
    expect(parse(table, ["--host", "::1"], { TEST_OPTION_HOST: "0.0.0.0" })).toEqual({ host: "::1" });
  });

  it("maps library fields to the flags that fill them", () => {
    expect(flagOfField("urls")).toBe("--url");
    expect(flagOfField("secretFile")).toBe("--secret-file");
    expect(flagOfField("deadLetter")).toBe("--dead-letter");
    expect(flagOfField("tlsCert")).toBe("--tls-cert");
    expect(flagOfField("nothing")).toBeUndefined();
  });

  it("a key names the same flag in every table, so which table field-flags.ts reads first does not matter", () => {
    const flags = new Map<string, Set<string>>();
    for (const table of Object.values(TABLES)) for (const spec of table) flags.set(spec.key, (flags.get(spec.key) ?? new Set()).add(spec.flag));
    expect([...flags].filter(([, seen]) => seen.size > 1)).toEqual([]);
    for (const [key, seen] of flags) expect(flagOfField(key)).toBe([...seen][0]);
  });
});
