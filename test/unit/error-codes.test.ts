import { describe, expect, it } from "vitest";
import { exitReportFor } from "../../src/cli/shell/exit-codes.js";
import { StateError } from "../../src/serve/queue/durable-queue.js";
import { BatchDeliveryError, QueueFullError } from "../../src/client/errors.js";
import {
  ClosedError,
  ConfigError,
  InputError,
  PortError,
  SchemeError,
  SecretFormatError,
  UsageError,
  ValidationError,
  WebhookCliError,
  WriteError,
} from "../../src/errors.js";

// Every error class of src/, one instance each. A new class goes here with its own code.
const ERRORS: readonly WebhookCliError[] = [
  new UsageError("bad flag"),
  new InputError("bad line"),
  new ConfigError("bad option"),
  new ValidationError("You must pass 'event'."),
  new PortError("port in use"),
  new BatchDeliveryError("not delivered", 503, 4, ["m1"]),
  new QueueFullError("queue full"),
  new ClosedError("closed"),
  new WriteError("cannot write"),
  new StateError("state directory"),
  new SchemeError("unknown scheme"),
  new SecretFormatError("not base64"),
];

describe("error codes", () => {
  it("each error class has its own stable code", () => {
    expect(ERRORS.map((error) => [error.name, error.code])).toEqual([
      ["UsageError", "E_USAGE"],
      ["InputError", "E_INPUT"],
      ["ConfigError", "E_CONFIG"],
      ["ValidationError", "E_VALIDATION"],
      ["PortError", "E_PORT"],
      ["BatchDeliveryError", "E_DELIVERY"],
      ["QueueFullError", "E_QUEUE_FULL"],
      ["ClosedError", "E_CLOSED"],
      ["WriteError", "E_WRITE"],
      ["StateError", "E_STATE"],
      ["SchemeError", "E_SCHEME"],
      ["SecretFormatError", "E_SECRET"],
    ]);
    const codes = ERRORS.map((error) => error.code);
    expect(new Set(codes).size).toBe(codes.length);
  });

  it("the CLI maps each code to the exit status it had: 2 for what the user can fix, 1 for the rest", () => {
    expect(Object.fromEntries(ERRORS.map((error) => [error.code, exitReportFor(error).code]))).toEqual({
      E_USAGE: 2,
      E_INPUT: 2,
      E_CONFIG: 2,
      E_VALIDATION: 2,
      E_PORT: 2,
      E_DELIVERY: 1,
      E_QUEUE_FULL: 1,
      E_CLOSED: 1,
      E_WRITE: 1,
      E_STATE: 2,
      E_SCHEME: 2,
      E_SECRET: 2,
    });
    expect(exitReportFor(new WebhookCliError("E_INTERNAL", "cannot write")).code).toBe(1);
    expect(exitReportFor(new UsageError("bad flag")).stack).toBeUndefined();
  });
});
