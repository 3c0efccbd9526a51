import { checkShape } from "../messages/check-fast.js";
import type { ShapeIssue } from "../messages/check.js";
import { isMessageType, type MessageType } from "../messages/names.js";
import { isPlainObject } from "../json/parse.js";
import type { RequestVerdict } from "./verdict.js";

/*
 * What a received body is, and its shape check (docs/receiver.md#shape-check). The classic
 * destination sends one message; Webhooks (Actions) sends the mapping's `data`: the whole message
 * by default, any object built from it otherwise (a mapped payload), nothing at all when the data
 * is empty, or a JSON array of each event's data (a batch, `null` for an event without data).
 */

/** `message`: an object whose `type` is a message type; `payload`: any other object; `none`: an empty body. */
export type BodyKind = RequestVerdict["bodyKind"];

/** What a batch holds, element by element (`empty`: `null` elements, events whose data was empty). */
export type BatchSummary = NonNullable<RequestVerdict["batch"]>;

export interface BodyJudgement {
  kind: BodyKind;
  batch: BatchSummary | null;
  errors: ShapeIssue[];
  warnings: ShapeIssue[];
}

/** One element of a batch, as judged (the inspector lists them). */
export interface ElementJudgement {
  kind: "message" | "payload" | "empty" | "invalid";
  /** The element's `type` when it is a message type. */
  type: MessageType | undefined;
  errors: ShapeIssue[];
  warnings: ShapeIssue[];
}

/** Issues of each kind a batch's verdict names; the rest are counted in one more issue (a batch holds up to 4,000 elements). */
export const MAX_BATCH_ISSUES = 100;

const STRICT_NOTE = "--strict judges messages only";
const NONE: BodyJudgement = { kind: "none", batch: null, errors: [], warnings: [] };
const NO_ISSUES: ShapeIssue[] = [];

/**
 * Judges a parsed body. Without `strict`, an object is judged as a message only when its `type` is
 * one of the seven message types; any other object is a mapped payload (no shape to check), an
 * empty body is a request without data, and a batch's `null` elements are events without data.
 * With `strict`, every body, and every element of a batch, must be a message: today's classic
 * check, unknown keys included.
 */
export function judgeBody(body: unknown, empty: boolean, problem: string | null, strict: boolean): BodyJudgement {
  if (empty) return strict ? { ...NONE, errors: [{ key: "(body)", message: `the body is empty (${STRICT_NOTE})` }] } : NONE;
  if (problem !== null) return { kind: "invalid", batch: null, errors: [{ key: "(body)", message: problem }], warnings: [] };
  if (Array.isArray(body)) return judgeBatch(body, strict);
  const message = isPlainObject(body) && isMessageType(body["type"]);
  if (message || strict) {
    const check = checkShape(body, strict);
    return { kind: message ? "message" : isPlainObject(body) ? "payload" : "invalid", batch: null, errors: check.errors, warnings: check.warnings };
  }
  if (isPlainObject(body)) return { kind: "payload", batch: null, errors: NO_ISSUES, warnings: NO_ISSUES };
  const error = { key: "(body)", message: `expected a JSON object (a message or a mapped payload) or an array (a batch), got ${describe(body)}` };
  return { kind: "invalid", batch: null, errors: [error], warnings: [] };
}

/** One element of a batch: a message (shape-checked), a mapped payload, `null` (no data), or something the destination never sends. */
export function judgeElement(element: unknown, strict: boolean): ElementJudgement {
  if (element === null) {
    const errors = strict ? [{ key: "(element)", message: `null (an event without data), not a message (${STRICT_NOTE})` }] : NO_ISSUES;
    return { kind: "empty", type: undefined, errors, warnings: NO_ISSUES };
  }
  if (!isPlainObject(element)) {
    const message = `expected an object (an event's data) or null, got ${describe(element)}`;
    return { kind: "invalid", type: undefined, errors: [{ key: "(element)", message }], warnings: NO_ISSUES };
  }
  const type = element["type"];
  if (!isMessageType(type) && !strict) return { kind: "payload", type: undefined, errors: NO_ISSUES, warnings: NO_ISSUES };
  const check = checkShape(element, strict);
  return { kind: isMessageType(type) ? "message" : "payload", type: isMessageType(type) ? type : undefined, errors: check.errors, warnings: check.warnings };
}

function judgeBatch(elements: unknown[], strict: boolean): BodyJudgement {
  const batch: BatchSummary = { elements: elements.length, messages: 0, payloads: 0, empty: 0 };
  if (elements.length === 0) {
    const message = "an empty batch ([]): Webhooks (Actions) sends no request when no event has data to send";
    return { kind: "batch", batch, errors: [{ key: "(body)", message }], warnings: [] };
  }
  const errors = new IssueList("errors");
  const warnings = new IssueList("warnings");
  for (let i = 0; i < elements.length; i++) {
    const value = elements[i];
    // The elements that need no check are only counted: a batch may hold 300,000 of them.
    if (!strict && value === null) {
      batch.empty += 1;
      continue;
    }
    if (!strict && isPlainObject(value) && !isMessageType(value["type"])) {
      batch.payloads += 1;
      continue;
    }
    if (errors.full && (value === null || typeof value !== "object")) {
      errors.skip();
      continue;
    }
    const element = judgeElement(value, strict);
    if (element.kind === "message") batch.messages += 1;
    else if (element.kind === "payload") batch.payloads += 1;
    else if (element.kind === "empty") batch.empty += 1;
    for (const issue of element.errors) errors.add(i, issue);
    for (const issue of element.warnings) warnings.add(i, issue);
  }
  return { kind: "batch", batch, errors: errors.done(), warnings: warnings.done() };
}

/** A batch's issues, each named by its element (`[2].event`, `element 2: …`), at most MAX_BATCH_ISSUES and a count of the rest. */
class IssueList {
  private readonly issues: ShapeIssue[] = [];
  private more = 0;

  constructor(private readonly what: string) {}

  get full(): boolean {
    return this.issues.length >= MAX_BATCH_ISSUES;
  }

  /** One more issue, only counted (the list is full). */
  skip(): void {
    this.more += 1;
  }

  add(index: number, issue: ShapeIssue): void {
    if (this.full) return this.skip();
    const key = issue.key.startsWith("(") ? `[${index}]` : `[${index}].${issue.key}`;
    this.issues.push({ key, message: `element ${index}: ${issue.message}` });
  }

  done(): ShapeIssue[] {
    if (this.more > 0) this.issues.push({ key: "(more)", message: `… and ${this.more} more ${this.what} in the batch's elements` });
    return this.issues;
  }
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string") return "a string";
  return `a ${typeof value}`;
}
