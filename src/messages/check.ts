import { FIELDS, isMessageType, type Message, type MessageType } from "./schemas.js";

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
}

/**
 * Checks a parsed body against the shape of its `type` (SPEC.md 4.1). Every
 * problem is named by key; real traffic with extra keys passes with warnings.
 */
export function checkMessage(value: unknown, options: CheckOptions = {}): ShapeCheck {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { type: undefined, errors: [{ key: "(body)", message: `expected a JSON object, got ${describe(value)}` }], warnings: [] };
  }
  const message = value as Record<string, unknown>;
  const type = message["type"];
  if (!isMessageType(type)) {
    const message_ =
      type === undefined
        ? `missing required key "type"`
        : `key "type": expected one of page, screen, identify, track, alias, group, delete, got ${describe(type)}`;
    return { type: undefined, errors: [{ key: "type", message: message_ }], warnings: [] };
  }
  const camelAlias = type === "alias" && !("Previous ID" in message || "User ID" in message) && ("previousId" in message || "userId" in message);
  const fields = camelAlias ? FIELDS.aliasCamel : FIELDS[type];
  const errors: ShapeIssue[] = [];
  const unknown: ShapeIssue[] = [];

  for (const [key, spec] of Object.entries(fields)) {
    const present = Object.hasOwn(message, key) && message[key] !== undefined;
    if (!present) {
      const identityCovered = spec.presence === "identity" && typeof message["anonymousId"] === "string";
      if (spec.presence === "optional" || identityCovered) continue;
      const alternative = spec.presence === "identity" ? ` (or "anonymousId")` : "";
      errors.push({ key, message: `missing required key "${key}"${alternative}` });
      continue;
    }
    const result = spec.schema.safeParse(message[key]);
    if (!result.success) {
      const issue = result.error.issues[0];
      const path = issue && issue.path.length > 0 ? `.${issue.path.join(".")}` : "";
      errors.push({ key, message: `key "${key}${path}": ${issueText(issue?.message, message[key])}` });
    }
  }
  for (const key of Object.keys(message)) {
    if (!Object.hasOwn(fields, key)) unknown.push({ key, message: `unknown key "${key}" for type ${type}` });
  }
  return options.strict
    ? { type, errors: [...errors, ...unknown], warnings: [] }
    : { type, errors, warnings: unknown };
}

/** The message, typed, when it has no errors (unknown keys allowed unless `strict`). */
export function isValidMessage(value: unknown, options: CheckOptions = {}): value is Message {
  return checkMessage(value, options).errors.length === 0;
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
