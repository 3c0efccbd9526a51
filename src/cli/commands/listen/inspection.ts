import type { ControlApi } from "../../../control/api.js";
import { startControlServer } from "../../../control/server.js";
import { Inspection } from "../../../inspector/inspection.js";
import type { ForwardRoutes } from "../../../receiver/forward-routes.js";
import type { SignatureSettings } from "../../../receiver/signature-check.js";
import type { RecordingFile } from "../../../receiver/record.js";
import type { CliIo } from "../../terminal/io.js";
import type { Output } from "../../terminal/output.js";
import { reportResend } from "../../terminal/resend-line.js";
import type { ListenFlags } from "./options.js";

/** listen's inspector: the rows it keeps, its page, and how a resend is reported. */

/** The page's port with --ui when --ui-port is not given. */
const DEFAULT_UI_PORT = 4040;

/** Rows are kept only for a page or the `r` key; without either, the hot path stays as it was. */
export function createInspection(
  options: ListenFlags,
  io: CliIo,
  signing: SignatureSettings,
  routes: ForwardRoutes | undefined,
  output: Output,
): Inspection | undefined {
  if (options.ui !== true && io.stdinIsTTY !== true) return undefined;
  // Without the page only the latest request is kept (for `r`); a bound that drops rows is named once.
  const limits = options.ui ? { keep: options.uiKeep, maxBytes: options.uiHistoryMb * 1024 * 1024 } : { keep: 0 };
  return new Inspection({
    signing,
    strict: options.strict,
    routes,
    ...limits,
    onResent: (row) => reportResend(row, output),
    onDropped: (notice) => output.warn(`inspector: ${notice.message}; the page shows the newest (a --record file keeps every request)`),
  });
}

/** listen's control port (docs/receiver.md#control-api): where it is, the page's URL with --ui, and how it stops. */
export interface ControlPort {
  url: string;
  page: string | undefined;
  close(): Promise<void>;
}

/**
 * Opens the control port: the page's port with --ui (--ui-port, default 4040), else the control API
 * alone on --ui-port or any free port, so parallel jobs never collide. When the port is unusable,
 * what listen opened is closed before the error is reported.
 */
export async function serveControl(
  inspection: Inspection | undefined,
  options: Pick<ListenFlags, "ui" | "uiPort">,
  api: ControlApi,
  opened: readonly ({ close(): Promise<void> } | undefined)[],
  recording: RecordingFile | undefined,
): Promise<ControlPort> {
  try {
    if (inspection && options.ui) {
      const page = await inspection.serve(options.uiPort ?? DEFAULT_UI_PORT, api);
      // The page's server closes with the inspection.
      return { url: page, page, close: async () => api.close() };
    }
    const server = await startControlServer(options.uiPort ?? 0, api);
    return { url: server.url, page: undefined, close: () => server.close() };
  } catch (error) {
    await Promise.all(opened.map((item) => item?.close()));
    recording?.close();
    throw error;
  }
}
