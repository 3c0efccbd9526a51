import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import type { DeliveryResult } from "../delivery/types.js";
import { UsageError } from "../errors.js";
import { junitXml, type JunitCase, type JunitSuite } from "../report/junit.js";

/** Writes a `--junit FILE` report; a file that cannot be written is a usage error naming the flag. */
export function writeJunitFile(cwd: string, flagValue: string, suite: JunitSuite): void {
  try {
    writeFileSync(resolve(cwd, flagValue), junitXml(suite));
  } catch (error) {
    throw new UsageError(`cannot write: ${(error as Error).message}`, { flag: "--junit", file: flagValue });
  }
}

/** One message's test case (send, replay): failing unless delivered; `undefined` = never started. */
export function deliveryCase(name: string, classname: string, result: DeliveryResult | undefined, ms: number): JunitCase {
  const base = { name, classname, time: ms / 1000 };
  if (result?.delivered) return base;
  const message = result === undefined || result.interrupted ? "interrupted" : result.urls.map((u) => `${u.url}: ${u.error ?? `status ${u.status ?? "none"}`}`).join("; ");
  return { ...base, failure: { message, type: "delivery" } };
}
