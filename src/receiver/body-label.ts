import type { MessageType } from "../messages/names.js";
import type { BatchSummary, BodyKind } from "./body-shape.js";

/* How a verdict names its body in lines, lists and reports: light, so a report module can use it. */

/** A short name of what a body is, for lines and lists: the message type, `batch of 3`, `payload`, `no data`, or undefined. */
export function bodyLabel(verdict: { bodyKind: BodyKind; batch: BatchSummary | null; type: MessageType | undefined }): string | undefined {
  switch (verdict.bodyKind) {
    case "message":
      return verdict.type;
    case "batch":
      return `batch of ${verdict.batch?.elements ?? 0}`;
    case "payload":
      return "payload";
    case "none":
      return "no data";
    default:
      return undefined;
  }
}

/** `3 messages, 1 payload, 1 without data`: what a batch holds, for the terminal and the inspector. */
export function batchContents(batch: BatchSummary): string {
  const parts: string[] = [];
  if (batch.messages > 0) parts.push(`${batch.messages} message${batch.messages === 1 ? "" : "s"}`);
  if (batch.payloads > 0) parts.push(`${batch.payloads} payload${batch.payloads === 1 ? "" : "s"}`);
  if (batch.empty > 0) parts.push(`${batch.empty} without data`);
  const other = batch.elements - batch.messages - batch.payloads - batch.empty;
  if (other > 0) parts.push(`${other} invalid`);
  return parts.join(", ");
}
