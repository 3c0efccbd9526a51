import { resolve } from "node:path";
import { parseHeaderFlag, validateAnswerHeader } from "../../../config/checks.js";
import { ScriptedAnswers, answerHeaders } from "../../../receiver/scripted-answers.js";
import { loadRulesFile } from "../../../receiver/rules-file.js";
import { MAX_ANSWER_FILE_BYTES, readRegularFile } from "../../../util/readable-file.js";
import type { ListenFlags } from "./options.js";

/** The scripted answers of --responses, --respond-header and --respond-body (docs/receiver.md#scripted-answers), or undefined without them. */
export function scriptedAnswersOf(options: ListenFlags, cwd: string): ScriptedAnswers | undefined {
  const rules = options.responses !== undefined ? loadRulesFile(resolve(cwd, options.responses), options.responses) : [];
  const headers = (options.respondHeaders ?? []).map((text) => parseHeaderFlag(text, "respondHeaders", validateAnswerHeader));
  const body = options.respondBody !== undefined ? bodyOf(options.respondBody, cwd) : null;
  const fallback = headers.length > 0 || body !== null ? { headers: answerHeaders(headers, body), body } : undefined;
  return rules.length > 0 || fallback ? new ScriptedAnswers(rules, fallback) : undefined;
}

/** `--respond-body TEXT`, or `@FILE` for a file's bytes. */
function bodyOf(value: string, cwd: string): Buffer {
  if (!value.startsWith("@")) return Buffer.from(value);
  const file = value.slice(1);
  return readRegularFile(resolve(cwd, file), { flag: "--respond-body", file }, MAX_ANSWER_FILE_BYTES);
}
