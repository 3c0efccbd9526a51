import type { ChalkInstance } from "chalk";
import { eventOf, problemOf } from "../../receiver/arrivals.js";
import type { ForwardResult } from "../../receiver/forward.js";
import type { ReceivedRequest } from "../../receiver/received-request.js";
import { batchContents, bodyLabel } from "../../receiver/body-label.js";
import { readJsonBody, type RequestVerdict } from "../../receiver/verdict.js";
import { formatDuration } from "../../util/duration.js";
import { printable, printableLines } from "../../safe-text/printable.js";
import { prettyJson } from "../../json/pretty.js";
import { describeSkew } from "../../signing/verify.js";

/*
 * How a received request is shown, one line (and its problems) or one JSON event:
 * `listen` and `demo` print requests alike, and demo must not load listen's module
 * (the inspector, keys, ready and JUnit files come with it).
 */

/** Colour functions that are identity when colour is off (no chalk on the hot path). */
export interface Painter {
  ok(text: string): string;
  bad(text: string): string;
  dim(text: string): string;
  warn(text: string): string;
}

const plain = (text: string): string => text;

export function painter(color: ChalkInstance): Painter {
  if (color.level === 0) return { ok: plain, bad: plain, dim: plain, warn: plain };
  return { ok: (t) => color.green(t), bad: (t) => color.red(t), dim: (t) => color.dim(t), warn: (t) => color.yellow(t) };
}

/**
 * `#3 POST /hooks  track  user_1  "Order Completed"  signature ok  482 B  → 200`, or for the other
 * bodies `#4 PUT /hooks  batch of 3 (3 messages)  signature ok (element 0)  …`, `payload, not a
 * message`, `no data`; then indented problems.
 */
export function requestLines(request: ReceivedRequest, paint: Painter, verbose: boolean, secrets = 1): string {
  return `#${request.index} ${afterNumber(request, paint, verbose, secrets)}`;
}

/** A request's lines past `#N `. RequestLineMaker reuses the text of a plain request for the next one alike: a field shown here must be in PlainFacts too. */
function afterNumber(request: ReceivedRequest, paint: Painter, verbose: boolean, secrets: number): string {
  const v = request.verdict;
  const signature = signatureText(v, paint, secrets);
  const answer = request.forwarded
    ? forwardedAnswer(request.forwarded, paint)
    : request.fault === "timeout"
      ? "held (timeout)"
      : request.fault === "drop"
        ? "dropped"
        : `${request.status ?? ""}${request.injected ? " (injected)" : request.rule !== null ? ` (rule ${request.rule})` : ""}`;
  // Every field a sender chose is escaped before it is painted: no control character reaches the terminal.
  let text = `${printable(request.method)} ${printable(request.path)}  ${bodyText(v, paint)}  ${signature}  ${formatSize(v.size)}  → ${answer}`;
  if (!verbose && v.shapeWarnings.length > 0) text += paint.dim(`  (+${v.shapeWarnings.length} unknown key${v.shapeWarnings.length === 1 ? "" : "s"})`);
  if (v.signatureValid === false) {
    text += `\n    ${paint.bad("signature:")} ${printable(v.signatureError ?? "")}`;
    if (v.diagnosis) text += `\n    ${paint.warn("likely cause:")} ${printable(v.diagnosis.message)}`;
  }
  for (const error of v.shapeErrors) text += `\n    ${paint.bad("shape:")} ${printable(error.message)}`;
  if (verbose) {
    if (v.signatureNote !== null) text += `\n    ${paint.dim("signature:")} ${v.signatureNote}`;
    for (const warning of v.shapeWarnings) text += `\n    ${paint.warn("warning:")} ${printable(warning.message)}`;
    text += `\n${printableLines(shownBody(request)).replace(/^/gm, "    ")}`;
  }
  return text;
}

/** What the line of a plain request shows (see isPlain): two requests alike in these have the same text past their number. */
interface PlainFacts {
  method: string;
  path: string;
  status: number | null;
  injected: boolean;
  rule: number | null;
  fault: ReceivedRequest["fault"];
  kind: RequestVerdict["bodyKind"];
  type: RequestVerdict["type"];
  userId: string | undefined;
  name: string | undefined;
  signatureValid: boolean | null;
  signatureRule: RequestVerdict["signatureRule"];
  signatureNote: string | null;
  signatureScheme: RequestVerdict["signatureScheme"];
  signatureSecret: number | null;
  skewSeconds: number | null;
  size: number;
}

/**
 * listen's request lines, one request after another: a burst of alike requests (the same path,
 * user, event and answer) differ only in their number, so the rest of the line is made once and
 * reused while the requests stay plain and alike. Under load this is most of what printing costs.
 */
export class RequestLineMaker {
  private last: PlainFacts | undefined;
  private lastText = "";

  constructor(
    private readonly paint: Painter,
    private readonly verbose: boolean,
    /** How many secrets listen was given: with several, a verified line says which matched. */
    private readonly secrets = 1,
  ) {}

  /** The same text as requestLines. */
  lines(request: ReceivedRequest): string {
    if (!isPlain(request, this.verbose)) return requestLines(request, this.paint, this.verbose, this.secrets);
    if (this.last === undefined || !alike(this.last, request)) {
      this.last = factsOf(request, this.last);
      this.lastText = afterNumber(request, this.paint, this.verbose, this.secrets);
    }
    return `#${request.index} ${this.lastText}`;
  }
}

/** Not verbose, not relayed, not a batch, a signature not failed, no shape errors or warnings: one line, made from PlainFacts alone. */
function isPlain(request: ReceivedRequest, verbose: boolean): boolean {
  const v = request.verdict;
  return !verbose && request.forwarded === null && v.batch === null && v.signatureValid !== false && v.shapeErrors.length === 0 && v.shapeWarnings.length === 0;
}

function alike(facts: PlainFacts, request: ReceivedRequest): boolean {
  const v = request.verdict;
  return (
    facts.method === request.method &&
    facts.path === request.path &&
    facts.status === request.status &&
    facts.injected === request.injected &&
    facts.rule === request.rule &&
    facts.fault === request.fault &&
    facts.kind === v.bodyKind &&
    facts.type === v.type &&
    facts.userId === v.userId &&
    facts.name === v.name &&
    facts.signatureValid === v.signatureValid &&
    facts.signatureRule === v.signatureRule &&
    facts.signatureNote === v.signatureNote &&
    facts.signatureScheme === v.signatureScheme &&
    facts.signatureSecret === v.signatureSecret &&
    facts.skewSeconds === v.skewSeconds &&
    facts.size === v.size
  );
}

/** The facts of `request`, written into `into` when given (one object for a whole run). */
function factsOf(request: ReceivedRequest, into: PlainFacts | undefined): PlainFacts {
  const v = request.verdict;
  const facts = into ?? ({} as PlainFacts);
  facts.method = request.method;
  facts.path = request.path;
  facts.status = request.status;
  facts.injected = request.injected;
  facts.rule = request.rule;
  facts.fault = request.fault;
  facts.kind = v.bodyKind;
  facts.type = v.type;
  facts.userId = v.userId;
  facts.name = v.name;
  facts.signatureValid = v.signatureValid;
  facts.signatureRule = v.signatureRule;
  facts.signatureNote = v.signatureNote;
  facts.signatureScheme = v.signatureScheme;
  facts.signatureSecret = v.signatureSecret;
  facts.skewSeconds = v.skewSeconds;
  facts.size = v.size;
  return facts;
}

/** What the body is: `track  user_1  "Order Completed"` for a message, `batch of 3 (…)`, `payload, not a message`, `no data`. */
function bodyText(v: RequestVerdict, paint: Painter): string {
  if (v.bodyKind === "batch" && v.batch) {
    const contents = batchContents(v.batch);
    return `${bodyLabel(v)}${contents === "" ? "" : ` (${contents})`}`;
  }
  if (v.bodyKind === "payload") return "payload, not a message";
  if (v.bodyKind === "none") return "no data";
  // A message (or a body that is none of these): its type, user and event or screen name.
  return `${v.type ?? paint.bad("?")}  ${v.userId !== undefined ? printable(v.userId) : "-"}${v.name !== undefined ? `  ${printable(JSON.stringify(v.name))}` : ""}`;
}

/**
 * `signature ok`, naming the bytes for a batch, the scheme when it is not X-Signature
 * (`signature ok (standard, secret 2 of 2, 3 s old)`); `signature FAILED (stripe)`; `unsigned`,
 * saying why when the sender signs no such request.
 */
function signatureText(v: RequestVerdict, paint: Painter, secrets: number): string {
  const scheme = v.signatureScheme !== null && v.signatureScheme !== "default" ? v.signatureScheme : null;
  if (v.signatureValid === false) return paint.bad(scheme === null ? "signature FAILED" : `signature FAILED (${scheme})`);
  if (v.signatureValid === true) {
    const secret = secrets > 1 && v.signatureSecret !== null ? `secret ${v.signatureSecret} of ${secrets}` : null;
    const skew = v.skewSeconds !== null && v.skewSeconds !== 0 ? describeSkew(v.skewSeconds) : null;
    const bytes = v.signatureRule === "first-element" ? "element 0" : v.bodyKind === "batch" ? "whole body" : null;
    const said = [scheme, bytes, secret, skew].filter((part) => part !== null);
    return paint.ok(said.length === 0 ? "signature ok" : `signature ok (${said.join(", ")})`);
  }
  if (v.signatureNote === null) return paint.dim("unsigned");
  return paint.dim(v.bodyKind === "batch" ? "unsigned (element 0 is null: none is sent)" : "unsigned (no data: none is sent)");
}

/** The body for --verbose, read again from the bytes: pretty when that stays small (MAX_PRETTY_CHARS), else as received. */
function shownBody(request: ReceivedRequest): string {
  if (request.raw.length < request.verdict.size) return "(body not read)";
  if (request.verdict.size === 0) return "(no body)";
  const { text, body } = readJsonBody(request.raw);
  if (text === null) return "(not UTF-8)";
  return (body !== undefined ? prettyJson(body) : null) ?? text;
}

/** `201 from the app in 12ms`, or listen's own 502/504 with the reason. */
function forwardedAnswer(result: ForwardResult, paint: Painter): string {
  if (result.fromApp) return `${result.status} from the app in ${formatDuration(result.ms)}`;
  return paint.bad(`${result.status}: ${result.error ?? "no answer from the app"}`);
}

/** The `request` JSON event's fields (docs/cli.md#json-events), plus `diagnosis` when a signature failed. */
export function requestEvent(request: ReceivedRequest): Record<string, unknown> {
  const v = request.verdict;
  const fields: Record<string, unknown> = {
    method: request.method,
    path: request.path,
    type: v.type ?? null,
    userId: v.userId ?? null,
    // The verdict in the control API's words (docs/receiver.md#control-api): a reader of the
    // events (the GitHub Action's summary) need not judge the fields below a second time.
    eventName: eventOf(v),
    valid: v.valid,
    problem: problemOf(v),
    signatureValid: v.signatureValid,
    signatureRule: v.signatureRule,
    signatureScheme: v.signatureScheme,
    bodyKind: v.bodyKind,
    shapeErrors: v.shapeErrors,
    status: request.status,
  };
  if (v.batch !== null) fields["batch"] = v.batch;
  if (v.signatureNote !== null) fields["signatureNote"] = v.signatureNote;
  if (v.signatureReason !== null) fields["signatureReason"] = v.signatureReason;
  if (v.signatureSecret !== null) fields["signatureSecret"] = v.signatureSecret;
  if (v.skewSeconds !== null) fields["skewSeconds"] = v.skewSeconds;
  if (request.fault !== null) fields["fault"] = request.fault;
  if (request.rule !== null) fields["rule"] = request.rule;
  if (request.forwarded) {
    const { fromApp, status, ms, error } = request.forwarded;
    fields["app"] = { status: fromApp ? status : null, ms, error };
  }
  if (v.signatureValid === false) fields["diagnosis"] = v.diagnosis?.message ?? v.signatureError;
  return fields;
}

export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
