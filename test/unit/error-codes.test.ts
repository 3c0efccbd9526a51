import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { exitReportFor } from "../../src/cli/shell/exit-codes.js";
import * as errors from "../../src/errors.js";
import {
  BatchDeliveryError,
  QueueFullError,
  StateError,
  ClosedError,
  ConfigError,
  InputError,
  PortError,
  SchemeError,
  SecretFormatError,
  UsageError,
  ValidationError,
  WaitTimeoutError,
  WebhookCliError,
  WriteError,
} from "../../src/errors.js";
import { ROOT } from "../helpers/loaded-modules.js";

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
  new WaitTimeoutError("waitFor: timed out", { timeoutMs: 10, count: 1, matched: [], received: [] }),
];

const SRC = join(ROOT, "src");
const sources = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sources(join(dir, entry.name)) : entry.name.endsWith(".ts") ? [join(dir, entry.name)] : [],
  );
/** Every module of src/ but errors.ts, by its src/-relative path. */
const MODULES = sources(SRC)
  .filter((file) => file !== join(SRC, "errors.ts"))
  .map((file) => ({ path: relative(SRC, file), text: readFileSync(file, "utf8") }));
const ERRORS_TS = readFileSync(join(SRC, "errors.ts"), "utf8");
/** The members of the ErrorCode union, as src/errors.ts declares them. */
const DECLARED_CODES = [...(/export type ErrorCode =([^;]+);/.exec(ERRORS_TS)?.[1] ?? "").matchAll(/"(E_[A-Z_]+)"/g)].map((match) => match[1]);
/** The classes src/errors.ts exports, but the base. */
const CLASSES = Object.values(errors).filter(
  (value): value is typeof WebhookCliError => typeof value === "function" && value.prototype instanceof WebhookCliError,
);

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
      ["WaitTimeoutError", "E_WAIT_TIMEOUT"],
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
      E_WAIT_TIMEOUT: 1,
    });
    // A bug is any error that is not a WebhookCliError: exit 1, with its stack.
    const bug = exitReportFor(new TypeError("cannot read properties of undefined"));
    expect(bug.code).toBe(1);
    expect(bug.stack).toContain("TypeError");
    expect(exitReportFor(new UsageError("bad flag")).stack).toBeUndefined();
  });
});

describe("every error class and code in src/errors.ts, each raised somewhere", () => {
  it("ERRORS above has one instance of each class src/errors.ts exports, and each code of ErrorCode is one class's", () => {
    expect(CLASSES.length).toBeGreaterThan(10);
    expect(CLASSES.filter((type) => !ERRORS.some((error) => error.constructor === type)).map((type) => type.name)).toEqual([]);
    expect(DECLARED_CODES.length).toBeGreaterThan(10);
    expect([...DECLARED_CODES].sort()).toEqual(ERRORS.map((error) => error.code).sort());
  });

  it("no module but src/errors.ts declares an error class, but these two, which are not WebhookCliErrors on purpose", () => {
    const declared = MODULES.flatMap(({ path, text }) =>
      [...text.matchAll(/class (\w+) extends (\w*Error)\b/g)].map((match) => `${path}: ${match[1]} extends ${match[2]}`),
    );
    expect(declared).toEqual([
      // A body over its bound while a loopback API reads JSON: answered 413 by its caller, never thrown further.
      "http/loopback-api.ts: TooLarge extends Error",
      // parseUntrustedJson throws SyntaxErrors, as JSON.parse does.
      "json/parse.ts: JsonDepthError extends SyntaxError",
    ]);
  });

  it("each class is raised by some module of src/, and no module raises the base class with a code of its own", () => {
    const raised = (name: string): string[] => MODULES.filter(({ text }) => text.includes(`new ${name}(`)).map(({ path }) => path);
    expect(CLASSES.filter((type) => raised(type.name).length === 0).map((type) => type.name)).toEqual([]);
    expect(raised("WebhookCliError")).toEqual([]);
    // The check can fail: a name nobody raises is found nowhere.
    expect(raised("NeverRaisedError")).toEqual([]);
    expect(raised("StateError")).toContain("serve/queue/durable-queue.ts");
  });

  it("docs/exit-codes.md lists every code with its class and exit status, and nothing else", () => {
    const page = readFileSync(join(ROOT, "docs/exit-codes.md"), "utf8");
    const section = page.slice(page.indexOf("## Error classes"), page.indexOf("\n## ", page.indexOf("## Error classes") + 1));
    const rows = [...section.matchAll(/^\| `(E_[A-Z_]+)` \| `(\w+)` \| [^|]+ \| `(\d)` \|$/gm)].map(([, code, name, status]) => [code, name, Number(status)]);
    const byCode = (a: unknown[], b: unknown[]): number => String(a[0]).localeCompare(String(b[0]));
    expect(rows.length).toBeGreaterThan(10);
    expect(rows.sort(byCode)).toEqual(ERRORS.map((error) => [error.code, error.name, exitReportFor(error).code]).sort(byCode));
  });
});
