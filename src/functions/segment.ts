import { type InvocationState, MAX_EMITTED } from "./invocation.js";
import type { EmittedMessage } from "./types.js";

type CallType = EmittedMessage["type"];

/** Per call: the keys it requires (undefined or "" is missing), and the keys of its own it keeps. */
const CALLS: Readonly<Record<CallType, { required: readonly string[]; own: readonly string[] }>> = {
  identify: { required: [], own: ["traits"] },
  track: { required: ["event"], own: ["event", "properties"] },
  page: { required: [], own: ["name", "properties"] },
  screen: { required: [], own: ["name", "properties"] },
  group: { required: ["groupId"], own: ["groupId", "traits"] },
  alias: { required: ["previousId"], own: ["previousId"] },
};
/** The common fields a call may carry; the service sets receivedAt and the rest. */
const COMMON = ["userId", "anonymousId", "context", "integrations", "messageId", "sentAt", "timestamp"] as const;
/** Kept even when falsy (other than missing), as the service's own shim keeps them. */
const KEPT_AS_GIVEN = new Set(["event", "groupId"]);

/**
 * The `Segment` global of source functions (docs/functions.md#segment): each call checks its
 * argument as the service does (`ValidationError` for a missing `event`, `groupId`, `previousId`,
 * `collection` or `id`, or neither `userId` nor `anonymousId`), keeps only the fields of its type
 * with a value (any other key is dropped), and is recorded, in order, on the running invocation.
 */
export function segmentGlobal(
  current: () => InvocationState | undefined,
  ValidationError: new (message: string) => Error,
): Record<string, (d: unknown) => unknown> {
  const invocation = (method: string): InvocationState => {
    const state = current();
    if (!state || state.ended)
      throw new Error(`Segment.${method} was called outside an invocation (at load, or after the handler ended): the service drops it`);
    if (state.messages.length + state.objects.length >= MAX_EMITTED) throw new RangeError(`more than ${MAX_EMITTED} Segment calls in one invocation`);
    return state;
  };
  const argument = (method: string, d: unknown): Record<string, unknown> => {
    if (typeof d !== "object" || d === null) throw new TypeError(`Segment.${method} takes an object`);
    return d as Record<string, unknown>;
  };
  const require = (d: Record<string, unknown>, key: string): void => {
    if (d[key] === undefined || d[key] === "") throw new ValidationError(`${key} is required but not defined`);
  };

  const call =
    (type: CallType) =>
    (input: unknown): EmittedMessage => {
      const state = invocation(type);
      const d = argument(type, input);
      for (const key of CALLS[type].required) require(d, key);
      if (!d["userId"] && !d["anonymousId"]) throw new ValidationError("One of userId,anonymousId is required but not defined");
      const message: EmittedMessage = { type };
      for (const key of [...CALLS[type].own, ...COMMON]) {
        if (KEPT_AS_GIVEN.has(key) || d[key]) message[key] = d[key];
      }
      state.emit(message);
      return message;
    };

  return {
    identify: call("identify"),
    track: call("track"),
    page: call("page"),
    screen: call("screen"),
    group: call("group"),
    alias: call("alias"),
    set(input: unknown) {
      const state = invocation("set");
      const d = argument("set", input);
      require(d, "collection");
      require(d, "id");
      const object = { collection: d["collection"] as string, id: d["id"] as string, ...(d["properties"] ? { properties: d["properties"] } : {}) };
      state.objects.push(JSON.parse(JSON.stringify(object)));
      return object;
    },
  };
}
