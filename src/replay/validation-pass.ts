import { readLineBatches } from "../util/ndjson.js";
import { checkLine } from "./envelope.js";
import { LineBits, LinePlan } from "./line-bits.js";
import { createSelection, type Selection } from "./select.js";
import type { ReplayOptions } from "./types.js";

/** What the validation pass found, and what it decided for each line (the sending pass's plan). */
export interface Validation {
  lines: number;
  messages: number;
  filtered: number;
  invalid: number;
  /** Per line: skipped, or sent (parsed again for its bytes, sent as read canonical, or sent as read under --raw). */
  plan: LineBits;
  /** The last line to send (0 when none): the sending pass reads no further. */
  lastLine: number;
}

/** Pass 1: every line the selection may pick, checked; bad ones reported as found; each line's plan decided. */
export async function validateFile(options: ReplayOptions, selection: Selection): Promise<Validation> {
  const found: Validation = { lines: 0, messages: 0, filtered: 0, invalid: 0, plan: new LineBits(), lastLine: 0 };
  const raw = options.raw === true;
  const markCanonical = options.dryRun !== true;
  for await (const batch of readLineBatches(options.path, options.signal ? { signal: options.signal } : {})) {
    for (const line of batch) {
      found.lines = line.number;
      // Like lines before --from-line, lines outside --line are neither checked nor counted.
      if (!selection.lineMayMatch(line.number)) continue;
      const checked = "error" in line ? { ok: false as const, reason: line.error } : checkLine(line.text, line.number, raw, markCanonical);
      if (!checked.ok) {
        found.invalid += 1;
        options.onInvalid?.(line.number, checked.reason);
        continue;
      }
      if (checked.warning !== undefined) options.onWarning?.(line.number, checked.warning);
      if (!selection.matches({ line: line.number, type: checked.type ?? "", userId: checked.orderKey, messageId: checked.messageId })) {
        found.filtered += 1;
        continue;
      }
      found.messages += 1;
      found.lastLine = line.number;
      // Under --raw a line that is not a known message (the warning) is sent as read; checkLine marks no --raw line canonical.
      found.plan.set(line.number, checked.canonical ? LinePlan.canonical : checked.warning !== undefined ? LinePlan.asRead : LinePlan.parse);
    }
  }
  return found;
}

/** Every selector of a run, assembled once (replay's command shares it with --compare); by default every line. */
export function selectionOf(options: Pick<ReplayOptions, "selection">): Selection {
  return options.selection ?? createSelection({});
}
