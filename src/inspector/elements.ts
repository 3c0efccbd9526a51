import { userIdOf } from "../messages/check.js";
import { judgeElement } from "../receiver/body-shape.js";
import { isPlainObject } from "../json/parse.js";

/** Elements of a batch listed in a row's detail; the rest are counted (a batch holds up to 4,000). */
export const MAX_LISTED_ELEMENTS = 1_000;

/** One element of a batch as the detail view lists it: what it is and its shape result. */
export interface ElementView {
  index: number;
  /** `message`, `payload` (a mapped payload), `empty` (null: an event without data), `invalid`. */
  kind: string;
  type: string | null;
  userId: string | null;
  name: string | null;
  /** The element's bytes are what X-Signature covers (element 0 under the Webhooks (Actions) rule). */
  signed: boolean;
  errors: string[];
  warnings: string[];
}

/**
 * A batch's elements, each judged by the verifier's own element check (with listen's --strict),
 * for the detail view; null when the body is not a batch.
 */
export function elementViews(body: unknown, strict: boolean, signatureRule: string | null): { elements: ElementView[]; more: number } | null {
  if (!Array.isArray(body)) return null;
  const listed = Math.min(body.length, MAX_LISTED_ELEMENTS);
  const elements: ElementView[] = [];
  for (let index = 0; index < listed; index++) {
    const element: unknown = body[index];
    const judged = judgeElement(element, strict);
    const message = judged.kind === "message" && isPlainObject(element) ? element : undefined;
    const name = message?.["event"] ?? message?.["name"];
    elements.push({
      index,
      kind: judged.kind,
      type: judged.type ?? null,
      userId: userIdOf(message) ?? null,
      name: typeof name === "string" ? name : null,
      signed: index === 0 && signatureRule === "first-element",
      errors: judged.errors.map((issue) => issue.message),
      warnings: judged.warnings.map((issue) => issue.message),
    });
  }
  return { elements, more: body.length - listed };
}
