import { ConfigError, InputError, UsageError } from "../../errors.js";
import type { DestinationSettings, Target } from "../../config/destination.js";
import type { FunctionDestination } from "../../delivery/function-transport.js";
import type { Egress } from "../../functions/fetch.js";
import type { Clock } from "../../util/clock.js";

/** The destination functions of a run, loaded, and how a setup problem stops it. */
export interface DestinationFunctions {
  /** Each function under its target's URL, for the engine's function transport. */
  functions: ReadonlyMap<string, FunctionDestination>;
  /** The settings with each function's batch size (`onBatch`) set. */
  settings: DestinationSettings;
  /** Aborted at the first setup problem (a package to install): the run stops there, losing nothing. */
  stop: AbortSignal;
  /** Tells the engine's transport of a setup problem. */
  onSetupProblem(problem: string, file: string): void;
  /** The setup problem that stopped the run, as the error to exit with (2). */
  setupError(): ConfigError | undefined;
  close(): Promise<void>;
}

export interface OpenFunctionsOptions {
  cwd: string;
  egress?: Egress | undefined;
  clock?: Clock | undefined;
  /** `--batch-size`, for `--function`'s target. */
  batchSize?: number | undefined;
}

/**
 * Loads the settings' destination functions as the service loads them (docs/functions.md#how-a-function-is-loaded),
 * with the checks `function run` makes: a file that does not parse (its line and column), has
 * no handler or is a source function is an InputError (exit 2) before anything is sent. Each
 * function with `onBatch` gets its batches of 20 (the service's default) unless told otherwise.
 * Undefined when no target is a function.
 */
export async function openDestinationFunctions(settings: DestinationSettings, options: OpenFunctionsOptions): Promise<DestinationFunctions | undefined> {
  if (!settings.targets.some((target) => target.function !== undefined)) return undefined;
  const { loadFunction } = await import("../../functions/runtime.js");
  const functions = new Map<string, FunctionDestination>();
  const close = () => Promise.all([...functions.values()].map(({ fn }) => fn.close())).then(() => undefined);
  try {
    const targets: Target[] = [];
    for (const target of settings.targets) {
      const given = target.function;
      if (given === undefined) {
        targets.push(target);
        continue;
      }
      const fn = loadFunction(given.file, given.base, {
        ...(options.egress ? { egress: options.egress } : {}),
        ...(options.clock ? { clock: options.clock } : {}),
      });
      functions.set(target.url, { fn, settings: given.settings });
      if (fn.kind !== "destination")
        throw new InputError(
          "is a source function (onRequest): deliver to a destination function (onTrack, onIdentify, …); serve --source-function runs a source",
          { file: given.file },
        );
      targets.push(withBatchSize(target, fn.batchSize(target.batchSize ?? options.batchSize)));
    }
    if (targets.some((target) => target.batchSize !== undefined) && targets.some((target) => target.function === undefined)) {
      throw new UsageError(
        "a function's batches (onBatch) go with other functions only, not with URLs: give its webhook no batchSize, or deliver to it alone",
        { field: "batchSize" },
      );
    }
    return stopOnSetup(functions, { ...settings, targets }, close);
  } catch (error) {
    await close();
    throw error;
  }
}

/** The target with its function's batch size (FunctionModule.batchSize); 1 is none. */
function withBatchSize(target: Target, size: number): Target {
  const { batchSize: _, ...rest } = target;
  return size > 1 ? { ...rest, batchSize: size } : rest;
}

function stopOnSetup(functions: ReadonlyMap<string, FunctionDestination>, settings: DestinationSettings, close: () => Promise<void>): DestinationFunctions {
  const stop = new AbortController();
  let problem: { message: string; file: string } | undefined;
  return {
    functions,
    settings,
    stop: stop.signal,
    onSetupProblem(message, file) {
      problem ??= { message, file };
      stop.abort(new Error(message));
    },
    setupError: () => (problem === undefined ? undefined : new ConfigError(problem.message, { file: problem.file })),
    close,
  };
}

/** `--function-egress URL`: each request sent there signed with the destination's secret, when one is set. */
export function functionEgress(value: string | undefined, secret: string | undefined): Egress | undefined {
  if (value === undefined) return undefined;
  return { url: egressUrl(value), ...(secret !== undefined ? { secret } : {}) };
}

/** `--function-egress URL`'s value, checked: an http: or https: URL, else a UsageError naming the flag. */
export function egressUrl(value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`not a URL: ${value}`, { flag: "--function-egress" });
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new UsageError(`not an http: or https: URL: ${value}`, { flag: "--function-egress" });
  return url;
}

/** A delivering command's destination functions, from its flags and settings (undefined when it delivers to URLs only). */
export function commandFunctions(
  options: { function?: string | undefined; egress?: string | undefined; batchSize?: number | undefined },
  settings: DestinationSettings,
  cwd: string,
  clock: Clock | undefined,
): Promise<DestinationFunctions | undefined> {
  return openDestinationFunctions(settings, {
    cwd,
    egress: functionEgress(options.egress, settings.secret),
    clock,
    batchSize: options.function !== undefined ? options.batchSize : undefined,
  });
}

/** What the engine takes of them: the functions for its function transport, and where a setup problem is told. */
export function functionEngineOptions(functions: DestinationFunctions | undefined): {
  functions?: DestinationFunctions["functions"];
  onSetupProblem?: DestinationFunctions["onSetupProblem"];
} {
  return functions === undefined ? {} : { functions: functions.functions, onSetupProblem: functions.onSetupProblem };
}

/** The run's stop: the command's signal, and a function's setup problem. */
export function runSignal(signal: AbortSignal, functions: DestinationFunctions | undefined): AbortSignal {
  return functions === undefined ? signal : AbortSignal.any([signal, functions.stop]);
}
