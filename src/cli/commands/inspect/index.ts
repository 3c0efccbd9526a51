import { resolve } from "node:path";
import { InputError } from "../../../errors.js";
import { RecordingInspection } from "../../../inspector/recording-inspection.js";
import type { Inspected } from "../../../receiver/history/index.js";
import { isReadableFile } from "../../../util/readable-file.js";
import type { CliIo } from "../../terminal/io.js";
import { createOutput, type Output } from "../../terminal/output.js";
import { formatSize } from "../../terminal/request-lines.js";
import { reportResend } from "../../terminal/resend-line.js";
import { receiverChecker } from "../../shared/secret.js";
import type { InspectFlags } from "./options.js";

export interface InspectOptions extends InspectFlags {
  /** The recording to open (docs/recording.md#recording-line). */
  file: string;
}

/**
 * `inspect FILE` (docs/commands/inspect.md): serves a listen recording in the inspector page on
 * 127.0.0.1 until a signal; the file is indexed once and only read. 0 on a signal, 2 when the
 * file cannot be read or the port is unusable.
 */
export async function inspect(options: InspectOptions, io: CliIo): Promise<number> {
  const output = createOutput(io, { json: options.json });
  const checker = receiverChecker(options, io);
  const path = resolve(io.cwd, options.file);
  // Rows are read again by offset: a pipe cannot be read twice.
  if (!isReadableFile(path, { file: options.file })) throw new InputError("not a regular file: inspect reads a recording by offset", { file: options.file });
  let resent = 0;
  const onResent = (row: Inspected): void => {
    resent += 1;
    reportResend(row, output);
  };
  const inspection = await RecordingInspection.open(path, { checker, strict: options.strict, onResent });
  let url: string;
  try {
    url = await inspection.serve(options.port);
  } catch (error) {
    await inspection.close();
    throw error;
  }
  announce(output, inspection, options.file, url, checker.settings.secrets.length > 0);
  await stopped(io.signal);
  await inspection.close();
  output.event("summary", { requests: inspection.requests, resent, exitCode: 0 });
  return 0;
}

/** What was opened, lines skipped (stderr), then the page's URL (or one `inspecting` event). */
function announce(output: Output, inspection: RecordingInspection, file: string, url: string, signed: boolean): void {
  const { index } = inspection;
  const { requests } = inspection;
  if (index.skipped > 0) output.warn(`${index.skipped} line${index.skipped === 1 ? "" : "s"} skipped: ${index.skips.join("; ")}`);
  if (index.firstId > 1) output.warn(`only the newest ${requests} of ${index.count} lines are shown: the index keeps at most that many`);
  if (!signed) output.warn("no secret given (--secret, --secret-file or $WEBHOOK_SECRET): the recorded signature verdicts are shown, and resends go unsigned");
  output.event("inspecting", { url, file, requests, bytes: index.size, skipped: index.skipped });
  output.line(`Opened ${file}: ${requests.toLocaleString("en-US")} request${requests === 1 ? "" : "s"} (${formatSize(index.size)})`);
  output.line(`Inspector: ${url}`);
}

function stopped(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolveStop) => signal.addEventListener("abort", () => resolveStop(), { once: true }));
}
