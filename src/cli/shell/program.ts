import { Command } from "commander";
import { terminalSafe } from "../../safe-text/printable.js";
import { exitReportFor } from "./exit-codes.js";
import type { CliIo, CommandContext } from "../terminal/io.js";
import { COMMANDS } from "./command-table.js";
import type { CommandDeclaration, GroupDeclaration } from "../shared/declaration.js";
import { addOptions, withFixedValues } from "../options/spec.js";
import { VERSION } from "./version.js";

/**
 * Builds commander's program from the command table: declarations only, no command's
 * implementation. `commands`: the ones to declare (by default all of them).
 */
export function buildProgram(context: CommandContext, commands: readonly (CommandDeclaration | GroupDeclaration)[] = COMMANDS): Command {
  const program = new Command("webhook-cli")
    .description("Test, sign, receive and replay analytics webhooks (the Webhooks destination, locally).")
    .version(VERSION, "-V, --version")
    .option("--no-color", "no colours, even on a terminal or with FORCE_COLOR (NO_COLOR does the same)")
    .showHelpAfterError("(run with --help for usage)")
    .showSuggestionAfterError(true)
    // Option descriptions already carry `(default: …)` and `(env: $…)`, rendered once (options/spec.ts).
    .configureHelp({ optionDescription: (option) => option.description })
    .addHelpText(
      "after",
      [
        "",
        "Examples:",
        "  $ webhook-cli demo                                   # see it work: receiver, signed sends, verdicts",
        "  $ webhook-cli listen --secret-file .secret --port 8080   # a verifying receiver",
        "  $ webhook-cli generate | webhook-cli send - --url http://127.0.0.1:8080/hook --secret-file .secret",
        "  $ webhook-cli replay recording.ndjson --url https://staging.example.com/hook --dead-letter failed.ndjson",
        "",
        "Run 'webhook-cli <command> --help' for a command's options.",
      ].join("\n"),
    )
    .exitOverride()
    .hook("preAction", () => {
      // --no-color is global: commands see it as NO_COLOR, which also outranks FORCE_COLOR.
      if (program.opts()["color"] === false) context.io = { ...context.io, env: { ...context.io.env, NO_COLOR: "1", FORCE_COLOR: undefined } };
    })
    .configureOutput({
      writeOut: (text) => context.io.stdout.write(text),
      writeErr: (text) => context.io.stderr.write(text),
    });
  for (const declaration of commands) declare(program, declaration, program, context);
  return program;
}

/**
 * What a command line needs declared: the command it names, alone (declaring all of them is a few
 * milliseconds of every start); every command for the program's help, an unknown name (commander
 * suggests the nearest) and a command that reads the whole program. The program's own options
 * (`--no-color`, `--version`, `--help`) take no value, so the first other word is the command.
 */
function commandsFor(argv: readonly string[]): readonly (CommandDeclaration | GroupDeclaration)[] {
  const name = argv.find((word) => !word.startsWith("-"));
  const named = COMMANDS.find((declaration) => declaration.name === name);
  if (named === undefined || ("wholeProgram" in named && named.wholeProgram === true)) return COMMANDS;
  return [named];
}

/**
 * Declares one command (or group) under `parent`: its arguments, its options
 * from its table, its examples. When it runs, its options are parsed (the
 * parsers load then) and handed, with its arguments, to its `run`.
 */
function declare(parent: Command, declaration: CommandDeclaration | GroupDeclaration, program: Command, context: CommandContext): void {
  const command = parent.command(declaration.name).description(declaration.description).exitOverride();
  if ("subcommands" in declaration) {
    for (const sub of declaration.subcommands) declare(command, sub, program, context);
    return;
  }
  for (const argument of declaration.arguments ?? []) {
    command.argument(argument.name, argument.description);
    if (argument.values) withFixedValues(command.registeredArguments.at(-1) as object, argument.values);
  }
  const examples = declaration.examples.map((line) => `  $ ${line}`).join("\n");
  const limits = declaration.limits ? `\n\nLimits:\n${declaration.limits.map((line) => `  ${line}`).join("\n")}` : "";
  addOptions(command, declaration.options)
    .addHelpText("after", `\nExamples:\n${examples}${limits}`)
    .action(async (...params: unknown[]) => {
      // commander passes the arguments, then the option bag, then the command.
      const { parseTable } = await import("../options/parse.js");
      const options = parseTable(declaration.options, params[params.length - 2] as Record<string, unknown>);
      context.exitCode = await declaration.run(options, params.slice(0, -2), { io: context.io, program });
    });
}

/** Runs one command line; returns the exit status. Never throws, never exits. */
export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  const context: CommandContext = { io, exitCode: 0 };
  const program = buildProgram(context, commandsFor(argv));
  try {
    if (argv.length === 0) {
      // Not asked for: a usage error, like a bare `webhook-cli audience`.
      program.outputHelp({ error: true });
      return 2;
    }
    await program.parseAsync([...argv], { from: "user" });
    return context.exitCode;
  } catch (error) {
    const report = exitReportFor(error);
    if (report.message) io.stderr.write(`${terminalSafe(report.message)}\n`);
    if (report.stack) io.stderr.write(`${report.stack}\n`);
    return report.code;
  }
}
