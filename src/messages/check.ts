import { isPlainObject } from "../json/parse.js";
import { FIELDS, NULLABLE_COMMON_KEYS, isMessageType, type FieldSpec, type MessageType } from "./schemas.js";

export interface ShapeIssue {
  /** The top-level key concerned, or `(body)` for the message as a whole. */
  key: string;
  message: string;
}

export interface ShapeCheck {
  /** The message's `type` when it is one of the seven. */
  type: MessageType | undefined;
  /** Missing or wrongly typed required keys: the message is invalid. */
  errors: ShapeIssue[];
  /** Unknown top-level keys: errors under `strict`, warnings otherwise. */
  warnings: ShapeIssue[];
}

export interface CheckOptions {
  /** Unknown keys become errors instead of warnings. */
  strict?: boolean;
  /**
   * An incoming Tracking API call (serve) rather than a delivered message:
   * the fields the service fills in (`version`, `timestamp`, `properties`,
   * `traits`, screen `name`) may be absent, and alias uses camelCase keys.
   */
  call?: boolean;
}

/**
 * Checks a parsed body against the shape of its `type`: what the real service
 * and its clients send (docs/messages.md#accepted-messages). Every problem is named by
 * key; real traffic with extra keys passes with warnings.
 */
export function checkMessage(value: unknown, options: CheckOptions = {}): ShapeCheck {
  if (!isPlainObject(value)) {
    return { type: undefined, errors: [{ key: "(body)", message: `expected a JSON object, got ${describe(value)}` }], warnings: [] };
  }
  const message = value;
  const type = message["type"];
  if (!isMessageType(type)) {
    const message_ =
      type === undefined
        ? `missing required key "type"`
        : `key "type": expected one of page, screen, identify, track, alias, group, delete, got ${describe(type)}`;
    return { type: undefined, errors: [{ key: "type", message: message_ }], warnings: [] };
  }
  const fields = fieldsOf(type, message, options.call === true);
  const errors: ShapeIssue[] = [];
  const unknown: ShapeIssue[] = [];
  let identityChecked = false;

  for (const [key, spec] of Object.entries(fields)) {
    const fieldValue = Object.hasOwn(message, key) ? message[key] : undefined;
    if (spec.presence === "identity" && !identityChecked) {
      identityChecked = true;
      const issue = identityIssue(message, fields, key);
      if (issue) errors.push(issue);
    }
    if (fieldValue === undefined || (fieldValue === null && NULLABLE_COMMON_KEYS.has(key))) {
      if (spec.presence === "required" && !(options.call && spec.call)) errors.push({ key, message: `missing required key "${key}"` });
      continue;
    }
    const result = spec.schema.safeParse(fieldValue);
    if (!result.success) {
      const issue = result.error.issues[0];
      const path = issue && issue.path.length > 0 ? `.${issue.path.join(".")}` : "";
      errors.push({ key, message: `key "${key}${path}": ${issueText(issue?.message, fieldValue)}` });
    }
  }
  for (const key of Object.keys(message)) {
    if (!Object.hasOwn(fields, key)) unknown.push({ key, message: `unknown key "${key}" for type ${type}` });
  }
  return options.strict ? { type, errors: [...errors, ...unknown], warnings: [] } : { type, errors, warnings: unknown };
}

function fieldsOf(type: MessageType, message: Record<string, unknown>, call: boolean): Record<string, FieldSpec> {
  if (type !== "alias") return FIELDS[type];
  const camel = call || (!("Previous ID" in message || "User ID" in message) && ("previousId" in message || "userId" in message));
  return camel ? FIELDS.aliasCamel : FIELDS.alias;
}

/**
 * Whether `userId` or `anonymousId` is a non-empty string (docs/messages.md#required-keys).
 * The types that have identity keys have exactly these two; unrolled, as
 * listen's fast path runs it per request.
 */
export function hasIdentity(message: Record<string, unknown>): boolean {
  const userId = message["userId"];
  if (typeof userId === "string" && userId !== "") return true;
  const anonymousId = message["anonymousId"];
  return typeof anonymousId === "string" && anonymousId !== "";
}

/** No usable identity, named on the first identity key unless a type error there says it already. */
function identityIssue(message: Record<string, unknown>, fields: Record<string, FieldSpec>, key: string): ShapeIssue | undefined {
  if (hasIdentity(message)) return undefined;
  const own = Object.hasOwn(message, key) ? message[key] : undefined;
  if (own !== undefined && own !== null && typeof own !== "string") return undefined;
  const others = Object.keys(fields).filter((k) => k !== key && fields[k]?.presence === "identity");
  const alternative = others.map((k) => ` (or "${k}")`).join("");
  return own === "" || others.some((k) => message[k] === "")
    ? { key, message: `key "${key}": expected a non-empty string${alternative}` }
    : { key, message: `missing required key "${key}"${alternative}` };
}

/**
 * The user a message is about: `userId`, else an alias's `"User ID"`, else
 * `anonymousId` (the first of them that is a string). Replay orders by it;
 * the commands print it.
 */
export function userIdOf(message: Record<string, unknown> | undefined): string | undefined {
  // Unrolled: listen and replay call this once per message.
  const userId = message?.["userId"];
  if (typeof userId === "string") return userId;
  const aliasUserId = message?.["User ID"];
  if (typeof aliasUserId === "string") return aliasUserId;
  const anonymousId = message?.["anonymousId"];
  return typeof anonymousId === "string" ? anonymousId : undefined;
}

function issueText(zodMessage: string | undefined, value: unknown): string {
  const text = zodMessage ?? "invalid value";
  return text.includes("received") ? text : `${text}, got ${describe(value)}`;
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string") return `"${value.length > 40 ? `${value.slice(0, 40)}…` : value}"`;
  if (typeof value === "object") return "an object";
  return `${typeof value} ${String(value)}`;
}
