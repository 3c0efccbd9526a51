import { inspect, types } from "node:util";
import { WebhookCliError } from "../errors.js";
import { clipText } from "../safe-text/clip.js";
import type { ThrownClass } from "./outcome.js";
import type { ThrownInfo } from "./types.js";

/** The error classes a function sees as globals, made in its own context (so `instanceof Error` holds there). */
export interface FunctionErrorClasses {
  EventNotSupported: new (message?: string) => Error;
  InvalidEventPayload: new (message?: string) => Error;
  ValidationError: new (message?: string) => Error;
  RetryError: new (message?: string) => Error;
}

/**
 * The classes, as the shim writes them: each extends the context's own Error and takes its
 * subclass's name. Run once in each function's context.
 */
export const ERROR_CLASSES_SCRIPT = `(() => {
  const named = (base) => class extends base { constructor(message) { super(message); this.name = this.constructor.name; } };
  class EventNotSupported extends named(Error) {}
  class InvalidEventPayload extends named(Error) {}
  class ValidationError extends named(Error) {}
  class RetryError extends named(Error) {}
  return { EventNotSupported, InvalidEventPayload, ValidationError, RetryError };
})()`;

const MAX_MESSAGE = 2000;

/** Which runtime class a thrown value belongs to (subclasses count); our own setup errors are `setup`. */
export function classOfThrown(value: unknown, classes: FunctionErrorClasses): ThrownClass {
  if (value instanceof WebhookCliError) return "setup";
  for (const name of ["EventNotSupported", "InvalidEventPayload", "ValidationError", "RetryError"] as const) {
    if (value instanceof classes[name]) return name;
  }
  return "other";
}

/**
 * A thrown value for people: an Error's class, message and where in the function's file it was
 * thrown; anything else (`throw "oops"`, `throw {code: 1}`) by its type and a short rendering.
 */
export function describeThrown(value: unknown, file: string): ThrownInfo {
  if (isErrorLike(value)) {
    const location = locationIn(value.stack, file);
    // undici's "fetch failed" says why only in its cause (getaddrinfo ENOTFOUND …).
    const cause = (value as { cause?: unknown }).cause;
    const why = types.isNativeError(cause) ? ` (${cause.message})` : "";
    return {
      name: errorName(value),
      message: clipText(`${String(value.message)}${why}`, MAX_MESSAGE),
      isError: true,
      ...(location !== undefined ? { location } : {}),
    };
  }
  const name = value === null ? "null" : Array.isArray(value) ? "array" : typeof value;
  const message = typeof value === "string" ? JSON.stringify(value) : inspect(value, { depth: 2, breakLength: Number.POSITIVE_INFINITY });
  return { name, message: clipText(message, MAX_MESSAGE), isError: false };
}

/** An Error from any realm: the function's context, ours (undici's TypeError), or a subclass of either. */
function isErrorLike(value: unknown): value is Error {
  return types.isNativeError(value) || (typeof value === "object" && value !== null && inheritsFromError(value));
}

// `Object.create(Error.prototype)` and the like are no native errors, but are meant as Errors:
// their prototype chain reaches an `Error.prototype` (of any realm: its own `name` is "Error").
function inheritsFromError(value: object): boolean {
  for (let proto = Object.getPrototypeOf(value); proto !== null; proto = Object.getPrototypeOf(proto)) {
    if (Object.hasOwn(proto, "name") && proto.name === "Error") return true;
  }
  return false;
}

function errorName(error: Error): string {
  const ctor = (error as { constructor?: { name?: unknown } }).constructor;
  return typeof error.name === "string" && error.name !== "" ? error.name : typeof ctor?.name === "string" ? ctor.name : "Error";
}

/** `file:line:column` of the first stack frame in the function's file. */
export function locationIn(stack: unknown, file: string): string | undefined {
  if (typeof stack !== "string") return undefined;
  for (const line of stack.split("\n")) {
    const at = line.lastIndexOf(`${file}:`);
    if (at === -1) continue;
    const match = /^:(\d+):(\d+)/.exec(line.slice(at + file.length));
    if (match) return `${file}:${match[1]}:${match[2]}`;
  }
  return undefined;
}
