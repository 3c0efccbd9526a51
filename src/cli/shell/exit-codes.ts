import { CommanderError } from "commander";
import { WebhookCliError, type ErrorCode } from "../../errors.js";
import { flagOfField } from "./field-flags.js";

/** The one place errors become exit statuses (docs/exit-codes.md#error-classes). */
const EXIT_CODES: Record<ErrorCode, number> = {
  E_USAGE: 2,
  E_INPUT: 2,
  E_CONFIG: 2,
  E_VALIDATION: 2,
  E_PORT: 2,
  E_STATE: 2,
  E_SCHEME: 2,
  E_SECRET: 2,
  E_DELIVERY: 1,
  E_QUEUE_FULL: 1,
  E_CLOSED: 1,
  E_WRITE: 1,
  // Raised by webhook-cli/testing's waitFor only, never by a command.
  E_WAIT_TIMEOUT: 1,
};

export interface ExitReport {
  code: number;
  /** One line for stderr, or undefined when there is nothing to say (help, version). */
  message: string | undefined;
  /** Show the stack: only for bugs, never for user mistakes. */
  stack: string | undefined;
}

export function exitReportFor(error: unknown): ExitReport {
  if (error instanceof CommanderError) {
    // Asked-for help (--help, `help`) is a success; help shown for a bare `audience` (exitCode 1) is a usage error.
    if (error.code === "commander.helpDisplayed" || error.code === "commander.version" || (error.code === "commander.help" && error.exitCode === 0)) {
      return { code: 0, message: undefined, stack: undefined };
    }
    // Commander has already printed its own message and hint.
    return { code: 2, message: undefined, stack: undefined };
  }
  if (error instanceof WebhookCliError) {
    return { code: EXIT_CODES[error.code], message: `error: ${describeError(error)}`, stack: undefined };
  }
  const err = error instanceof Error ? error : new Error(String(error));
  return { code: 1, message: `internal error: ${err.message}`, stack: err.stack };
}

/** An error's one line, with the fields it names shown as the flags that set them. */
export function describeError(error: WebhookCliError): string {
  return error.describe(flagOfField);
}
