import type { Command } from "commander";
import { z } from "zod";
import { UsageError } from "../errors.js";
import type { AttemptEvent } from "../delivery/types.js";
import type { UndiciEngineOptions } from "../delivery/wire.js";
import type { AliasKeys } from "../messages/schemas.js";
import { readCaFiles, resolveSettings, type DestinationSettings } from "../settings.js";
import { formatDuration } from "../util/duration.js";
import type { CliIo } from "./io.js";
import { collect, duration, durationOrZero } from "./options.js";
import type { Output } from "./output.js";

/**
 * The delivery flags shared by send, replay, audience sync and serve: where
 * to deliver, how to sign, and the engine's timeout, retry window and CAs.
 */
export interface DeliveryFlags {
  urls?: string[];
  headers?: string[];
  secret?: string;
  secretFile?: string;
  config?: string;
  timeoutMs?: number;
  retryWindowMs?: number;
  /** Files of extra trusted CA certificates (PEM). */
  ca?: string[];
  userAgent?: string;
}

/** Help texts a command words its own way. */
export interface DeliveryHelp {
  config?: string;
  timeout?: string;
}

const DEFAULT_HELP: Required<DeliveryHelp> = {
  config: "destination settings file (default ./webhook-cli.json when present)",
  timeout: "deadline per attempt for the response status, connect and TLS included (default 5s)",
};

/** Declares the delivery flags on a command. */
export function addDeliveryOptions(command: Command, help: DeliveryHelp = {}): Command {
  return command
    .option("--url <url>", "webhook URL (repeatable, at most 5; replaces the config's webhooks)", collect)
    .option("--header <header>", "static header 'Name: value' for the --url targets (repeatable)", collect)
    .option("--secret <secret>", "shared secret: sign with X-Signature (or $WEBHOOK_SECRET)")
    .option("--secret-file <file>", "read the shared secret from a file")
    .option("--config <file>", help.config ?? DEFAULT_HELP.config)
    .option("--timeout <duration>", help.timeout ?? DEFAULT_HELP.timeout)
    .option("--retry-window <duration>", "no retry starts later than this after the first attempt (default 4h; 0 = no retries)")
    .option("--ca <file>", "also trust this CA certificate (PEM; repeatable)", collect)
    .option("--user-agent <ua>", "User-Agent header (default Segment.io/1.0)");
}

/** zod shape of commander's raw values for the delivery flags; spread into a command's schema. */
export const deliveryOptionsShape = {
  url: z.array(z.string()).optional(),
  header: z.array(z.string()).optional(),
  secret: z.string().optional(),
  secretFile: z.string().optional(),
  config: z.string().optional(),
  timeout: duration("--timeout").optional(),
  retryWindow: durationOrZero("--retry-window").optional(),
  ca: z.array(z.string()).optional(),
  userAgent: z.string().min(1).optional(),
};

interface RawDeliveryOptions {
  url?: string[];
  header?: string[];
  timeout?: number;
  retryWindow?: number;
}

/** Renames the parsed raw values (`url`, `timeout`…) to the command options' names (`urls`, `timeoutMs`…). */
export function withDeliveryFlags<T extends RawDeliveryOptions>(parsed: T): Omit<T, keyof RawDeliveryOptions> & DeliveryFlags {
  const { url, header, timeout, retryWindow, ...rest } = parsed;
  return {
    ...rest,
    ...(url ? { urls: url } : {}),
    ...(header ? { headers: header } : {}),
    ...(timeout !== undefined ? { timeoutMs: timeout } : {}),
    ...(retryWindow !== undefined ? { retryWindowMs: retryWindow } : {}),
  };
}

export type EngineOptions = Pick<UndiciEngineOptions, "timeoutMs" | "retryWindowMs" | "ca">;

export interface ResolveDeliveryExtras {
  /** Fail when no URL is configured. */
  requireTargets?: boolean;
  aliasKeys?: AliasKeys;
}

/**
 * Checks the delivery flags, resolves the destination settings (flags,
 * environment, config file) and reads the CA files: everything a command
 * needs to build THE delivery engine. Bad input throws UsageError (exit 2).
 */
export function resolveDeliveryOptions(
  options: DeliveryFlags,
  io: Pick<CliIo, "cwd" | "env">,
  extras: ResolveDeliveryExtras = {},
): { settings: DestinationSettings; engineOptions: EngineOptions } {
  if (options.secret !== undefined && options.secretFile !== undefined) {
    throw new UsageError("give --secret or --secret-file, not both", { flag: "--secret-file" });
  }
  if (options.timeoutMs !== undefined && options.timeoutMs <= 0) {
    throw new UsageError("the timeout must be more than 0", { flag: "--timeout" });
  }
  const settings = resolveSettings({
    ...(options.urls ? { urls: options.urls } : {}),
    ...(options.headers ? { headers: options.headers } : {}),
    ...(options.secret !== undefined ? { secret: options.secret } : {}),
    ...(options.secretFile !== undefined ? { secretFile: options.secretFile } : {}),
    ...(options.userAgent !== undefined ? { userAgent: options.userAgent } : {}),
    ...(extras.aliasKeys !== undefined ? { aliasKeys: extras.aliasKeys } : {}),
    ...(options.config !== undefined ? { configPath: options.config } : {}),
    cwd: io.cwd,
    env: io.env,
    ...(extras.requireTargets !== undefined ? { requireTargets: extras.requireTargets } : {}),
  });
  const ca = readCaFiles(options.ca ?? [], io.cwd);
  return {
    settings,
    engineOptions: {
      ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
      ...(options.retryWindowMs !== undefined ? { retryWindowMs: options.retryWindowMs } : {}),
      ...(ca.length > 0 ? { ca } : {}),
    },
  };
}

/** The stderr line for a failed attempt: `URL: attempt N failed: why; retrying in 2s`. */
export function logFailedAttempt(output: Output, event: AttemptEvent): void {
  if (event.error === null) return;
  const next = event.retryInMs !== undefined ? `; retrying in ${formatDuration(event.retryInMs)}` : "";
  output.log(`${event.url}: attempt ${event.attempt} failed: ${event.error}${next}`);
}
