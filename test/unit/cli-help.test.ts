import type { Command } from "commander";
import { describe, expect, it } from "vitest";
import { buildProgram } from "../../src/cli/shell/program.js";
import { AUDIENCE_SYNC_OPTIONS } from "../../src/cli/commands/audience/options.js";
import { FUNCTION_RUN_OPTIONS } from "../../src/cli/commands/function/options.js";
import { DELIVERY_OPTIONS } from "../../src/cli/options/delivery.js";
import { DEMO_OPTIONS } from "../../src/cli/commands/demo/options.js";
import { GENERATE_OPTIONS } from "../../src/cli/commands/generate/options.js";
import { INSPECT_OPTIONS } from "../../src/cli/commands/inspect/options.js";
import { LISTEN_OPTIONS } from "../../src/cli/commands/listen/options.js";
import { EXPECT_OPTIONS } from "../../src/cli/commands/expect/options.js";
import { REPLAY_OPTIONS } from "../../src/cli/commands/replay/options.js";
import { SEND_OPTIONS } from "../../src/cli/commands/send/options.js";
import { SERVE_OPTIONS } from "../../src/cli/commands/serve/options.js";
import { SIGN_OPTIONS } from "../../src/cli/commands/sign/options.js";
import { VERIFY_OPTIONS } from "../../src/cli/commands/verify/options.js";
import type { OptionSpec } from "../../src/cli/options/spec.js";
import { colorLevel, createOutput, resetsBeforeNewlines } from "../../src/cli/terminal/output.js";
import { DEFAULT_RETRY_WINDOW_MS, DEFAULT_TIMEOUT_MS } from "../../src/delivery/types.js";
import { DEFAULT_USER_AGENT } from "../../src/config/destination.js";
import { SECRET_ENV as RESOLVER_SECRET_ENV } from "../../src/config/secret.js";
import { seededRandom } from "../../src/util/clock.js";
import { parseDuration } from "../../src/util/duration.js";
import { DEFAULT_MAX_CONNECTIONS, DEFAULT_SERVE_MAX_CONNECTIONS } from "../../src/http/limits.js";
import { closestName } from "../../src/util/suggest.js";
import { cpuMs } from "../helpers/cpu-time.js";
import { fakeIo, runInProcess } from "../helpers/run-cli.js";
import { MAX_BODY_BYTES } from "../../src/receiver/server.js";
import { MAX_RELAYED_BODY } from "../../src/receiver/forward.js";
import { DEFAULT_BODY_BUDGET_BYTES } from "../../src/http/limits.js";
import { MAX_PRETTY_CHARS } from "../../src/json/pretty.js";
import { DEFAULT_MAX_STREAMS } from "../../src/inspector/events.js";

// Each command's table (completion has none); a command missing here fails "every command that runs has its table".
const TABLE_OF: Record<string, readonly OptionSpec[]> = {
  generate: GENERATE_OPTIONS,
  send: SEND_OPTIONS,
  listen: LISTEN_OPTIONS,
  inspect: INSPECT_OPTIONS,
  expect: EXPECT_OPTIONS,
  replay: REPLAY_OPTIONS,
  serve: SERVE_OPTIONS,
  "audience sync": AUDIENCE_SYNC_OPTIONS,
  sign: SIGN_OPTIONS,
  verify: VERIFY_OPTIONS,
  "function run": FUNCTION_RUN_OPTIONS,
  demo: DEMO_OPTIONS,
  completion: [],
};

/** Every command of the real program with its path, the program first. */
function commandsOf(program: Command): { path: string; command: Command; ancestors: Command[] }[] {
  const found: { path: string; command: Command; ancestors: Command[] }[] = [];
  const visit = (command: Command, path: string, ancestors: Command[]) => {
    found.push({ path, command, ancestors });
    for (const sub of command.commands) visit(sub, `${path} ${sub.name()}`.trim(), [...ancestors, command]);
  };
  visit(program, "", []);
  return found;
}

const program = buildProgram({ io: fakeIo(), exitCode: 0 });

describe("flags across every command", () => {
  it.each(commandsOf(program).map(({ path, command, ancestors }) => [path || "webhook-cli", command, ancestors] as const))(
    "%s: no flag or short flag is declared twice (its own, the global ones, -h)",
    (_, command, ancestors) => {
      const flags = [command, ...ancestors].flatMap((c) => c.options.flatMap((o) => [o.short, o.long].filter((f): f is string => f !== undefined)));
      flags.push("-h", "--help");
      expect(flags.length).toBeGreaterThan(2);
      expect(flags.filter((flag, i) => flags.indexOf(flag) !== i)).toEqual([]);
    },
  );

  it("the common options have their short flags", () => {
    const shortOf = (path: string, long: string) =>
      commandsOf(program)
        .find((c) => c.path === path)
        ?.command.options.find((o) => o.long === long)?.short;
    for (const path of ["send", "replay", "audience sync", "serve"]) {
      expect(shortOf(path, "--url")).toBe("-u");
      expect(shortOf(path, "--secret")).toBe("-s");
    }
    expect(shortOf("listen", "--secret")).toBe("-s");
    expect(shortOf("listen", "--port")).toBe("-p");
    expect(shortOf("serve", "--port")).toBe("-p");
    for (const path of ["replay", "serve", "audience sync"]) expect(shortOf(path, "--concurrency")).toBe("-c");
    expect(shortOf("generate", "--out")).toBe("-o");
  });
});

describe("help is generated from the option tables", () => {
  const leaves = commandsOf(program).filter(({ path, command }) => path !== "" && command.commands.length === 0);

  it("every command that runs has its table", () => {
    expect(leaves.map(({ path }) => path).sort()).toEqual(Object.keys(TABLE_OF).sort());
  });

  it.each(leaves.map(({ path, command }) => [path, command] as const))(
    "%s: its options are its table's rows, in order, with the table's help",
    (path, command) => {
      const table = TABLE_OF[path] as readonly OptionSpec[];
      expect(command.options.map((option) => option.long)).toEqual(table.map((spec) => spec.flag));
      expect(command.options.map((option) => option.short)).toEqual(table.map((spec) => spec.short));
      for (const [i, option] of command.options.entries()) {
        expect(option.description, option.long).toMatch(new RegExp(`^${escapeRegExp((table[i] as OptionSpec).help)}`));
      }
      const help = command.helpInformation().replace(/\s+/g, " ");
      for (const spec of table) expect(help, `${path} --help`).toContain(spec.flag);
    },
  );
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

describe("one rendering of defaults and environment variables", () => {
  it.each(Object.entries(TABLE_OF))("%s: help texts leave defaults and variables to the table's fields", (_, table) => {
    for (const spec of table) {
      expect(spec.help, spec.flag).not.toMatch(/\(default|default:|WEBHOOK_SECRET/);
    }
  });

  it("every command's help shows `(default: value)` and `(env: $NAME)`, never commander's quoted default", () => {
    let defaults = 0;
    for (const { path, command } of commandsOf(program)) {
      const help = command.helpInformation().replace(/\s+/g, " ");
      expect(help, path).not.toMatch(/\(default: "|\(default [^(]|default "|env: [A-Z]/);
      defaults += help.match(/\(default: [^")]+\)/g)?.length ?? 0;
      if (/WEBHOOK_SECRET/.test(help)) expect(help.match(/.?WEBHOOK_SECRET/g)?.every((m) => m.startsWith("$"))).toBe(true);
    }
    // port, host, respond, fail-status, state, timeout, retry window, user agent, config, concurrency…
    expect(defaults).toBeGreaterThan(20);
  });

  it("the shown defaults are the ones applied", () => {
    const shown = (flag: string) => DELIVERY_OPTIONS.find((spec) => spec.flag === flag) as OptionSpec;
    expect(parseDuration(shown("--timeout").shownDefault as string)).toBe(DEFAULT_TIMEOUT_MS);
    expect(parseDuration(shown("--retry-window").shownDefault as string)).toBe(DEFAULT_RETRY_WINDOW_MS);
    expect(shown("--user-agent").shownDefault).toBe(DEFAULT_USER_AGENT);
    expect(shown("--secret").readsEnv).toBe(RESOLVER_SECRET_ENV);
    const maxConnections = (table: readonly OptionSpec[]) => table.find((spec) => spec.flag === "--max-connections")?.shownDefault;
    expect(maxConnections(LISTEN_OPTIONS)).toBe(String(DEFAULT_MAX_CONNECTIONS));
    expect(maxConnections(SERVE_OPTIONS)).toBe(String(DEFAULT_SERVE_MAX_CONNECTIONS));
  });
});

describe("listen --help", () => {
  it("shows the fixed bounds under Limits:, with the code's figures", async () => {
    const { code, stdout } = await runInProcess(["listen", "--help"]);
    expect(code).toBe(0);
    const limits = stdout.slice(stdout.indexOf("\nLimits:\n"));
    const mib = (bytes: number) => `${bytes / 1024 / 1024} MiB`;
    expect(limits).toContain(`a request body: ${mib(MAX_BODY_BYTES)} (413)`);
    expect(limits).toContain(`--forward-to: ${mib(MAX_RELAYED_BODY)} (502)`);
    expect(limits).toContain(`bodies in memory at once: ${mib(DEFAULT_BODY_BUDGET_BYTES)}`);
    expect(limits).toContain(`under ${mib(MAX_PRETTY_CHARS)} of pretty text`);
    expect(limits).toContain(`inspector pages: ${DEFAULT_MAX_STREAMS} at once`);
    expect(limits).toContain("under 640 MB");
  });
});

describe("did you mean", () => {
  it("names the closest candidate for a typo, nothing for an unrelated word or an exact match", () => {
    expect(closestName("trak", ["page", "screen", "identify", "track", "alias", "group", "delete"])).toBe("track");
    expect(closestName("indentify", ["page", "identify", "track"])).toBe("identify");
    expect(closestName("replya", ["send", "replay", "serve"])).toBe("replay");
    expect(closestName("bsh", ["bash", "zsh", "fish"])).toBe("bash");
    expect(closestName("xyz", ["page", "track"])).toBeUndefined();
    expect(closestName("page", ["page", "track"])).toBeUndefined();
  });
});

describe("colour", () => {
  it("FORCE_COLOR forces it off a terminal, NO_COLOR turns it off, FORCE_COLOR=0 too", () => {
    expect(colorLevel({}, true)).toBe(1);
    expect(colorLevel({}, false)).toBe(0);
    expect(colorLevel({ FORCE_COLOR: "1" }, false)).toBe(1);
    expect(colorLevel({ FORCE_COLOR: "" }, false)).toBe(1);
    expect(colorLevel({ NO_COLOR: "1" }, true)).toBe(0);
    expect(colorLevel({ FORCE_COLOR: "0" }, true)).toBe(0);
    expect(colorLevel({ FORCE_COLOR: "false" }, true)).toBe(0);
    expect(colorLevel({ NO_COLOR: "" }, true)).toBe(1);
  });

  it("a coloured text ending in a newline leaves no reset code after the newline", async () => {
    const io = fakeIo({ env: { FORCE_COLOR: "1" } });
    const output = createOutput(io);
    output.line(output.color.red("bad\n"));
    output.line(output.color.red(output.color.bold("two\nlines\n")));
    await new Promise((resolve) => setImmediate(resolve));
    expect(io.out()).toContain("\x1b[31mbad\x1b[39m\n");
    expect(io.out()).not.toMatch(/\n\x1b\[(?:22|39|0)m/);
    expect(resetsBeforeNewlines("\x1b[31mx\x1b[39m\n\x1b[31m\x1b[39m")).toBe("\x1b[31mx\x1b[39m\n");
  });

  it("drops nested empty spans as the repeated removal of adjacent pairs did", () => {
    const EMPTY_SPAN = /\x1b\[(?:[1-9]|[34][0-7]|9[0-7]|10[0-7])m\x1b\[(?:2[2-9]|39|49|0)m/g;
    const repeatedRemoval = (text: string): string => {
      let tidy = text;
      for (let previous = ""; previous !== tidy; ) [previous, tidy] = [tidy, tidy.replace(EMPTY_SPAN, "")];
      return tidy;
    };
    const parts = ["\x1b[31m", "\x1b[39m", "\x1b[1m", "\x1b[22m", "\x1b[0m", "\x1b[38m", "\x1b[107m", "x", "\n", "\x1b["];
    const random = seededRandom(7);
    for (let i = 0; i < 5_000; i++) {
      let text = "";
      for (let j = Math.floor(random() * 16); j > 0; j--) text += parts[Math.floor(random() * parts.length)];
      expect(resetsBeforeNewlines(text), JSON.stringify(text)).toBe(repeatedRemoval(text));
    }
    expect(resetsBeforeNewlines("a\x1b[1m\x1b[31m\x1b[39m\x1b[22mb")).toBe("ab");
  });

  it("takes time linear in the text, however deeply a sender nests empty spans", () => {
    // A received userId is printed as sent: 10,000 nested pairs took the repeated removal over a second.
    const nested = (pairs: number): string => `#1 ${"\x1b[31m".repeat(pairs)}${"\x1b[39m".repeat(pairs)}`;
    expect(cpuMs(() => expect(resetsBeforeNewlines(nested(10_000))).toBe("#1 "))).toBeLessThan(100);
    expect(cpuMs(() => expect(resetsBeforeNewlines(nested(100_000))).toBe("#1 "))).toBeLessThan(1_000);
  });
});
