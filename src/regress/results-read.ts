import { createHash } from "node:crypto";
import { InputError } from "../errors.js";
import { isPlainObject } from "../json/parse.js";
import { userIdOf } from "../messages/check.js";
import type { Line, SplitStart } from "../util/ndjson.js";
import { contentTypeOf, messageFacts, type MessageFacts, type ResultLine } from "./results.js";

/**
 * Reads what `--compare` compares against (pure; results-file.ts feeds it a
 * file): `--results` lines, several shards' results files concatenated in any
 * order, or a `listen --record` recording whose lines carry the app's
 * `response` (docs/recording.md#forwarded-response). A recording line is keyed by its own line
 * number, the number a replay of that recording gives the same message.
 * Nothing is kept: the scan checks the file, old-results.ts reads it again beside the replay.
 */

/** A response body as compared: text (maybe JSON), an already parsed JSON value (recordings), a digest, or nothing. */
export type AnswerBody = { kind: "text"; text: string } | { kind: "value"; value: unknown } | { kind: "hash"; sha256: string; size: number } | { kind: "none" };

export interface AnswerUrl {
  url: string | undefined;
  status: number | null;
  error: string | null;
  contentType: string | null;
  body: AnswerBody;
  /** A destination function skipped the event: why. */
  skipped?: string;
  /** A destination function's requests, each `METHOD URL → status`, in order (their times left out). */
  requests?: string[];
}

/** One message's answers, from a results line or a recording line. */
export interface Answer {
  line: number;
  facts: MessageFacts;
  delivered: boolean;
  urls: AnswerUrl[];
}

/**
 * How many runs in line order an OLD file may hold: each results file of a
 * run or shard is one, so shards concatenated in any order or a run resumed
 * into the same file stay far below it; a file in no order at all is refused.
 */
export const MAX_RUNS = 1024;

/** What a pass over the --compare file found, so it can be read again as a merge of its runs. */
export interface ResultsIndex {
  /**
   * Where each run of answers in ascending line order starts (the first at the
   * file's start). A results file appends runs (a resumed run, shards
   * concatenated); within a run each line is answered once, in input order.
   */
  runs: SplitStart[];
  /** Where the last answer ends: lines after it (appended since) are left out. */
  end: number;
  answers: number;
  /** Lines that carry no answer: recordings without `response`, bare messages. */
  unanswered: number;
  /** Whether every line's quickKey, where it has one, is its answer's line (so it can stand for a parse). */
  quickKeys: boolean;
}

/**
 * Checks every line of the --compare file and finds its runs, keeping no
 * answer: a malformed line is an InputError naming `name` and the line.
 * Lines must carry their offsets (readLineBatches' `offsets`).
 */
export class ResultsScan {
  private readonly runs: SplitStart[] = [{ offset: 0, line: 1 }];
  private previous = 0;
  private answers = 0;
  private unanswered = 0;
  private end = 0;
  private quickKeys = true;

  constructor(private readonly name: string) {}

  add(line: Line): void {
    if ("error" in line) throw new InputError(line.error, { file: this.name, line: line.number });
    const answer = parseAnswerLine(line.text, line.number);
    if (typeof answer === "string") throw new InputError(answer, { file: this.name, line: line.number });
    const quick = quickKey(line.text);
    if (quick !== undefined && quick !== answer?.line) this.quickKeys = false;
    if (answer === undefined) {
      this.unanswered += 1;
      return;
    }
    const offset = line.offset as number;
    if (answer.line <= this.previous) {
      if (this.runs.length >= MAX_RUNS) {
        const why = `answers out of input order: line ${answer.line} after line ${this.previous}, and ${MAX_RUNS} runs in order already (one per results file concatenated or run resumed)`;
        throw new InputError(`${why}; sort the file by "line"`, { file: this.name, line: line.number });
      }
      this.runs.push({ offset, line: line.number });
    }
    this.previous = answer.line;
    this.answers += 1;
    this.end = offset + Buffer.byteLength(line.text);
  }

  result(): ResultsIndex {
    if (this.answers === 0) {
      throw new InputError("no answers to compare with: neither --results lines nor a recording with responses (listen --forward-to)", { file: this.name });
    }
    return { runs: this.runs, end: this.end, answers: this.answers, unanswered: this.unanswered, quickKeys: this.quickKeys };
  }
}

/**
 * A results line's number read from its first bytes (`{"line":12,` as
 * formatResultLine writes it), so a line outside the selection is passed over
 * unparsed. Trusted only where the scan found it agrees with the parse on
 * every line (a repeated "line" key would not).
 */
export function quickKey(text: string): number | undefined {
  if (!text.startsWith('{"line":')) return undefined;
  const match = /^\{"line":([1-9]\d{0,14}),/.exec(text);
  return match ? Number(match[1]) : undefined;
}

/** The answer on one line; undefined when the line carries none; a string says why the line is bad. */
export function parseAnswerLine(text: string, number: number): Answer | undefined | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return `not JSON: ${(error as Error).message}`;
  }
  if (!isPlainObject(value)) return "expected a JSON object (a results line or a recording line)";
  if (Object.hasOwn(value, "urls")) return fromResultLine(value);
  if (!Object.hasOwn(value, "type") && Object.hasOwn(value, "body")) return fromRecording(value, number);
  return undefined;
}

/** The answer a results line holds (as written by formatResultLine). */
export function answerOfResult(result: ResultLine): Answer {
  const answer = fromResultLine(result as unknown as Record<string, unknown>);
  if (typeof answer === "string") throw new RangeError(answer);
  return answer;
}

function fromResultLine(value: Record<string, unknown>): Answer | string {
  const line = value["line"];
  if (!Number.isSafeInteger(line) || (line as number) < 1) return `not a results line: key "line" must be a line number`;
  if (!Array.isArray(value["urls"])) return `not a results line: key "urls" must be an array`;
  const urls: AnswerUrl[] = [];
  for (const [index, url] of (value["urls"] as unknown[]).entries()) {
    const parsed = resultUrl(url);
    if (typeof parsed === "string") return `not a results line: urls[${index}]: ${parsed}`;
    urls.push(parsed);
  }
  const userId = value["userId"];
  const facts = messageFacts(value, typeof userId === "string" ? userId : undefined);
  return { line: line as number, facts, delivered: value["delivered"] === true, urls };
}

function resultUrl(url: unknown): AnswerUrl | string {
  if (!isPlainObject(url)) return "expected an object";
  const status = statusOf(url["status"]);
  if (status === undefined) return `key "status" must be an HTTP status or null`;
  const body = bodyOf(url);
  if (typeof body === "string") return body;
  const answer: AnswerUrl = {
    url: typeof url["url"] === "string" ? url["url"] : undefined,
    status,
    error: typeof url["error"] === "string" ? url["error"] : null,
    contentType: typeof url["contentType"] === "string" ? url["contentType"] : null,
    body,
  };
  if (typeof url["skipped"] === "string") answer.skipped = url["skipped"];
  const requests = requestsOf(url["function"]);
  if (requests !== undefined) answer.requests = requests;
  return answer;
}

/** A results line's function requests as compared: `POST https://… → 200`. */
function requestsOf(fn: unknown): string[] | undefined {
  if (!isPlainObject(fn) || !Array.isArray(fn["fetches"])) return undefined;
  return (fn["fetches"] as unknown[]).map((fetch) => {
    const { method, url, status } = isPlainObject(fetch) ? fetch : {};
    return `${String(method)} ${String(url)} → ${typeof status === "number" ? status : "no answer"}`;
  });
}

function fromRecording(envelope: Record<string, unknown>, number: number): Answer | undefined | string {
  const response = envelope["response"];
  if (response === undefined) return undefined;
  if (!isPlainObject(response)) return `key "response" must be an object`;
  const status = statusOf(response["status"]);
  if (status === undefined) return `key "response.status" must be an HTTP status or null`;
  const body = recordedBody(response);
  if (typeof body === "string") return `key "response": ${body}`;
  const headers = isPlainObject(response["headers"]) ? (response["headers"] as Record<string, string | string[]>) : undefined;
  const message = isPlainObject(envelope["body"]) ? envelope["body"] : {};
  // status null: the app could not be reached (listen answered for it), and `error` says why.
  const error = status === null ? (typeof response["error"] === "string" ? response["error"] : "no answer") : null;
  return {
    line: number,
    facts: messageFacts(message, userIdOf(message)),
    delivered: status !== null && status >= 200 && status < 300,
    urls: [{ url: undefined, status, error, contentType: contentTypeOf(headers), body }],
  };
}

/** A recording keeps a body that is not UTF-8 as `bodyBase64`; a results line keeps such a body as its digest, so it is compared as one. */
function recordedBody(response: Record<string, unknown>): AnswerBody | string {
  const base64 = response["bodyBase64"];
  if (base64 === undefined || Object.hasOwn(response, "body")) return bodyOf(response);
  if (typeof base64 !== "string") return `key "bodyBase64" must be base64 text`;
  const bytes = Buffer.from(base64, "base64");
  return { kind: "hash", sha256: createHash("sha256").update(bytes).digest("hex"), size: bytes.length };
}

/** `body` (text, or a parsed value in a recording) or `bodySha256` + `bodySize`, or neither. */
function bodyOf(holder: Record<string, unknown>): AnswerBody | string {
  if (Object.hasOwn(holder, "body")) {
    const body = holder["body"];
    return typeof body === "string" ? { kind: "text", text: body } : { kind: "value", value: body };
  }
  const sha256 = holder["bodySha256"];
  if (sha256 === undefined) return { kind: "none" };
  const size = holder["bodySize"];
  if (typeof sha256 !== "string" || !/^[0-9a-f]{64}$/.test(sha256)) return `key "bodySha256" must be 64 lowercase hex digits`;
  if (!Number.isSafeInteger(size) || (size as number) < 0) return `key "bodySize" must be a byte count`;
  return { kind: "hash", sha256, size: size as number };
}

function statusOf(value: unknown): number | null | undefined {
  if (value === null) return null;
  return Number.isInteger(value) && (value as number) >= 100 && (value as number) <= 599 ? (value as number) : undefined;
}
