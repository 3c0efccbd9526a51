import { readLineBatches } from "../util/ndjson.js";
import { checkLine } from "./envelope.js";
import { LineBits } from "./line-bits.js";
import { createSelection, type Selection } from "./select.js";
import type { ReplayOptions } from "./types.js";

/** What the validation pass found. */
export interface Validation {
  lines: number;
  messages: number;
  filtered: number;
  bad: Set<number>;
  /** Bare messages whose line is JSON.stringify's own output (see checkLine). */
  canonical: LineBits;
}

/** Pass 1: every line from --from-line on, checked; bad ones reported as found. */
export async function validateFile(options: ReplayOptions, fromLine: number): Promise<Validation> {
  const selection = selectionOf(options, fromLine);
  const found: Validation = { lines: 0, messages: 0, filtered: 0, bad: new Set(), canonical: new LineBits() };
  for await (const batch of readLineBatches(options.path, options.signal ? { signal: options.signal } : {})) {
    for (const line of batch) {
      found.lines = line.number;
      // Like lines before --from-line, lines outside --line are neither checked nor counted.
      if (!selection.lineMayMatch(line.number)) continue;
      const checked =
        "error" in line ? { ok: false as const, reason: line.error } : checkLine(line.text, line.number, options.raw === true, options.dryRun !== true);
      if (!checked.ok) {
        found.bad.add(line.number);
        options.onInvalid?.(line.number, checked.reason);
        continue;
      }
      if (checked.warning !== undefined) options.onWarning?.(line.number, checked.warning);
      if (checked.canonical) found.canonical.add(line.number);
      if (selection.matches({ line: line.number, type: checked.type ?? "", userId: checked.orderKey, messageId: checked.messageId })) found.messages += 1;
      else found.filtered += 1;
    }
  }
  return found;
}

/** Every selector of the run; a line whose type is unknown (--raw) matches no --type. */
export function selectionOf(options: ReplayOptions, fromLine: number): Selection {
  return createSelection({ ...options.select, ...(options.types ? { types: options.types } : {}), fromLine });
}
