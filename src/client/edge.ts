import { Analytics as Client } from "./analytics.js";
import type { AnalyticsOptions } from "./types.js";

/**
 * The client as the package exports it: the one place where the environment
 * and stderr come in. `DEBUG` is read once, at load (docs/serve-api.md#client-logging); the client
 * itself reads no environment and writes no stream, only its `log` option.
 */
const DEBUG_FROM_ENV = debugFromEnv(process.env.DEBUG);

/** `DEBUG=analytics` (also in a comma/space separated list, or `analytics*`, or `*`) turns logging on. */
function debugFromEnv(value: string | undefined): boolean {
  if (!value) return false;
  return value.split(/[\s,]+/).some((name) => name === "analytics" || name === "*" || name.startsWith("analytics:") || name === "analytics*");
}

function stderrLog(line: string): void {
  process.stderr.write(`${line}\n`);
}

/** The batching analytics client (docs/serve-api.md#client-library), logging to stderr: debug lines under `DEBUG=analytics`, errors nobody listens for always. */
export class Analytics extends Client {
  constructor(writeKey: string, options: AnalyticsOptions = {}) {
    super(writeKey, { debug: DEBUG_FROM_ENV, log: stderrLog, ...options });
  }
}
