import { OldResults } from "../../src/regress/old-results.js";
import { scanResults } from "../../src/regress/results-file.js";
import type { Answer } from "../../src/regress/results-read.js";

/** Every answer of a --compare file, as the merge of its runs hands them on (in line order, the later run winning). */
export async function readAnswers(path: string, name: string): Promise<{ answers: Map<number, Answer>; unanswered: number; runs: number }> {
  const index = await scanResults(path, name);
  if (index === undefined) throw new Error("scan interrupted");
  const old = new OldResults(path, name, index);
  const answers = new Map<number, Answer>();
  try {
    old.rest((answer) => answers.set(answer.line, answer));
  } finally {
    old.close();
  }
  return { answers, unanswered: index.unanswered, runs: index.runs.length };
}
