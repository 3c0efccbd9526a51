// @ts-check
// The runner's side of a JavaScript action, in plain Node.js (no @actions/core: the action runs
// from a checkout with no node_modules). The runner passes inputs as INPUT_<NAME> variables (upper
// case, spaces as `_`, hyphens kept) and state as STATE_<name>; it reads outputs, state and the
// job summary from the files GITHUB_OUTPUT, GITHUB_STATE and GITHUB_STEP_SUMMARY after the step,
// and workflow commands (`::add-mask::`, `::error::`) from the start of a line on stdout.
import { randomUUID } from "node:crypto";
import { appendFileSync } from "node:fs";
import { EOL } from "node:os";

/**
 * An input as given, trimmed as the toolkit trims it; `fallback` when empty.
 * @param {string} name
 * @param {string} [fallback]
 */
export function input(name, fallback = "") {
  const value = (process.env[`INPUT_${name.replace(/ /g, "_").toUpperCase()}`] ?? "").trim();
  return value === "" ? fallback : value;
}

/**
 * A true/false input, spelled as YAML spells booleans; anything else is an error naming the input.
 * @param {string} name
 * @param {boolean} fallback
 */
export function booleanInput(name, fallback) {
  const value = input(name, String(fallback));
  if (["true", "True", "TRUE"].includes(value)) return true;
  if (["false", "False", "FALSE"].includes(value)) return false;
  throw new Error(`input ${name}: "${value}" is not true or false`);
}

/**
 * A whole number input, at least 0.
 * @param {string} name
 * @param {number} fallback
 */
export function countInput(name, fallback) {
  const value = input(name, String(fallback));
  if (!/^\d{1,9}$/.test(value)) throw new Error(`input ${name}: "${value}" is not a whole number (0 or more)`);
  return Number(value);
}

/** @param {string} name @param {string} value */
export function setOutput(name, value) {
  appendFileCommand("GITHUB_OUTPUT", name, value);
}

/** @param {string} name @param {string} value */
export function saveState(name, value) {
  appendFileCommand("GITHUB_STATE", name, value);
}

/**
 * What main saved with saveState, as the runner hands it to post.
 * @param {string} name
 */
export function state(name) {
  return process.env[`STATE_${name}`] ?? "";
}

/** @param {string} markdown */
export function appendSummary(markdown) {
  const file = process.env.GITHUB_STEP_SUMMARY;
  if (file === undefined || file === "") process.stdout.write(`${markdown}${EOL}`);
  else appendFileSync(file, markdown, "utf8");
}

/**
 * Asks the runner to hide a value in every later log line and summary (each line of it, as the toolkit does).
 * @param {string} value
 */
export function mask(value) {
  for (const line of value.split(/\r?\n/)) if (line.trim() !== "") process.stdout.write(`::add-mask::${commandData(line)}${EOL}`);
}

/**
 * An error annotation; the step's exit status is set by the caller.
 * @param {string} message
 */
export function error(message) {
  process.stdout.write(`::error::${commandData(message)}${EOL}`);
}

/**
 * Writes text that came from elsewhere (the CLI's log) with workflow commands switched off meanwhile.
 * @param {string} text
 */
export function echoInert(text) {
  const token = `webhook-cli-${randomUUID()}`;
  process.stdout.write(`::stop-commands::${token}${EOL}${text.endsWith("\n") ? text : `${text}${EOL}`}::${token}::${EOL}`);
}

/**
 * Runs a step; an error it throws becomes an error annotation and a failed step (exit status 1).
 * @param {() => Promise<void>} step
 */
export async function runStep(step) {
  try {
    await step();
  } catch (problem) {
    error(problem instanceof Error ? problem.message : String(problem));
    process.exitCode = 1;
  }
}

/**
 * NAME<<DELIMITER heredoc form, with a delimiter the value cannot contain (checked).
 * @param {string} variable
 * @param {string} name
 * @param {string} value
 */
function appendFileCommand(variable, name, value) {
  const file = process.env[variable];
  if (file === undefined || file === "") throw new Error(`${variable} is not set: this script runs as a step of a GitHub Actions job`);
  const delimiter = `ghadelimiter_${randomUUID()}`;
  if (value.includes(delimiter)) throw new Error(`${name}: the value contains its delimiter`);
  appendFileSync(file, `${name}<<${delimiter}${EOL}${value}${EOL}${delimiter}${EOL}`, "utf8");
}

/**
 * A workflow command's data: `%`, CR and LF escaped, as the runner unescapes them.
 * @param {string} text
 */
function commandData(text) {
  return text.replace(/%/g, "%25").replace(/\r/g, "%0D").replace(/\n/g, "%0A");
}
