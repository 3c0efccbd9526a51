import { Inspection } from "../../../inspector/session.js";
import type { ForwardRoutes } from "../../../receiver/forward-routes.js";
import type { RecordingFile } from "../../../receiver/record.js";
import type { CliIo } from "../../io.js";
import type { Output } from "../../output.js";
import { reportResend } from "../../resend-line.js";
import type { ListenFlags } from "./options.js";

/** listen's inspector: the rows it keeps, its page, and how a resend is reported. */

/** Rows are kept only for a page or the `r` key; without either, the hot path stays as it was. */
export function createInspection(
  options: ListenFlags,
  io: CliIo,
  secret: string | undefined,
  routes: ForwardRoutes | undefined,
  output: Output,
): Inspection | undefined {
  if (options.ui !== true && io.stdinIsTTY !== true) return undefined;
  // Without the page only the latest request is kept (for `r`); a bound that drops rows is named once.
  const limits = options.ui ? { keep: options.uiKeep, maxBytes: options.uiHistoryMb * 1024 * 1024 } : { keep: 0 };
  return new Inspection({
    secret,
    strict: options.strict,
    routes,
    ...limits,
    onResent: (row) => reportResend(row, output),
    onDropped: (notice) => output.warn(`inspector: ${notice.message}; the page shows the newest (a --record file keeps every request)`),
  });
}

/** Starts the page; when its port is unusable, what listen opened is closed before the error is reported. */
export async function serveInspector(
  inspection: Inspection,
  port: number,
  opened: readonly ({ close(): Promise<void> } | undefined)[],
  recording: RecordingFile | undefined,
): Promise<string> {
  try {
    return await inspection.serve(port);
  } catch (error) {
    await Promise.all(opened.map((item) => item?.close()));
    recording?.close();
    throw error;
  }
}
