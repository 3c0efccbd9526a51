import type { Command } from "commander";
import { MESSAGE_TYPES } from "../messages/names.js";
import type { CommandContext } from "./io.js";
import { AUDIENCE_SYNC_OPTIONS } from "./options/audience.js";
import { DEMO_OPTIONS, GENERATE_OPTIONS } from "./options/generate.js";
import { LISTEN_OPTIONS } from "./options/listen.js";
import { REPLAY_OPTIONS } from "./options/replay.js";
import { SEND_OPTIONS } from "./options/send.js";
import { SERVE_OPTIONS } from "./options/serve.js";
import { SHELLS } from "./options/completion.js";
import { addOptions, fixedValuesOfKind, withFixedValues, type OptionsOf, type OptionTable } from "./options/spec.js";

/*
 * Registration declares each command's options from its table and nothing
 * else: the command's implementation (and zod, undici, the receiver…) is
 * imported only when that command runs, so `--help` and `--version` start fast.
 * The register functions look alike because each is one declaration (name,
 * description, arguments, examples, table, call): they share `wire`, not values.
 */

type ParseModule = typeof import("./options/parse.js");

/**
 * Declares a command's options from its table and its examples; when it runs,
 * parses them (loading zod then) and hands them, with the command's
 * arguments, to `run`, which imports the implementation.
 */
function wire<T extends OptionTable, A extends unknown[] = []>(
  command: Command,
  context: CommandContext,
  table: T,
  exampleLines: readonly string[],
  run: (options: OptionsOf<T>, args: A, parse: ParseModule) => Promise<number>,
): void {
  addOptions(command, table)
    .addHelpText("after", `\nExamples:\n${exampleLines.map((line) => `  $ ${line}`).join("\n")}`)
    .action(async (...params: unknown[]) => {
      // commander passes the arguments, then the option bag, then the command.
      const parse = await import("./options/parse.js");
      const options = parse.parseTable(table, params[params.length - 2] as Record<string, unknown>);
      context.exitCode = await run(options, params.slice(0, -2) as A, parse);
    });
}

export function registerGenerate(program: Command, context: CommandContext): void {
  const command = program
    .command("generate")
    .description("print example messages of every type (page screen identify track alias group delete) as NDJSON")
    .argument("[types...]", `message types to print (default: all): ${MESSAGE_TYPES.join(", ")}`);
  withFixedValues(command.registeredArguments[0] as object, fixedValuesOfKind("messageTypes") ?? []);
  const lines = ["webhook-cli generate", "webhook-cli generate track identify --user-id u_42 --now 2024-01-01T00:00:00.000Z --seed 7 --pretty"];
  wire<typeof GENERATE_OPTIONS, [string[]]>(command, context, GENERATE_OPTIONS, lines, async (options, [types], parse) => {
    const { generate } = await import("./commands/generate.js");
    return generate({ ...options, types: parse.parseMessageTypes(types) }, context.io);
  });
}

export function registerSend(program: Command, context: CommandContext): void {
  const command = program
    .command("send")
    .description("sign and deliver messages, in order, like the Webhooks destination (a JSON object, a JSON array, NDJSON or concatenated JSON; or --type)")
    .argument("[file]", "messages to send: a file, or - for standard input");
  const lines = [
    "webhook-cli send --type track --url http://127.0.0.1:8080/hook --secret-file .secret",
    "webhook-cli generate | webhook-cli send - --url https://example.com/hook --retry-window 30s --json",
  ];
  wire<typeof SEND_OPTIONS, [string | undefined]>(command, context, SEND_OPTIONS, lines, async (options, [file]) => {
    const { send } = await import("./commands/send.js");
    return send({ ...options, ...(file !== undefined ? { file } : {}) }, context.io);
  });
}

export function registerListen(program: Command, context: CommandContext): void {
  const command = program.command("listen").description("local receiver that verifies X-Signature and checks message shapes");
  const lines = [
    "webhook-cli listen --secret-file .secret",
    "webhook-cli listen --port 0 --secret-file .secret --count 7 --junit report.xml",
    "webhook-cli listen --script 503,503,timeout,200 --record received.ndjson",
    "webhook-cli listen --secret-file .secret --forward-to http://localhost:3000/webhook --ui",
  ];
  wire(command, context, LISTEN_OPTIONS, lines, async (options) => (await import("./commands/listen.js")).listen(options, context.io));
}

export function registerReplay(program: Command, context: CommandContext): void {
  const command = program
    .command("replay")
    .description("re-sign and deliver a recorded NDJSON log (listen --record envelopes, bare messages or dead-letter lines)")
    .argument("<file>", "the NDJSON log: a file, or - for standard input");
  const lines = [
    "webhook-cli replay recording.ndjson --url http://127.0.0.1:8080/hook --secret-file .secret",
    "webhook-cli replay recording.ndjson --url https://staging.example.com/hook --concurrency 32 --dead-letter failed.ndjson --retry-window 1m",
    "webhook-cli replay failed.ndjson --url https://staging.example.com/hook --from-line 1200 --json",
    "webhook-cli replay recording.ndjson --url http://127.0.0.1:3001/hook --results new.ndjson --compare old.ndjson --ignore '$.requestId'",
  ];
  wire<typeof REPLAY_OPTIONS, [string]>(command, context, REPLAY_OPTIONS, lines, async (options, [file]) =>
    (await import("./commands/replay.js")).replayCommand({ ...options, file }, context.io),
  );
}

export function registerServe(program: Command, context: CommandContext): void {
  const command = program
    .command("serve")
    .description("local stand-in for the collection service: takes client batches, stores them durably, forwards them to the webhooks");
  const lines = [
    "webhook-cli serve --write-key wk_test --url http://127.0.0.1:8080/hook --secret-file .secret",
    "webhook-cli serve --config webhook-cli.json --state .webhook-cli --json",
    "curl -u wk_test: -H 'Content-Type: application/json' -d '{\"userId\":\"u1\",\"event\":\"Signed Up\"}' http://127.0.0.1:8088/v1/track",
  ];
  wire(command, context, SERVE_OPTIONS, lines, async (options) => (await import("./commands/serve.js")).serve(options, context.io));
}

export function registerAudience(program: Command, context: CommandContext): void {
  const audience = program.command("audience").description("send an audience's membership changes as identify messages");
  const sync = audience
    .command("sync")
    .description("send an identify for every membership change since the last delivered sync (all members on the first)");
  const lines = [
    "webhook-cli audience sync --name 'VIP-Users 2024' --members vip.txt --state audience-state.json --url http://127.0.0.1:8080/hook --secret-file .secret",
  ];
  wire(sync, context, AUDIENCE_SYNC_OPTIONS, lines, async (options) => (await import("./commands/audience.js")).audienceSync(options, context.io));
  audience.commands.forEach((command) => command.exitOverride());
}

export function registerDemo(program: Command, context: CommandContext): void {
  const command = program.command("demo").description("start a receiver, send every message type signed to it, show the verified results");
  wire(command, context, DEMO_OPTIONS, ["webhook-cli demo", "webhook-cli demo --verbose"], async (options) =>
    (await import("./commands/demo.js")).demo(options, context.io),
  );
}

export function registerCompletion(program: Command, context: CommandContext): void {
  const command = program
    .command("completion")
    .description("print a shell completion script for bash, zsh or fish (install lines in the README)")
    .argument("<shell>", `the shell: ${SHELLS.join(", ")}`);
  withFixedValues(command.registeredArguments[0] as object, SHELLS);
  const lines = ["source <(webhook-cli completion bash)      # in ~/.bashrc", "webhook-cli completion fish > ~/.config/fish/completions/webhook-cli.fish"];
  wire<readonly [], [string]>(command, context, [], lines, async (_, [shell]) => (await import("./commands/completion.js")).completion(shell, program, context.io));
}
