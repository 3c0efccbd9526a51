import { UsageError } from "../../errors.js";
import type { AttemptEvent } from "../../delivery/types.js";
import type { UndiciEngineOptions } from "../../delivery/undici-engine.js";
import type { AliasKeys } from "../../messages/schemas.js";
import { readCaFiles } from "../../config/checks.js";
import { resolveSettings, type DestinationSettings } from "../../config/destination.js";
import { formatDuration } from "../../util/duration.js";
import type { CliIo } from "../terminal/io.js";
import type { ActionsFlags } from "../options/actions.js";
import type { DeliveryFlags } from "../options/delivery.js";
import type { FunctionFlags } from "../options/function.js";
import { warnUnsigned } from "./secret.js";
import type { Output } from "../terminal/output.js";
import { detailLines } from "../terminal/invocation-lines.js";

export type EngineOptions = Pick<UndiciEngineOptions, "timeoutMs" | "retryWindowMs" | "ca" | "retryRules">;

interface ResolveDeliveryExtras {
  /** Fail when no URL is configured. */
  requireTargets?: boolean | undefined;
  aliasKeys?: AliasKeys | undefined;
}

/**
 * The one line that says messages go out unsigned (no secret configured anywhere). Each command
 * says it once its input checked out (or, for serve, once started), so a mistake stays a one-line answer.
 */
export function warnIfUnsigned(output: Output, settings: DestinationSettings): void {
  // A destination function reads events, not signatures.
  const http = settings.targets.length === 0 || settings.targets.some((target) => target.function === undefined);
  if (settings.secret === undefined && http) warnUnsigned(output, "messages are sent unsigned", { config: true });
}

/**
 * Checks the delivery flags, resolves the destination settings (flags,
 * environment, config file) and reads the CA files: everything a command
 * needs to build THE delivery engine. Bad input throws UsageError (exit 2).
 */
export function resolveDeliveryOptions(
  options: DeliveryFlags & Partial<ActionsFlags> & { [K in keyof FunctionFlags]?: FunctionFlags[K] | undefined },
  io: CliIo,
  extras: ResolveDeliveryExtras = {},
): { settings: DestinationSettings; engineOptions: EngineOptions } {
  if (options.settings !== undefined && options.function === undefined) {
    throw new UsageError('--settings goes with --function (a config file\'s function webhook has its own "settings")', { flag: "--settings" });
  }
  if (options.timeoutMs !== undefined && options.timeoutMs <= 0) {
    throw new UsageError("the timeout must be more than 0", { flag: "--timeout" });
  }
  const { urls, headers, secrets, secretFiles, scheme, userAgent, config, destination, method, data, batchWaitMs } = options;
  // With --function, --batch-size is its onBatch's (set where the function is loaded).
  const batchSize = options.function === undefined ? options.batchSize : undefined;
  const { requireTargets, aliasKeys } = extras;
  const settings = resolveSettings({
    urls,
    headers,
    secrets: secrets ?? [],
    secretFiles,
    scheme,
    userAgent,
    aliasKeys,
    configPath: config,
    requireTargets,
    cwd: io.cwd,
    env: io.env,
    destination,
    method,
    data,
    batchSize,
    batchWaitMs,
    function: options.function !== undefined ? { file: options.function, settings: options.settings } : undefined,
  });
  if (options.egress !== undefined && !settings.targets.some((target) => target.function !== undefined)) {
    throw new UsageError('--function-egress applies to a destination function\'s requests: give --function (or a config webhook with a "function")', {
      flag: "--function-egress",
    });
  }
  const ca = readCaFiles(options.ca ?? [], io.cwd);
  return {
    settings,
    engineOptions: {
      timeoutMs: options.timeoutMs,
      retryWindowMs: options.retryWindowMs,
      ca: ca.length > 0 ? ca : undefined,
      retryRules: options.retryRules,
    },
  };
}

/**
 * The stderr line for a failed attempt: `URL: attempt N failed: why; retrying in 2s`; for a
 * destination function retried, what that invocation did (its last one is shown with the result).
 */
export function logFailedAttempt(output: Output, event: AttemptEvent): void {
  if (event.error === null) return;
  const next = event.retryInMs !== undefined ? `; retrying in ${formatDuration(event.retryInMs)}` : "";
  output.log(`${event.url}: attempt ${event.attempt} failed: ${event.error}${next}`);
  if (event.invocation !== undefined && event.retryInMs !== undefined) for (const line of detailLines(event.invocation)) output.log(`    ${line}`);
}
