import { basename, extname } from "node:path";
import { InputError, UsageError } from "../../../errors.js";
import type { DestinationSettings } from "../../../config/destination.js";
import type { AttemptEvent } from "../../../delivery/types.js";
import type { Egress } from "../../../functions/fetch.js";
import { readSettings } from "../../../functions/settings.js";
import type { SourceFunction, SourceFunctionEntry, SourceInvocation } from "../../../serve/source-functions.js";
import { printable } from "../../../safe-text/printable.js";
import { formatDuration } from "../../../util/duration.js";
import { commandFunctions, type DestinationFunctions, functionEgress } from "../../shared/functions.js";
import { detailLines, invocationJson, outcomeMark, verdict } from "../../terminal/invocation-lines.js";
import type { Output } from "../../terminal/output.js";
import type { ServeOptions } from "./index.js";

/** A source function's route name: what `/functions/NAME` may hold without escaping. */
const NAME = /^[A-Za-z0-9_.-]+$/;

/** serve's `--settings` values: the one without a name, and those naming a source function. */
export interface SplitSettings {
  unnamed: string | undefined;
  named: Map<string, string>;
}

/** A `--source-function [NAME=]FILE`: its route name and file. */
export interface SourceFunctionFlag {
  name: string;
  file: string;
}

/** The source functions as given: `[NAME=]FILE` each, names checked and unique. */
export function sourceFunctionFlags(values: readonly string[]): SourceFunctionFlag[] {
  const seen = new Set<string>();
  return values.map((value) => {
    const match = /^([A-Za-z0-9_.-]+)=(.+)$/s.exec(value);
    const file = match ? (match[2] as string) : value;
    const name = match ? (match[1] as string) : basename(file, extname(file));
    if (!NAME.test(name))
      throw new UsageError(`"${name}" cannot name a route (/functions/NAME: letters, digits, . _ -): give NAME=${value}`, { flag: "--source-function" });
    if (seen.has(name)) throw new UsageError(`two source functions named ${name}: give each its own NAME=FILE`, { flag: "--source-function" });
    seen.add(name);
    return { name, file };
  });
}

/** Sorts `--settings` values: `NAME=…` where NAME is a source function's, else the one for every other function. */
export function splitSettings(values: readonly string[], names: ReadonlySet<string>): SplitSettings {
  const named = new Map<string, string>();
  let unnamed: string | undefined;
  for (const value of values) {
    const match = /^([A-Za-z0-9_.-]+)=(.*)$/s.exec(value);
    if (match && names.has(match[1] as string)) {
      named.set(match[1] as string, match[2] as string);
      continue;
    }
    if (match && !value.trimStart().startsWith("{"))
      throw new UsageError(`no source function named ${match[1]} (--source-function ${match[1]}=FILE)`, { flag: "--settings" });
    if (unnamed !== undefined)
      throw new UsageError("one --settings without NAME= (it is the destination function's, and any source function's without its own)", {
        flag: "--settings",
      });
    unnamed = value;
  }
  return { unnamed, named };
}

/** serve's source functions as its flags give them (parsed once): each `--source-function`, and `--settings` split between the functions. */
export interface GivenSourceFunctions {
  given: readonly SourceFunctionFlag[];
  split: SplitSettings;
}

/** Loads the source functions (a destination function given here is refused, named), each with its settings. */
async function openSourceFunctions(
  given: readonly SourceFunctionFlag[],
  settings: SplitSettings,
  run: { cwd: string; egress: Egress | undefined },
): Promise<SourceFunctionEntry[]> {
  if (given.length === 0) return [];
  const { loadFunction } = await import("../../../functions/runtime.js");
  const loaded: SourceFunction[] = [];
  try {
    return given.map(({ name, file }) => {
      const fn = loadFunction(file, run.cwd, run.egress ? { egress: run.egress } : {});
      loaded.push(fn);
      if (fn.kind !== "source")
        throw new InputError("is a destination function: --source-function takes a source function (onRequest); --function takes this one", { file });
      const value = settings.named.get(name) ?? settings.unnamed;
      return { name, fn, settings: value === undefined ? {} : readSettings(value, run.cwd, "--settings") };
    });
  } catch (error) {
    await Promise.all(loaded.map((fn) => fn.close()));
    throw error;
  }
}

/** serve's functions: the destination ones among its targets, and its source functions. */
export interface ServeFunctions {
  destination: DestinationFunctions | undefined;
  sources: SourceFunctionEntry[];
  close(): Promise<void>;
}

/** Loads serve's destination functions (its targets') and its source functions; a bad one is an InputError (exit 2). */
export async function openServeFunctions(
  options: ServeOptions,
  settings: DestinationSettings,
  cwd: string,
  sources: GivenSourceFunctions,
): Promise<ServeFunctions> {
  const { given, split } = sources;
  if (options.egress !== undefined && given.length === 0 && !settings.targets.some((target) => target.function !== undefined)) {
    throw new UsageError("--function-egress applies to the requests functions make: give --function or --source-function", { flag: "--function-egress" });
  }
  const destination = await commandFunctions(options, settings, cwd, undefined);
  try {
    const sources = await openSourceFunctions(given, split, { cwd, egress: functionEgress(options.egress, settings.secret) });
    const close = async (): Promise<void> => {
      await Promise.all([destination?.close(), ...sources.map(({ fn }) => fn.close())]);
    };
    return { destination, sources, close };
  } catch (error) {
    await destination?.close();
    throw error;
  }
}

/** A destination function's attempt under serve: its line and what it did (`--json`: an `invocation` event). */
export function showFunctionAttempt(output: Output, event: AttemptEvent): void {
  const record = event.invocation;
  if (record === undefined) return;
  output.event("invocation", { function: event.url, attempt: event.attempt, retryInMs: event.retryInMs ?? null, ...invocationJson(record) });
  const mark = outcomeMark(output.color, record.outcome);
  const next = event.retryInMs !== undefined ? `; retrying in ${formatDuration(event.retryInMs)}` : "";
  const outcome = record.outcome;
  // A package to install stops serve: the message stays queued, it is not the event's failure.
  const what = outcome.kind === "failed" && outcome.setup ? `a package to install: ${printable(outcome.reason)}` : verdict(outcome, "delivered");
  output.line(`${mark} ${event.url} ${record.handler ?? "(no handler)"}: ${what} (${formatDuration(record.ms)})${next}`);
  for (const line of detailLines(record)) output.line(`    ${line}`);
}

/** A source function's invocation under serve: the webhook's line, the answer, what it did. */
export function showSourceInvocation(output: Output, invocation: SourceInvocation): void {
  const { record, answer, name } = invocation;
  output.event("function", { name, status: answer.status, ...invocationJson(record) });
  const c = output.color;
  const mark = record.outcome.kind === "delivered" && answer.status === 200 ? c.green("✓") : c.red("✗");
  const emitted = `${record.messages.length} message${record.messages.length === 1 ? "" : "s"}, ${record.objects.length} object${record.objects.length === 1 ? "" : "s"}`;
  const what = answer.status === 200 ? `accepted: ${emitted}` : printable(String(answer.body["message"] ?? verdict(record.outcome, "accepted")));
  output.line(
    `${mark} POST /functions/${printable(name)} → ${record.handler ?? "onRequest"} ${what}, answered ${answer.status} (${formatDuration(record.ms)})`,
  );
  for (const line of detailLines(record)) output.line(`    ${line}`);
}
