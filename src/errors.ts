import type { ReceivedWebhook } from "./testing/types.js";

/**
 * One base error; every class has its own stable `code`. The CLI maps codes to
 * exit statuses in one place (src/cli/shell/exit-codes.ts); library users can switch on `code`.
 */

/** Where a bad value came from, so a message can name it. */
export interface ErrorSource {
  /** A command-line flag; only src/cli/ sets it. */
  flag?: string;
  /**
   * The input field a library function was given (`urls`, `secretFile`…). A
   * front end names it its own way: the CLI prints the flag.
   */
  field?: string;
  file?: string;
  line?: number;
  /** With `line`: the column (from 1), for a place in source code. */
  column?: number;
  key?: string;
  env?: string;
}

/** One code per error class (docs/exit-codes.md#error-classes), stable across versions. */
export type ErrorCode =
  | "E_USAGE"
  | "E_INPUT"
  | "E_CONFIG"
  | "E_VALIDATION"
  | "E_PORT"
  | "E_STATE"
  | "E_DELIVERY"
  | "E_QUEUE_FULL"
  | "E_CLOSED"
  | "E_WRITE"
  | "E_SCHEME"
  | "E_SECRET"
  | "E_WAIT_TIMEOUT";

export class WebhookCliError extends Error {
  readonly code: ErrorCode;
  readonly source: ErrorSource | undefined;

  constructor(code: ErrorCode, message: string, options?: { source?: ErrorSource; cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.source = options?.source;
  }

  /**
   * The message prefixed with where the value came from: `events.ndjson:3: …`,
   * `urls: …`. `nameOf` renames fields, in the prefix and where the message
   * mentions one in backquotes (`give \`urls\``): the CLI passes flag names.
   */
  describe(nameOf: (field: string) => string | undefined = () => undefined): string {
    const message = this.message.replace(/`(\w+)`/g, (text, field: string) => nameOf(field) ?? text);
    return `${formatSource(this.source, nameOf)}${message}`;
  }
}

/** A bad flag, argument or combination of them. */
export class UsageError extends WebhookCliError {
  constructor(message: string, source?: ErrorSource) {
    super("E_USAGE", message, source ? { source } : undefined);
  }
}

/** Bad input data: a file, a line, a message. */
export class InputError extends WebhookCliError {
  constructor(message: string, source?: ErrorSource) {
    super("E_INPUT", message, source ? { source } : undefined);
  }
}

/** An invalid config file or destination settings. */
export class ConfigError extends WebhookCliError {
  constructor(message: string, source?: ErrorSource) {
    super("E_CONFIG", message, source ? { source } : undefined);
  }
}

/** A client-library call that is missing a required field (messages of the original library). */
export class ValidationError extends WebhookCliError {
  constructor(message: string) {
    super("E_VALIDATION", message);
  }
}

/** `serve`'s state directory or its database cannot be used: a usage problem (exit 2), never a crash. */
export class StateError extends WebhookCliError {
  constructor(message: string, source?: ErrorSource) {
    super("E_STATE", message, source ? { source } : undefined);
  }
}

/** A port that cannot be listened on. */
export class PortError extends WebhookCliError {
  constructor(message: string, options?: { cause?: unknown; source?: ErrorSource }) {
    super("E_PORT", message, options);
  }
}

/** Use of a closed client or server. */
export class ClosedError extends WebhookCliError {
  constructor(message: string) {
    super("E_CLOSED", message);
  }
}

/** A client batch that was finally not delivered: every callback of its messages receives this. */
export class BatchDeliveryError extends WebhookCliError {
  constructor(
    message: string,
    /** Last HTTP status, or null when none arrived. */
    readonly status: number | null,
    readonly attempts: number,
    readonly messageIds: readonly string[],
  ) {
    super("E_DELIVERY", message);
  }
}

/** A client call refused because the in-memory queue was full (the server is slower than the producer). */
export class QueueFullError extends WebhookCliError {
  constructor(message: string) {
    super("E_QUEUE_FULL", message);
  }
}

/** An output file (results, dead letters) that cannot be written: disk full, no permission. */
export class WriteError extends WebhookCliError {
  constructor(message: string, options?: { cause?: unknown; source?: ErrorSource }) {
    super("E_WRITE", message, options);
  }
}

/** A signature scheme that does not exist or cannot sign or verify what it was given (a URL Twilio needs, say). */
export class SchemeError extends WebhookCliError {
  constructor(message: string, source?: ErrorSource) {
    super("E_SCHEME", message, source ? { source } : undefined);
  }
}

/** A secret in the wrong format for its scheme (`whsec_` that is not base64 for Standard Webhooks). */
export class SecretFormatError extends WebhookCliError {
  /** Which of several secrets (0: the first). */
  readonly index: number;

  constructor(message: string, options?: { index?: number; source?: ErrorSource }) {
    super("E_SECRET", message, options?.source ? { source: options.source } : undefined);
    this.index = options?.index ?? 0;
  }
}

/**
 * `waitFor` (webhook-cli/testing) reached its timeout before `count` matching requests arrived.
 * Its message lists what did arrive; so do its fields, for a test that inspects them.
 */
export class WaitTimeoutError extends WebhookCliError {
  /** The timeout that passed, in ms. */
  readonly timeoutMs: number;
  /** How many matching requests were waited for. */
  readonly count: number;
  /** The matching requests that did arrive: fewer than `count`. */
  declare readonly matched: readonly ReceivedWebhook[];
  /** Every request the receiver kept when the wait ended (its `requests` then), matching or not. */
  declare readonly received: readonly ReceivedWebhook[];

  constructor(message: string, wait: { timeoutMs: number; count: number; matched: readonly ReceivedWebhook[]; received: readonly ReceivedWebhook[] }) {
    super("E_WAIT_TIMEOUT", message);
    this.timeoutMs = wait.timeoutMs;
    this.count = wait.count;
    // Not enumerable: a test runner that prints the error's fields prints the message's list, not a thousand requests' bytes.
    Object.defineProperties(this, { matched: { value: wait.matched }, received: { value: wait.received } });
  }
}

function formatSource(source: ErrorSource | undefined, nameOf: (field: string) => string | undefined = () => undefined): string {
  if (!source) return "";
  const parts: string[] = [];
  const column = source.line !== undefined && source.column !== undefined ? `:${source.column}` : "";
  if (source.file !== undefined) parts.push(source.line !== undefined ? `${source.file}:${source.line}${column}` : source.file);
  else if (source.line !== undefined) parts.push(`line ${source.line}`);
  if (source.flag !== undefined) parts.push(source.flag);
  if (source.field !== undefined) parts.push(nameOf(source.field) ?? source.field);
  if (source.env !== undefined) parts.push(`$${source.env}`);
  if (source.key !== undefined) parts.push(`key "${source.key}"`);
  return parts.length > 0 ? `${parts.join(": ")}: ` : "";
}
