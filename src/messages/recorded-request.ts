import { isPlainObject } from "../json/parse.js";

/**
 * A line of a `listen --record` recording or a dead-letter file, as opposed to a message: a JSON
 * object with `body` and no `type` (docs/recording.md#replay-input). `replay` sends either; `send`
 * sends messages only, and names `replay` when given recorded requests.
 */
export function isRecordedRequest(value: unknown): value is Record<string, unknown> {
  return isPlainObject(value) && !Object.hasOwn(value, "type") && Object.hasOwn(value, "body");
}
