import type { Command } from "commander";
import { fixedValuesOf } from "../../options/spec.js";

/**
 * What a shell needs to complete one command, read from the commander tree
 * that `buildProgram` declares: the completion scripts are generated from the
 * command table itself, so a new flag or command completes without more work.
 */
export interface CompletionCommand {
  /** Words after the program name: "" for the program, "audience sync". */
  readonly path: string;
  readonly subcommands: readonly string[];
  readonly options: readonly CompletionOption[];
  /** The positional argument's values when they are a fixed set. */
  readonly argValues: readonly string[] | undefined;
  /** Takes a positional argument that is not a fixed set (a file). */
  readonly takesFile: boolean;
}

export interface CompletionOption {
  readonly long: string;
  readonly short: string | undefined;
  readonly description: string;
  readonly takesValue: boolean;
  readonly values: readonly string[] | undefined;
}

const HELP_OPTION: CompletionOption = { long: "--help", short: "-h", description: "show help", takesValue: false, values: undefined };

/** Every command of the tree, the program first, parents before children. */
export function completionModel(program: Command): CompletionCommand[] {
  const found: CompletionCommand[] = [];
  const visit = (command: Command, path: string): void => {
    const args = command.registeredArguments;
    const argValues = args.map((arg) => fixedValuesOf(arg)).find((values) => values !== undefined);
    const subcommands = command.commands.filter((sub) => sub.name() !== "help");
    found.push({
      path,
      subcommands: subcommands.map((sub) => sub.name()),
      options: [...command.options.filter((option) => !option.hidden && option.long !== undefined).map(toCompletionOption), HELP_OPTION],
      argValues,
      takesFile: args.length > 0 && argValues === undefined,
    });
    for (const sub of subcommands) visit(sub, path === "" ? sub.name() : `${path} ${sub.name()}`);
  };
  visit(program, "");
  return found;
}

function toCompletionOption(option: Command["options"][number]): CompletionOption {
  return {
    long: option.long as string,
    short: option.short,
    description: option.description,
    takesValue: option.required || option.optional,
    values: fixedValuesOf(option),
  };
}

/** Every flag spelling of an option: `-u`, `--url`. */
export function spellings(option: CompletionOption): string[] {
  return option.short !== undefined ? [option.short, option.long] : [option.long];
}

/** The command paths a word leads to from another: `audience` + `sync` → `audience sync`. */
function transitions(commands: readonly CompletionCommand[]): { from: string; word: string; to: string }[] {
  return commands.flatMap((command) =>
    command.subcommands.map((word) => ({ from: command.path, word, to: command.path === "" ? word : `${command.path} ${word}` })),
  );
}

/** A double-quoted bash/zsh word (command names, flags and fixed values hold no `"`, `$`, backquote or backslash). */
export function quote(text: string): string {
  return `"${text}"`;
}

/** How a bash-like shell offers words and file names in a `case` branch (the rest of its script is its own). */
export interface CaseAnswers {
  words(words: readonly string[]): string;
  files: string;
}

/** The `case "${cmdpath}/${prev}"` block: after a flag that takes a value, its fixed values, else file names. */
export function valueCaseBlock(commands: readonly CompletionCommand[], answers: CaseAnswers): string[] {
  return ['  case "${cmdpath}/${prev}" in', ...commands.flatMap((command) => valueCases(command, answers)), "  esac"];
}

/** The `case "$cmdpath"` block for a word that is not a flag. */
export function positionalCaseBlock(commands: readonly CompletionCommand[], answers: CaseAnswers): string[] {
  return ['  case "$cmdpath" in', ...commands.map((command) => positionalCase(command, answers)), "  esac"];
}

function valueCases(command: CompletionCommand, answers: CaseAnswers): string[] {
  const lines: string[] = [];
  const files: string[] = [];
  for (const option of command.options.filter((o) => o.takesValue)) {
    const patterns = spellings(option).map((flag) => quote(`${command.path}/${flag}`));
    if (option.values) lines.push(`    ${patterns.join("|")}) ${answers.words(option.values)}; return ;;`);
    else files.push(...patterns);
  }
  if (files.length > 0) lines.push(`    ${files.join("|")}) ${answers.files}; return ;;`);
  return lines;
}

/** One `case "$cmdpath"` branch: subcommands or fixed values, a file, else the flags. */
function positionalCase(command: CompletionCommand, answers: CaseAnswers): string {
  const words = command.subcommands.length > 0 ? command.subcommands : command.argValues;
  if (words) return `    ${quote(command.path)}) ${answers.words(words)} ;;`;
  if (command.takesFile) return `    ${quote(command.path)}) ${answers.files} ;;`;
  return `    ${quote(command.path)}) ${answers.words(command.options.map((o) => o.long))} ;;`;
}

/** The loop over the words before the cursor that finds the command path (bash and zsh differ only in where words live). */
export function commandPathLoop(commands: readonly CompletionCommand[], words: { first: number; end: string; word: string }): string[] {
  return [
    `  for (( i = ${words.first}; i < ${words.end}; i++ )); do`,
    `    word="${words.word}"`,
    '    case "${cmdpath}/${word}" in',
    ...transitions(commands).map((t) => `      ${quote(`${t.from}/${t.word}`)}) cmdpath=${quote(t.to)} ;;`),
    "    esac",
    "  done",
  ];
}
