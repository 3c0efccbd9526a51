import { Option, type Command } from "commander";
import { MESSAGE_TYPES } from "../../messages/names.js";
import type { Destination, HttpMethod } from "../../config/destination.js";
import type { AliasKeys, MessageType } from "../../messages/schemas.js";
import type { ScriptStep } from "../../receiver/answer-plan.js";
import { SCHEME_NAMES, type SchemeName } from "../../signing/schemes.js";

/**
 * One command-line option, declared once: its flag and help for commander,
 * the kind of value it parses to (parse.ts, loaded only when a command runs, so
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
  /** An environment variable the command reads itself (e.g. the secret resolver); shown in help only. */
  readonly readsEnv?: string;
  readonly kind: ValueKind;
  readonly help: string;
  /** The raw default, shown in help; `false` makes an absent switch false without showing it. */
  readonly default?: string | false;
  /** A default applied later (by the engine or the command), shown in help as `(default: …)`. */
  readonly shownDefault?: string;
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
  /** A duration where a bare `0` means none (`--retry-window 0`: no retries). */
  durationOrZero: number;
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
  /** `classic` or `actions`. */
  destination: Destination;
  /** POST, PUT or PATCH (any case). */
  httpMethod: HttpMethod;
  /** A signature scheme's name (docs/schemes.md). */
  scheme: SchemeName;
  /** Which retry rules: the destination's or Standard Webhooks' schedule (docs/schemes.md#retries). */
  retryRules: RetryRulesName;
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

const ALIAS_KEY_STYLES: readonly AliasKeys[] = ["spec", "camel"];
// Spelled here (as config/destination.ts has them) so that help loads no settings code.
export const DESTINATION_NAMES: readonly Destination[] = ["classic", "actions"];
export const METHOD_NAMES: readonly HttpMethod[] = ["POST", "PUT", "PATCH"];
export type RetryRulesName = "destination" | "standard";
export const RETRY_RULES_NAMES: readonly RetryRulesName[] = ["destination", "standard"];

const REPEATABLE: ReadonlySet<ValueKind> = new Set(["list", "messageTypes"]);

/** The values an option or argument takes when they are a fixed set (for completion). */
const FIXED_VALUES = new WeakMap<object, readonly string[]>();

/** Fixed values by kind: the message types, the alias-key styles, the destinations, methods and signature schemes. */
export function fixedValuesOfKind(kind: ValueKind): readonly string[] | undefined {
  if (kind === "messageType" || kind === "messageTypes") return MESSAGE_TYPES;
  if (kind === "aliasKeys") return ALIAS_KEY_STYLES;
  if (kind === "destination") return DESTINATION_NAMES;
  if (kind === "httpMethod") return METHOD_NAMES;
  if (kind === "scheme") return SCHEME_NAMES;
  if (kind === "retryRules") return RETRY_RULES_NAMES;
  return undefined;
}

/** Marks an option or argument as taking one of `values` (completion offers them). */
export function withFixedValues<T extends object>(target: T, values: readonly string[]): T {
  FIXED_VALUES.set(target, values);
  return target;
}

export function fixedValuesOf(target: object): readonly string[] | undefined {
  return FIXED_VALUES.get(target);
}

/**
 * The one rendering of an option's help: its text, then `(default: 8080)`
 * and `(env: $NAME)`, whoever applies the default or reads the variable.
 */
export function helpOf(spec: OptionSpec): string {
  const shown = typeof spec.default === "string" ? spec.default : spec.shownDefault;
  const env = spec.env ?? spec.readsEnv;
  return [spec.help, shown !== undefined ? `(default: ${shown})` : "", env !== undefined ? `(env: $${env})` : ""].filter(Boolean).join(" ");
}

/** The commander option of one spec. */
function commanderOption(spec: OptionSpec): Option {
  const flags = `${spec.short ? `${spec.short}, ` : ""}${spec.flag}${spec.arg ? ` ${spec.arg}` : ""}`;
  const option = new Option(flags, helpOf(spec));
  if (REPEATABLE.has(spec.kind)) option.argParser(collect);
  // Shown by helpOf; the program's help shows descriptions only (no `(default: "8080")` of commander's).
  if (typeof spec.default === "string") option.default(spec.default);
  if (spec.required) option.makeOptionMandatory();
  if (spec.env !== undefined) option.env(spec.env);
  const values = fixedValuesOfKind(spec.kind);
  return values ? withFixedValues(option, values) : option;
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
