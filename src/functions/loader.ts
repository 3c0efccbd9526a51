import { Script, type Context } from "node:vm";
import { InputError } from "../errors.js";
import { describeThrown, locationIn } from "./thrown.js";
import { EVENT_HANDLERS, type FunctionKind, HANDLER_NAMES, type HandlerName } from "./types.js";

export type Handler = (...args: unknown[]) => unknown;

export interface LoadedHandlers {
  kind: FunctionKind;
  handlers: ReadonlyMap<HandlerName, Handler>;
}

// The name of the object the wrapper writes the handlers to; set on the context only while loading.
const EXPORTS = "__webhookCliExports__";

/**
 * Loads a function's code the way the service's runtime (its published shim) does
 * (docs/functions.md#how-a-function-is-loaded): plain JavaScript, no imports, wrapped in a
 * function whose parameters are the handler names, so `async function onTrack` at top level
 * (or `onTrack = …`) defines a handler, read before and after the code runs. Its top-level code
 * runs once, in `context`, within `limitMs`. Problems are InputErrors naming the file, line and
 * column: a syntax error, a throw at load, no handler, a handler that is not a function.
 */
export function loadHandlers(code: string, file: string, context: Context, limitMs: number): LoadedHandlers {
  const source = code.replace(/^\uFEFF/, "");
  const script = compile(source, file);
  const exported: Record<string, unknown> = {};
  context[EXPORTS] = exported;
  try {
    script.runInContext(context, { timeout: limitMs, displayErrors: false });
  } catch (error) {
    throw loadError(error, file, limitMs);
  } finally {
    delete context[EXPORTS];
  }
  return handlersOf(exported, file);
}

function compile(source: string, file: string): Script {
  const assign = HANDLER_NAMES.map((name) => `${EXPORTS}.${name} = ${name};`).join(" ");
  // Line 1 is the wrapper's, so the file's own lines keep their numbers (lineOffset -1).
  const wrapped = `(function (${EXPORTS}, ${HANDLER_NAMES.join(", ")}) { ${assign}\n${source}\n;${assign}\n}).call(this, ${EXPORTS});`;
  try {
    return new Script(wrapped, { filename: file, lineOffset: -1 });
  } catch (error) {
    throw syntaxError(error, source, file);
  }
}

/**
 * A SyntaxError with the place Node shows above its stack (`file:LINE`, the line, a caret under
 * the column). Past the file's last line (an unclosed block) it is the end of the file.
 */
function syntaxError(error: unknown, source: string, file: string): InputError {
  const message = error instanceof Error ? error.message : String(error);
  const lines = source.split("\n").length;
  const [first = "", , caret = ""] = String((error as Error).stack ?? "").split("\n");
  const lineText = first.startsWith(`${file}:`) ? first.slice(file.length + 1) : "";
  const found = /^\d+$/.test(lineText) ? Number(lineText) : undefined;
  const hint = handlerRedeclared(message);
  if (found === undefined) return new InputError(`SyntaxError: ${message}${hint}`, { file });
  // What it tripped on is the wrapper's closing: for the file, its input ended too soon.
  if (found > lines) return new InputError("SyntaxError: Unexpected end of input (a block, call or literal is not closed)", { file, line: lines });
  const column = caret.indexOf("^");
  return new InputError(`SyntaxError: ${message}${hint}`, { file, line: found, ...(column >= 0 ? { column: column + 1 } : {}) });
}

/** `const onTrack = …` at top level: the name is the wrapper's parameter, as in the service's runtime. */
function handlerRedeclared(message: string): string {
  const name = /^Identifier '(\w+)' has already been declared/.exec(message)?.[1];
  if (name === undefined || !(HANDLER_NAMES as readonly string[]).includes(name)) return "";
  return `: the runtime declares ${name} itself; write \`async function ${name}(…)\`, or assign \`${name} = …\` without const, let or class`;
}

function loadError(error: unknown, file: string, limitMs: number): InputError {
  if ((error as NodeJS.ErrnoException)?.code === "ERR_SCRIPT_EXECUTION_TIMEOUT") {
    return new InputError(`its top-level code ran over ${limitMs / 1000} s while loading (the service's limit)`, { file });
  }
  const thrown = describeThrown(error, file);
  const what = thrown.isError ? `${thrown.name}: ${thrown.message}` : `a ${thrown.name}, not an Error: ${thrown.message}`;
  const place = placeOf(locationIn((error as Error)?.stack, file));
  return new InputError(`threw while loading: ${what}`, { file, ...place });
}

function placeOf(location: string | undefined): { line?: number; column?: number } {
  const match = location === undefined ? null : /:(\d+):(\d+)$/.exec(location);
  return match ? { line: Number(match[1]), column: Number(match[2]) } : {};
}

const DESTINATION_HANDLERS: readonly HandlerName[] = [...Object.values(EVENT_HANDLERS), "onBatch"];

function handlersOf(exported: Record<string, unknown>, file: string): LoadedHandlers {
  const handlers = new Map<HandlerName, Handler>();
  for (const name of HANDLER_NAMES) {
    const value = exported[name];
    if (value === undefined) continue;
    if (typeof value !== "function") throw new InputError(`${name} is ${value === null ? "null" : `a ${typeof value}`}, not a function`, { file });
    handlers.set(name, value as Handler);
  }
  const destination = DESTINATION_HANDLERS.filter((name) => handlers.has(name));
  if (handlers.has("onRequest") && destination.length > 0) {
    throw new InputError(
      `defines onRequest and ${destination.join(", ")}: a function is a source (onRequest) or a destination (onTrack, onIdentify, …), not both`,
      { file },
    );
  }
  if (handlers.size === 0) {
    throw new InputError(
      "no handler: a destination function defines onTrack, onIdentify, onPage, onScreen, onGroup, onAlias, onDelete or onBatch; a source function defines onRequest",
      { file },
    );
  }
  return { kind: handlers.has("onRequest") ? "source" : "destination", handlers };
}
