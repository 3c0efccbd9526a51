import type { Command } from "commander";
import { MESSAGE_TYPES } from "../messages/names.js";
import type { CommandContext } from "./io.js";
import { AUDIENCE_SYNC_OPTIONS } from "./options/audience.js";
import { DEMO_OPTIONS, GENERATE_OPTIONS } from "./options/generate.js";
import { LISTEN_OPTIONS } from "./options/listen.js";
import { REPLAY_OPTIONS } from "./options/replay.js";
import { SEND_OPTIONS } from "./options/send.js";
import { SERVE_OPTIONS } from "./options/serve.js";
import { addOptions } from "./options/spec.js";

/*
 * Registration declares each command's options from its table and nothing
 * else: the command's implementation (and zod, undici, the receiver…) is
 * imported only when that command runs, so `--help` and `--version` start fast.
 */

type Raw = Record<string, unknown>;

const parser = () => import("./options/parse.js");

function examples(...lines: string[]): string {
  return `\nExamples:\n${lines.map((line) => `  $ ${line}`).join("\n")}`;
}

export function registerGenerate(program: Command, context: CommandContext): void {
  const command = program
    .command("generate")
    .description("print example messages of every type (page screen identify track alias group delete) as NDJSON")
    .argument("[types...]", `message types to print (default: all): ${MESSAGE_TYPES.join(", ")}`);
  addOptions(command, GENERATE_OPTIONS)
    .addHelpText("after", examples("webhook-cli generate", "webhook-cli generate track identify --user-id u_42 --now 2024-01-01T00:00:00.000Z --seed 7 --pretty"))
    .action(async (types: string[], raw: Raw) => {
      const [{ parseTable, parseMessageTypes }, { generate }] = await Promise.all([parser(), import("./commands/generate.js")]);
      context.exitCode = await generate({ ...parseTable(GENERATE_OPTIONS, raw), types: parseMessageTypes(types, "[types...]") }, context.io);
    });
}

export function registerSend(program: Command, context: CommandContext): void {
  const command = program
    .command("send")
    .description("sign and deliver messages, in order, like the Webhooks destination (a JSON object, a JSON array, or NDJSON; or --type)")
    .argument("[file]", "messages to send: a file, or - for standard input");
  addOptions(command, SEND_OPTIONS)
    .addHelpText(
      "after",
      examples(
        "webhook-cli send --type track --url http://127.0.0.1:8080/hook --secret s3cret",
        "webhook-cli generate | webhook-cli send - --url https://example.com/hook --retry-window 30s --json",
      ),
    )
    .action(async (file: string | undefined, raw: Raw) => {
      const [{ parseTable }, { send }] = await Promise.all([parser(), import("./commands/send.js")]);
      context.exitCode = await send({ ...parseTable(SEND_OPTIONS, raw), ...(file !== undefined ? { file } : {}) }, context.io);
    });
}

export function registerListen(program: Command, context: CommandContext): void {
  const command = program.command("listen").description("local receiver that verifies X-Signature and checks message shapes");
  addOptions(command, LISTEN_OPTIONS)
    .addHelpText(
      "after",
      examples(
        "webhook-cli listen --secret s3cret",
        "webhook-cli listen --port 0 --secret-file .secret --count 7 --junit report.xml",
        "webhook-cli listen --script 503,503,timeout,200 --record received.ndjson",
      ),
    )
    .action(async (raw: Raw) => {
      const [{ parseTable }, { listen }] = await Promise.all([parser(), import("./commands/listen.js")]);
      context.exitCode = await listen(parseTable(LISTEN_OPTIONS, raw), context.io);
    });
}

export function registerReplay(program: Command, context: CommandContext): void {
  const command = program
    .command("replay")
    .description("re-sign and deliver a recorded NDJSON log (listen --record envelopes, bare messages or dead-letter lines)")
    .argument("<file>", "the NDJSON log: a file, or - for standard input");
  addOptions(command, REPLAY_OPTIONS)
    .addHelpText(
      "after",
      examples(
        "webhook-cli replay recording.ndjson --url http://127.0.0.1:8080/hook --secret s3cret",
        "webhook-cli replay recording.ndjson --url https://staging.example.com/hook --concurrency 32 --dead-letter failed.ndjson --retry-window 1m",
        "webhook-cli replay failed.ndjson --url https://staging.example.com/hook --from-line 1200 --json",
      ),
    )
    .action(async (file: string, raw: Raw) => {
      const [{ parseTable }, { replayCommand }] = await Promise.all([parser(), import("./commands/replay.js")]);
      context.exitCode = await replayCommand({ ...parseTable(REPLAY_OPTIONS, raw), file }, context.io);
    });
}

export function registerServe(program: Command, context: CommandContext): void {
  const command = program
    .command("serve")
    .description("local stand-in for the collection service: takes client batches, stores them durably, forwards them to the webhooks");
  addOptions(command, SERVE_OPTIONS)
    .addHelpText(
      "after",
      examples(
        "webhook-cli serve --write-key wk_test --url http://127.0.0.1:8080/hook --secret s3cret",
        "webhook-cli serve --config webhook-cli.json --state .webhook-cli --json",
        "curl -u wk_test: -H 'Content-Type: application/json' -d '{\"userId\":\"u1\",\"event\":\"Signed Up\"}' http://127.0.0.1:8088/v1/track",
      ),
    )
    .action(async (raw: Raw) => {
      const [{ parseTable }, { serve }] = await Promise.all([parser(), import("./commands/serve.js")]);
      context.exitCode = await serve(parseTable(SERVE_OPTIONS, raw), context.io);
    });
}

export function registerAudience(program: Command, context: CommandContext): void {
  const audience = program.command("audience").description("send an audience's membership changes as identify messages");
  const sync = audience
    .command("sync")
    .description("send an identify for every membership change since the last delivered sync (all members on the first)");
  addOptions(sync, AUDIENCE_SYNC_OPTIONS)
    .addHelpText(
      "after",
      examples("webhook-cli audience sync --name 'VIP-Users 2024' --members vip.txt --state audience-state.json --url http://127.0.0.1:8080/hook --secret s3cret"),
    )
    .action(async (raw: Raw) => {
      const [{ parseTable }, { audienceSync }] = await Promise.all([parser(), import("./commands/audience.js")]);
      context.exitCode = await audienceSync(parseTable(AUDIENCE_SYNC_OPTIONS, raw), context.io);
    });
  audience.commands.forEach((command) => command.exitOverride());
}

export function registerDemo(program: Command, context: CommandContext): void {
  const command = program.command("demo").description("start a receiver, send every message type signed to it, show the verified results");
  addOptions(command, DEMO_OPTIONS)
    .addHelpText("after", examples("webhook-cli demo", "webhook-cli demo --verbose"))
    .action(async (raw: Raw) => {
      const [{ parseTable }, { demo }] = await Promise.all([parser(), import("./commands/demo.js")]);
      context.exitCode = await demo(parseTable(DEMO_OPTIONS, raw), context.io);
    });
}
