// @ts-check
// The post step's verdict on a run (why the job fails, if it does) and the job summary that shows
// it: counts by type, then the invalid requests with their reasons, then the valid ones.
import { MAX_LISTED } from "./events.js";
import { cell, plural, table } from "./markdown.js";

/**
 * @typedef {import("./events.js").Run} Run
 * @typedef {import("./events.js").Event} Event
 * @typedef {import("./events.js").Listed} Listed
 * @typedef {(value: unknown, max?: number) => string} Escape
 */

/**
 * Why the job fails: one sentence each; none when it passes.
 * @param {Run} run
 * @param {string} command listen or serve
 * @param {{ expectCount: number, failOnInvalid: boolean }} rules
 * @returns {string[]}
 */
export function failures(run, command, { expectCount, failOnInvalid }) {
  const reasons = [];
  const s = run.summary;
  if (s === undefined) return [`webhook-cli ${command} stopped without its summary (it was killed or crashed): see its log above`];
  if (command === "listen") {
    if (failOnInvalid && s["invalid"] > 0) reasons.push(`${plural(s["invalid"], "request was", "requests were")} invalid (fail-on-invalid)`);
    if (s["received"] < expectCount) reasons.push(`${plural(s["received"], "request")} arrived; expect-count is ${expectCount}`);
    if (s["exitCode"] !== 0 && s["invalid"] === 0 && s["stoppedBy"] === "exit-after") reasons.push("listen's --exit-after came before its --count");
  } else {
    const refused = s["rejected"] + sum(s["unauthorized"]);
    if (failOnInvalid && refused > 0) reasons.push(`${plural(refused, "call was", "calls were")} rejected or refused (fail-on-invalid)`);
    if (s["accepted"] < expectCount) reasons.push(`${plural(s["accepted"], "call")} accepted; expect-count is ${expectCount}`);
    if (s["failed"] > 0) reasons.push(`serve gave up on ${plural(s["failed"], "message")}`);
  }
  return reasons;
}

/**
 * The job summary in Markdown; `secret` never appears in it.
 * @param {Run} run
 * @param {string} command
 * @param {string[]} reasons
 * @param {string} secret
 */
export function summaryMarkdown(run, command, reasons, secret) {
  /** @type {Escape} */
  const esc = (value, max) => cell(value, max === undefined ? { secret } : { secret, max });
  const parts = [`### ${reasons.length === 0 ? "✅" : "❌"} webhook-cli ${command}: ${headline(run, command)}`];
  if (reasons.length > 0) parts.push(reasons.map((reason) => `- ${esc(reason, 300)}`).join("\n"));
  parts.push(...(command === "listen" ? listenParts(run, esc) : serveParts(run, esc)));
  if (run.unreadable > 0) parts.push(`${plural(run.unreadable, "line")} of the event log could not be read.`);
  return `${parts.join("\n\n")}\n\n`;
}

/** @param {Run} run @param {string} command */
function headline(run, command) {
  const s = run.summary;
  if (s === undefined) return `no summary (${plural(run.requests, "request")} seen)`;
  if (command === "serve") return `${plural(s["accepted"], "call")} accepted, ${s["delivered"]} delivered, ${s["failed"]} given up`;
  return s["received"] === 0 ? "nothing arrived" : `${plural(s["received"], "request")}, ${s["invalid"] === 0 ? "all valid" : `${s["invalid"]} invalid`}`;
}

/** @param {Run} run @param {Escape} esc */
function listenParts(run, esc) {
  if (run.requests === 0) return [];
  const types = [...run.byType].sort(([a], [b]) => a.localeCompare(b));
  const total = (/** @type {"valid" | "invalid"} */ key) => types.reduce((count, [, counts]) => count + counts[key], 0);
  const rows = types.map(([type, counts]) => [esc(type), String(counts.valid), String(counts.invalid)]);
  rows.push(["**all**", `**${total("valid")}**`, `**${total("invalid")}**`]);
  const parts = [table(["type", "valid", "invalid"], rows, ["l", "r", "r"])];
  if (run.invalid.length > 0) {
    parts.push(`#### Invalid requests${listedOf(run.invalid.length, total("invalid"))}`);
    parts.push(requestTable(run.invalid, esc, "why", (r) => esc(why(r), 300)));
  }
  if (run.valid.length > 0) {
    const valid = requestTable(run.valid, esc, "answer", (r) => esc(r["fault"] ?? r["status"]));
    parts.push(`<details><summary>Valid requests${listedOf(run.valid.length, total("valid"))}</summary>\n\n${valid}\n\n</details>`);
  }
  return parts;
}

/**
 * @param {Listed[]} requests
 * @param {Escape} esc
 * @param {string} lastHeader
 * @param {(request: Listed) => string} last
 */
function requestTable(requests, esc, lastHeader, last) {
  const rows = requests.map((r) => [
    String(r.index),
    `${esc(r["method"])} ${esc(r["path"], 80)}`,
    esc(r.label),
    esc(r["userId"], 60),
    esc(r["eventName"], 60),
    last(r),
  ]);
  return table(["#", "request", "type", "user", "event", lastHeader], rows, ["r"]);
}

/**
 * listen's reason, with the likely cause it gives for a failed signature.
 * @param {Listed} request
 * @returns {string}
 */
function why(request) {
  const reason = request["problem"] ?? "invalid";
  const cause = request["diagnosis"];
  return cause && cause !== reason ? `${reason} (likely cause: ${cause})` : reason;
}

/** @param {number} listed @param {number} total */
function listedOf(listed, total) {
  return listed < total ? ` (the first ${listed} of ${total})` : ` (${total})`;
}

/** @param {Run} run @param {Escape} esc */
function serveParts(run, esc) {
  const s = run.summary;
  const parts = [];
  if (s !== undefined) {
    const keys = ["accepted", "rejected", "filtered", "delivered", "retrying", "failed", "pending"];
    parts.push(
      table(
        keys,
        [keys.map((key) => String(s[key] ?? 0))],
        keys.map(() => "r"),
      ),
    );
    // Which clients and routes reached serve, and which were refused for their write key.
    /** @type {[string, Record<string, number> | undefined][]} */
    const counts = [
      ["client library", s["libraries"]],
      ["route", s["routes"]],
      ["refused (401)", s["unauthorized"]],
    ];
    const rows = counts.flatMap(([what, byName]) => Object.entries(byName ?? {}).map(([name, count]) => [what, esc(name, 80), String(count)]));
    if (rows.length > 0) parts.push(table(["what", "name", "requests"], rows, ["l", "l", "r"]));
  }
  if (run.problems.length > 0) {
    const more = run.problems.length === MAX_LISTED.invalid ? ` (the first ${MAX_LISTED.invalid})` : "";
    parts.push(
      `#### Rejected, refused and given up${more}`,
      table(
        ["what", "where", "why"],
        run.problems.map((p) => problemRow(p, esc)),
      ),
    );
  }
  return parts;
}

/** @param {Event} p @param {Escape} esc */
function problemRow(p, esc) {
  if (p.event === "rejected") return [`call ${esc(p["index"])} rejected`, `${esc(p["path"], 80)} (${esc(p["source"], 60)})`, esc(p["reason"], 300)];
  if (p.event === "unauthorized") return ["refused (401)", `${esc(p["path"], 80)} from ${esc(p["client"], 60)}`, esc(p["reason"], 300)];
  /** @type {{ url: string, status: number | null, attempts: number, error?: string }[]} */
  const urls = p["urls"] ?? [];
  const reasons = urls.map((u) => `${u.url} ${u.status ?? "---"} after ${plural(u.attempts, "attempt")}${u.error ? `: ${u.error}` : ""}`);
  return ["given up", `${esc(p["type"] ?? "message")} ${esc(p["userId"], 60)}`, esc(reasons.join("; "), 300)];
}

/** @param {Record<string, number> | undefined} counts */
function sum(counts) {
  return Object.values(counts ?? {}).reduce((total, count) => total + count, 0);
}
