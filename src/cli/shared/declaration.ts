import type { Command } from "commander";
import type { CliIo } from "../terminal/io.js";
import type { OptionsOf, OptionTable } from "../options/spec.js";

/** A positional argument as commander spells it (`<file>`, `[types...]`), with its help. */
export interface ArgumentDeclaration {
  readonly name: string;
  readonly description: string;
  /** The values it takes when they are a fixed set: completion offers them. */
  readonly values?: readonly string[];
}

/** What a command's `run` gets besides its options and arguments. */
export interface RunContext {
  readonly io: CliIo;
  /** The program, with every command declared when the command asked for `wholeProgram` (completion reads the tree). */
  readonly program: Command;
}

/**
 * One command, declared in its own folder (commands/<name>/command.ts): what
 * `--help` and completion show, and `run`, which imports the implementation
 * (./index.js) only when the command runs, so `--help` and `--version` load
 * none of it (nor undici, the receiver…).
 */
export interface CommandDeclaration<T extends OptionTable = OptionTable, A extends unknown[] = unknown[]> {
  readonly name: string;
  readonly description: string;
  readonly arguments?: readonly ArgumentDeclaration[];
  readonly options: T;
  /** Command lines shown under `Examples:` in its help. */
  readonly examples: readonly string[];
  /** Fixed bounds the command keeps, shown under `Limits:` in its help (those with a flag are in its options). */
  readonly limits?: readonly string[];
  /**
   * Its `run` reads every command's declaration from the program (completion). Otherwise a run of
   * this command declares only this command to commander, which is all the parsing needs.
   */
  readonly wholeProgram?: boolean;
  /** The exit status. A method, so a declaration with its own table fits the table of all commands. */
  run(options: OptionsOf<T>, args: A, context: RunContext): Promise<number>;
}

/** A command that only groups others (`audience sync`). */
export interface GroupDeclaration {
  readonly name: string;
  readonly description: string;
  readonly subcommands: readonly CommandDeclaration[];
}
