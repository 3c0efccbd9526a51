import { z } from "zod";
import { validateAnswerHeader } from "../config/checks.js";
import { ConfigError, WebhookCliError, type ErrorSource } from "../errors.js";
import { MESSAGE_TYPES } from "../messages/names.js";
import { durationOf } from "../util/duration.js";
import { parseUntrustedJson } from "../json/parse.js";
import { MAX_ANSWER_FILE_BYTES, readRegularFile } from "../util/readable-file.js";
import { answerHeaders, type AnswerRule, type ScriptedAnswer } from "./scripted-answers.js";
import { BODY_KINDS, VERDICT_FILTERS, type BodyKind, type RequestMatch, type VerdictFilter } from "./match.js";

/* The rules of --responses (docs/receiver.md#scripted-answers), checked with zod; an error names the file and the rule's key. */

/** At most this many rules: each request is matched against them in order. */
export const MAX_RULES = 1_000;

const matchSchema = z.strictObject({
  type: z.enum(MESSAGE_TYPES).optional(),
  event: z.string().optional(),
  userId: z.string().optional(),
  path: z.string().startsWith("/", { error: "a path starts with /" }).optional(),
  method: z
    .string()
    .regex(/^[A-Za-z]+$/, { error: "a method is letters only (POST, PUT, PATCH…)" })
    .optional(),
  kind: z.enum(BODY_KINDS as [BodyKind, ...BodyKind[]]).optional(),
  verdict: z.enum(VERDICT_FILTERS as [VerdictFilter, ...VerdictFilter[]]).optional(),
});

const respondSchema = z
  .strictObject({
    status: z.number().int().min(200).max(599).optional(),
    headers: z.record(z.string(), z.string()).optional(),
    /** A string is sent as it is; any other JSON value as its JSON. */
    body: z.unknown().optional(),
    echo: z.boolean().optional(),
    // A string or milliseconds, checked where the answer is made (durationOf names the key).
    delay: z.unknown().optional(),
  })
  .refine((respond) => !(respond.echo === true && respond.body !== undefined), { error: "body and echo exclude each other" });

const rulesSchema = z.array(z.strictObject({ match: matchSchema.optional(), respond: respondSchema })).max(MAX_RULES);

/** One rule as a file or a test gives it: what to match (all of it when left out) and how to answer. */
export interface ResponseRule {
  match?: RequestMatch;
  respond: {
    /** 200–599; default 200. */
    status?: number;
    headers?: Record<string, string>;
    /** A string is sent as it is; any other value as JSON. */
    body?: unknown;
    /** Answer with the request's own body (and its Content-Type). */
    echo?: boolean;
    /** `2s`, `250ms`, or milliseconds: replaces the receiver's delay for this answer. */
    delay?: string | number;
  };
}

/** Reads a rules file (a JSON array); errors name `file` and the rule's key (`[2].respond.status`). */
export function loadRulesFile(path: string, shownAs: string = path): AnswerRule[] {
  const text = readRegularFile(path, { field: "responses", file: shownAs }, MAX_ANSWER_FILE_BYTES).toString("utf8");
  let json: unknown;
  try {
    json = parseUntrustedJson(text.replace(/^\uFEFF/, ""));
  } catch (error) {
    throw new ConfigError(`not valid JSON: ${(error as Error).message}`, { file: shownAs });
  }
  return parseRules(json, { file: shownAs });
}

/** Checks rules given as values (a rules file's array, or a test's); `source` says where they came from. */
export function parseRules(value: unknown, source: ErrorSource): AnswerRule[] {
  const result = rulesSchema.safeParse(value);
  if (!result.success) throw zodProblem(result.error, source);
  return result.data.map((rule, i) => ({ match: rule.match ?? {}, respond: answerOf(rule.respond, source, `[${i}].respond.`) }));
}

/** Checks one answer given as a value (the library's `respond`): `{status, headers, body}`. */
export function parseAnswer(value: unknown, source: ErrorSource): ScriptedAnswer {
  const result = respondSchema.safeParse(value);
  if (!result.success) throw zodProblem(result.error, source);
  return answerOf(result.data, source, "");
}

function answerOf(respond: z.infer<typeof respondSchema>, source: ErrorSource, prefix: string): ScriptedAnswer {
  const { status = 200, headers = {}, body, echo, delay } = respond;
  const at = (key: string): ErrorSource => ({ ...source, key: `${prefix}${key}` });
  const pairs = Object.entries(headers);
  for (const [name, value] of pairs) rethrowAt(() => validateAnswerHeader(name, value, {}), at(`headers.${name}`));
  const bytes = echo === true ? "echo" : body === undefined ? null : Buffer.from(typeof body === "string" ? body : JSON.stringify(body));
  const delayMs = delay === undefined ? undefined : rethrowAt(() => durationOf(delay), at("delay"));
  return { status, headers: answerHeaders(pairs, bytes), body: bytes, delayMs };
}

/** Checks a matcher given as a value (the library's waitFor): a misspelt field must not match everything. */
export function parseMatch(value: unknown, source: ErrorSource): RequestMatch {
  const result = matchSchema.safeParse(value);
  if (!result.success) throw zodProblem(result.error, source);
  return result.data;
}

function zodProblem(error: z.ZodError, source: ErrorSource): ConfigError {
  const issue = error.issues[0];
  const key = (issue?.path ?? []).map((part) => (typeof part === "number" ? `[${part}]` : `.${String(part)}`)).join("");
  const message =
    issue?.code === "unrecognized_keys" ? `unknown key${issue.keys.length > 1 ? "s" : ""} ${issue.keys.map((k) => `"${k}"`).join(", ")}` : issue?.message;
  return new ConfigError(message ?? "invalid rules", { ...source, ...(key ? { key: key.replace(/^\./, "") } : {}) });
}

/** Runs a check, moving its error's message to `source`. */
function rethrowAt<T>(check: () => T, source: ErrorSource): T {
  try {
    return check();
  } catch (error) {
    if (error instanceof WebhookCliError) throw new ConfigError(error.message, source);
    throw error;
  }
}
