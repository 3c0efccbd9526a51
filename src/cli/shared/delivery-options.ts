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
import { checkOneSecretFlag, warnUnsigned } from "./secret.js";
import type { Output } from "../terminal/output.js";

export type EngineOptions = Pick<UndiciEngineOptions, "timeoutMs" | "retryWindowMs" | "ca">;

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
  if (settings.secret === undefined) warnUnsigned(output, "messages are sent without X-Signature", { config: true });
}

/**
 * Checks the delivery flags, resolves the destination settings (flags,
 * environment, config file) and reads the CA files: everything a command
 * needs to build THE delivery engine. Bad input throws UsageError (exit 2).
 */
export function resolveDeliveryOptions(
  options: DeliveryFlags & Partial<ActionsFlags>,
  io: CliIo,
  extras: ResolveDeliveryExtras = {},
): { settings: DestinationSettings; engineOptions: EngineOptions } {
  checkOneSecretFlag(options);
  if (options.timeoutMs !== undefined && options.timeoutMs <= 0) {
    throw new UsageError("the timeout must be more than 0", { flag: "--timeout" });
  }
  const { urls, headers, secret, secretFile, userAgent, config, destination, method, data, batchSize, batchWaitMs } = options;
  const { requireTargets, aliasKeys } = extras;
  const settings = resolveSettings({
    urls,
    headers,
    secret,
    secretFile,
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
  });
  const ca = readCaFiles(options.ca ?? [], io.cwd);
  return {
    settings,
    engineOptions: { timeoutMs: options.timeoutMs, retryWindowMs: options.retryWindowMs, ca: ca.length > 0 ? ca : undefined },
  };
}

/** The stderr line for a failed attempt: `URL: attempt N failed: why; retrying in 2s`. */
export function logFailedAttempt(output: Output, event: AttemptEvent): void {
  if (event.error === null) return;
  const next = event.retryInMs !== undefined ? `; retrying in ${formatDuration(event.retryInMs)}` : "";
  output.log(`${event.url}: attempt ${event.attempt} failed: ${event.error}${next}`);
}
