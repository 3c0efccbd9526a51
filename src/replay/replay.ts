import { InputError, UsageError } from "../errors.js";
import { sendableEntries, sendFile } from "./sending-pass.js";
import type { ReplayOptions, ReplaySummary } from "./types.js";
import { selectionOf, validateFile, type Validation } from "./validation-pass.js";

/**
 * Replays an NDJSON file: a validation pass (nothing is sent when a line is bad
 * unless `skipInvalid`), then a sending pass through the dispatcher. Both
 * passes stream, so memory stays constant.
 */
export async function replay(options: ReplayOptions): Promise<ReplaySummary> {
  const selection = selectionOf(options);
  const fromLine = selection.fromLine;
  const validation = await validateFile(options, selection);
  if (validation.invalid > 0 && !options.skipInvalid && !options.signal?.aborted) {
    const n = validation.invalid;
    throw new InputError(`${n} bad line${n === 1 ? "" : "s"}; nothing sent (--skip-invalid sends the rest)`, { file: options.name });
  }
  const summary = emptySummary(validation, options.dryRun === true);
  // Interrupted while validating: nothing was sent, resume where this run started.
  if (options.signal?.aborted) return { ...summary, resumeLine: fromLine };
  if (validation.messages === 0 && options.allowEmpty !== true) throw nothingToSend(options, fromLine, validation);
  if (options.dryRun) {
    if (options.onDryRun) for await (const batch of sendableEntries(options, validation, options.signal, undefined)) batch.forEach(options.onDryRun);
    return summary;
  }
  return sendFile(options, fromLine, validation, summary);
}

/** Why a run would send nothing: a mistake in a script far more often than not, so exit 2 unless --allow-empty. */
function nothingToSend(options: ReplayOptions, fromLine: number, found: Validation): Error {
  const allow = "; nothing sent (--allow-empty accepts that)";
  if (fromLine > 1 && fromLine > found.lines) {
    return new UsageError(`nothing to send: --from-line ${fromLine} is past the end of ${options.name} (${found.lines} lines)${allow}`, { field: "fromLine" });
  }
  const reason =
    found.filtered > 0
      ? `no line matched the filters (${found.filtered} filtered out)`
      : found.invalid > 0
        ? `every line was skipped as invalid (${found.invalid})`
        : "the input is empty";
  return new InputError(`nothing to send: ${reason}${allow}`, { file: options.name });
}

function emptySummary(validation: Validation, dryRun: boolean): ReplaySummary {
  return {
    lines: validation.lines,
    messages: validation.messages,
    invalid: validation.invalid,
    filtered: validation.filtered,
    sent: 0,
    delivered: 0,
    skipped: 0,
    failed: 0,
    interrupted: 0,
    retried: 0,
    deadLettered: 0,
    p50Ms: 0,
    p99Ms: 0,
    elapsedMs: 0,
    eventsPerSecond: 0,
    dryRun,
    resumeLine: undefined,
    deliveredAfterResume: 0,
  };
}
