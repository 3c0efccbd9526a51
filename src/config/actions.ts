import { ConfigError, UsageError, WebhookCliError } from "../errors.js";
import { mappingFromValue, parseMapping } from "../messages/mapping.js";
import { parseDuration } from "../util/duration.js";
import type { Destination, HttpMethod, Target } from "./destination.js";
import type { ConfigFile } from "./file.js";

/**
 * The Webhooks (Actions) part of the destination settings (docs/actions.md#settings): which
 * destination, and each webhook's method, `data` mapping and batch size. Flags apply to the
 * `--url` targets, as `--header` does; in the config file each webhook has its own.
 */

/** A partial batch waits this long for more events in `serve` (docs/actions.md#batches). */
export const DEFAULT_BATCH_WAIT_MS = 1_000;
/** The real destination's docs allow batches of up to 4000 events. */
export const MAX_BATCH_SIZE = 4000;

export interface ActionsInput {
  destination?: Destination | undefined;
  method?: HttpMethod | undefined;
  /** MAPPING text: a path or a JSON object (docs/actions.md#data-mappings). */
  data?: string | undefined;
  batchSize?: number | undefined;
  batchWaitMs?: number | undefined;
}

const PER_TARGET = ["method", "data", "batchSize"] as const;
type WebhookEntry = NonNullable<ConfigFile["webhooks"]>[number];

/** The destination and the batch wait; Actions settings under a classic destination are refused, naming them. */
export function resolveDestination(input: ActionsInput, config: ConfigFile, file: string): { destination: Destination; batchWaitMs: number } {
  const destination = input.destination ?? config.destination ?? "classic";
  if (destination === "classic") {
    for (const field of [...PER_TARGET, "batchWaitMs"] as const) {
      if (input[field] !== undefined) throw new UsageError(`\`${field}\` applies to Webhooks (Actions): add \`destination\` actions`, { field });
    }
    const classicKey = (key: string) =>
      new ConfigError(`"${key.replace(/.*\./, "")}" applies to Webhooks (Actions): set "destination": "actions" (or pass --destination actions)`, {
        file,
        key,
      });
    if (config.batchWait !== undefined) throw classicKey("batchWait");
    for (const [index, hook] of (config.webhooks ?? []).entries()) {
      // A function's batch size is its onBatch's (docs/functions.md#batches).
      const key = PER_TARGET.find((name) => hook[name] !== undefined && !(name === "batchSize" && hook.function !== undefined));
      if (key !== undefined) throw classicKey(`webhooks[${index}].${key}`);
    }
  }
  const batchWaitMs =
    input.batchWaitMs ??
    (config.batchWait !== undefined ? asConfigError(() => parseDuration(config.batchWait as string, { file, key: "batchWait" })) : undefined);
  return { destination, batchWaitMs: batchWaitMs ?? DEFAULT_BATCH_WAIT_MS };
}

/** What the flags give each `--url` target. */
export function flagTargetParts(input: ActionsInput): Pick<Target, "method" | "mapping" | "batchSize"> {
  const parts: Pick<Target, "method" | "mapping" | "batchSize"> = {};
  if (input.method !== undefined) parts.method = input.method;
  if (input.data !== undefined) parts.mapping = parseMapping(input.data, { field: "data" });
  if (input.batchSize !== undefined) parts.batchSize = checkBatchSize(input.batchSize);
  return parts;
}

/** Flags that set a target's mapping apply to `--url` targets only. */
export function refuseFlagsWithoutUrls(input: ActionsInput): void {
  const field = PER_TARGET.find((name) => input[name] !== undefined);
  if (field !== undefined) {
    throw new UsageError(`\`${field}\` applies to \`urls\` targets; give \`urls\` too, or put "${field}" in each of the config file's webhooks`, { field });
  }
}

/** What a config file's webhook gives its target. */
export function configTargetParts(hook: WebhookEntry, index: number, file: string): Pick<Target, "method" | "mapping" | "batchSize"> {
  const parts: Pick<Target, "method" | "mapping" | "batchSize"> = {};
  if (hook.method !== undefined) parts.method = hook.method;
  if (hook.data !== undefined) parts.mapping = mappingFromValue(hook.data, { file, key: `webhooks[${index}].data` });
  if (hook.batchSize !== undefined) parts.batchSize = hook.batchSize;
  return parts;
}

function checkBatchSize(size: number): number {
  if (!Number.isInteger(size) || size < 1 || size > MAX_BATCH_SIZE) {
    throw new UsageError(`a batch holds 1 to ${MAX_BATCH_SIZE} events, got ${size}`, { field: "batchSize" });
  }
  return size;
}

/** A value read from the config file is a ConfigError, whatever the parser throws. */
function asConfigError<T>(read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (error instanceof WebhookCliError && !(error instanceof ConfigError)) throw new ConfigError(error.message, error.source);
    throw error;
  }
}
