import { Option, type Command } from "commander";
import type { AliasKeys, MessageType } from "../../messages/schemas.js";
import type { ScriptStep } from "../../receiver/faults.js";

/**
 * One command-line option, declared once: its flag and help for commander,
 * the kind of value it parses to (zod, loaded only when a command runs, so
 * `--help` stays light) and the key it has in the command's typed options.
 */
export interface OptionSpec {
  /** The option's name in the command's typed options (`urls` for `--url`). */
  readonly key: string;
  readonly flag: `--${string}`;
  /** The value's placeholder (`<url>`); none for a switch. */
  readonly arg?: `<${string}>`;
  /** A one-letter alias, e.g. `-p`. */
  readonly short?: `-${string}`;
  /** An environment variable commander reads when the flag is absent. */
  readonly env?: string;
  readonly kind: ValueKind;
  readonly help: string;
  /** The raw default, shown in help; `false` makes an absent switch false without showing it. */
  readonly default?: string | false;
  readonly required?: boolean;
  /** Bounds of an `integer` or `number`. */
  readonly min?: number;
  readonly max?: number;
  /** A `string` that may not be empty. */
  readonly nonEmpty?: boolean;
}

/** What each kind of option parses to. */
export interface ValueOfKind {
  string: string;
  switch: boolean;
  /** Repeatable: every value given, in order. */
  list: string[];
  /** Milliseconds, from `250ms`, `5s`, `4h`. */
  duration: number;
  integer: number;
  number: number;
  status: number;
  jsonObject: Record<string, unknown>;
  date: Date;
  messageType: MessageType;
  /** Repeatable message types. */
  messageTypes: MessageType[];
  aliasKeys: AliasKeys;
  script: ScriptStep[];
}
export type ValueKind = keyof ValueOfKind;

export type OptionTable = readonly OptionSpec[];

type AlwaysSet<S> = S extends { default: string | false } ? true : S extends { required: true } ? true : false;

/** The typed options a table parses to: keys with a default or required are always present. */
export type OptionsOf<T extends OptionTable> = Flatten<
  { [S in T[number] as AlwaysSet<S> extends true ? S["key"] : never]: ValueOfKind[S["kind"]] } & {
    [S in T[number] as AlwaysSet<S> extends true ? never : S["key"]]?: ValueOfKind[S["kind"]];
  }
>;
type Flatten<T> = { [K in keyof T]: T[K] };

/** Collects a repeatable option's values. */
function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

const REPEATABLE: ReadonlySet<ValueKind> = new Set(["list", "messageTypes"]);

/** The commander option of one spec. */
export function commanderOption(spec: OptionSpec): Option {
  const flags = `${spec.short ? `${spec.short}, ` : ""}${spec.flag}${spec.arg ? ` ${spec.arg}` : ""}`;
  const option = new Option(flags, spec.help);
  if (REPEATABLE.has(spec.kind)) option.argParser(collect);
  if (typeof spec.default === "string") option.default(spec.default);
  if (spec.required) option.makeOptionMandatory();
  if (spec.env !== undefined) option.env(spec.env);
  return option;
}

/** Declares a table's options on a command, in table order. */
export function addOptions(command: Command, table: OptionTable): Command {
  for (const spec of table) command.addOption(commanderOption(spec));
  return command;
}

/** The same table with some help texts worded for one command. */
export function withHelp<T extends OptionTable>(table: T, help: Readonly<Record<string, string>>): T {
  return table.map((spec) => (help[spec.key] !== undefined ? { ...spec, help: help[spec.key] } : spec)) as unknown as T;
}

/** commander's attribute name of a flag: `--retry-window` → `retryWindow`. */
export function attributeOf(flag: string): string {
  return flag.replace(/^--/, "").replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}
