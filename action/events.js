// @ts-check
// What a run of listen or serve reported, read from its --json events (docs/cli.md#json-events)
// line by line, in bounded memory: counts by type and verdict, the first requests of each
// verdict, and the summary event (absent when the process did not stop on its own terms).
import { createReadStream, existsSync } from "node:fs";
import { createInterface } from "node:readline";

/** The requests listed in the job summary: the summary file is capped at 1 MiB by the runner. */
export const MAX_LISTED = { invalid: 100, valid: 50 };

/**
 * A `request` event (listen) with its number and a label for its type; `rejected`, `unauthorized`
 * and `delivery` events (serve) are kept as they are.
 * @typedef {{ event: string, [field: string]: any }} Event
 * @typedef {Event & { index: number, label: string }} Listed
 * @typedef {{
 *   listening: Event | undefined, summary: Event | undefined, byType: Map<string, { valid: number, invalid: number }>,
 *   invalid: Listed[], valid: Listed[], problems: Event[], unreadable: number, requests: number
 * }} Run
 */

/**
 * @param {string} file the command's stdout under --json
 * @returns {Promise<Run>}
 */
export async function readRun(file) {
  /** @type {Run} */
  const run = { listening: undefined, summary: undefined, byType: new Map(), invalid: [], valid: [], problems: [], unreadable: 0, requests: 0 };
  if (!existsSync(file)) return run;
  const lines = createInterface({ input: createReadStream(file, "utf8"), crlfDelay: Number.POSITIVE_INFINITY });
  for await (const line of lines) {
    if (line.trim() === "") continue;
    /** @type {Event} */
    let event;
    try {
      event = JSON.parse(line);
    } catch {
      run.unreadable += 1;
      continue;
    }
    if (event === null || typeof event !== "object") {
      run.unreadable += 1;
      continue;
    }
    take(run, event);
  }
  return run;
}

/** @param {Run} run @param {Event} event */
function take(run, event) {
  switch (event.event) {
    case "listening":
      run.listening = event;
      break;
    case "summary":
      run.summary = event;
      break;
    case "request":
      takeRequest(run, event);
      break;
    // serve: a call dropped from a batch, a request with a wrong write key, a message given up.
    case "rejected":
    case "unauthorized":
    case "delivery":
      if (run.problems.length < MAX_LISTED.invalid) run.problems.push(event);
      break;
  }
}

/** @param {Run} run @param {Event} event */
function takeRequest(run, event) {
  run.requests += 1;
  const index = run.requests;
  /** @type {string} */
  const label = event["type"] ?? KIND_LABELS[event["bodyKind"]] ?? event["bodyKind"] ?? "unknown";
  const counts = run.byType.get(label) ?? { valid: 0, invalid: 0 };
  const verdict = event["valid"] === true ? "valid" : "invalid";
  counts[verdict] += 1;
  run.byType.set(label, counts);
  if (run[verdict].length < MAX_LISTED[verdict]) run[verdict].push({ ...event, index, label });
}

/** A request that is not one message, as listen's lines call it. @type {Record<string, string>} */
const KIND_LABELS = { batch: "batch", payload: "payload (not a message)", none: "no data", invalid: "not JSON or no message" };
