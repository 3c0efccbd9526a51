/**
 * The last line of a sending command, one wording for `send` and `replay` (docs/cli.md#summary):
 * `7 messages: 6 delivered, 1 failed, 2 retried` (`, 2 skipped` after delivered when a destination
 * function skipped any), then `, 3 not delivered (interrupted)` when the
 * run was stopped, then the command's own counts (`24 filtered out`).
 */
export interface DeliveryCounts {
  messages: number;
  delivered: number;
  /** Skipped by a destination function (shown when any). */
  skipped?: number;
  failed: number;
  /** Messages that took more than one round. */
  retried: number;
  /** The run was stopped (a signal, or an error part way): what is neither delivered nor failed was not delivered. */
  interrupted: boolean;
  /** The command's own counts, each already worded (`2 skipped (invalid)`). */
  extras?: readonly string[];
}

export function deliverySummary(c: DeliveryCounts): string {
  const skipped = c.skipped ?? 0;
  const parts = [`${c.delivered} delivered`, ...(skipped > 0 ? [`${skipped} skipped`] : []), `${c.failed} failed`, `${c.retried} retried`];
  if (c.interrupted) parts.push(`${c.messages - c.delivered - skipped - c.failed} not delivered (interrupted)`);
  parts.push(...(c.extras ?? []));
  return `${c.messages} message${c.messages === 1 ? "" : "s"}: ${parts.join(", ")}`;
}
