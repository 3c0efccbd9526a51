import { ClosedError, ConfigError, WaitTimeoutError, WebhookCliError } from "../errors.js";
import { RequestStore, receivedRow, type Inspected } from "../receiver/history/index.js";
import type { Message } from "../messages/schemas.js";
import { ScriptedAnswers, type AnswerRule } from "../receiver/scripted-answers.js";
import { arrivalOf, arrivalsReport } from "../receiver/arrivals.js";
import { AnswerPlan, parseScript } from "../receiver/answer-plan.js";
import { createForwarder } from "../receiver/forward.js";
import { describeMatch, factsOf, matches } from "../receiver/match.js";
import { parseAnswer, parseMatch, parseRules } from "../receiver/rules-file.js";
import type { ReceivedRequest } from "../receiver/received-request.js";
import { startReceiver, type ReceiverOptions } from "../receiver/server.js";
import { readJsonBody } from "../receiver/verdict.js";
import { seededRandom, systemClock } from "../util/clock.js";
import { durationOf } from "../util/duration.js";
import type { ReceivedWebhook, ReceiverFaults, StartReceiverOptions, TestReceiver, WaitOptions, WebhookMatcher } from "./types.js";
import { Waiters, type WaitEnding } from "./waiters.js";

/** waitFor's default timeout: under vitest's and jest's 5 s per test, so its own message is what fails the test. */
const DEFAULT_WAIT_MS = 4_000;

/**
 * `startReceiver` of `webhook-cli/testing` (docs/library.md#a-receiver-in-your-tests): listen's
 * receiver (the same server, verifier, answer plan and scripted answers) in the test's own process, with
 * the requests kept for assertions within the history's bounds and a waitFor on the arrivals.
 */
export async function startTestReceiver(options: StartReceiverOptions = {}): Promise<TestReceiver> {
  const clock = options.clock ?? systemClock;
  const { startRules, scriptedAnswers, answerPlan } = answersOf(options);
  const forwarder = options.forwardTo !== undefined ? createForwarder(options.forwardTo) : undefined;
  const history = new History(options.history ?? {});
  const waiters = new Waiters(clock);
  const errors: string[] = [];
  let server: Awaited<ReturnType<typeof startReceiver>>;
  try {
    server = await startReceiver({
      host: options.host ?? "127.0.0.1",
      port: options.port ?? 0,
      ...signingOf(options),
      strict: options.strict ?? false,
      answerPlan,
      scriptedAnswers,
      clock,
      tls: options.tls,
      forward: forwarder?.forward,
      onRequest: (request) => waiters.offer(history.add(request)),
      onError: (error) => void (errors.length < 10 && errors.push(error.message)),
    });
  } catch (error) {
    await forwarder?.close();
    throw error;
  }

  return {
    url: server.url,
    port: server.port,
    get requests() {
      return history.views();
    },
    waitFor: waitForOf(history, waiters, errors),
    respondWith(rules) {
      scriptedAnswers.setRules(libraryCall(() => parseRules(rules, { field: "rules" })));
    },
    reset() {
      history.clear();
      scriptedAnswers.setRules(startRules);
      answerPlan.reset();
    },
    async close() {
      waiters.rejectAll();
      await server.close();
      await forwarder?.close();
    },
  };
}

/** How the receiver verifies: listen's --secret, --scheme, --tolerance and --public-url. */
function signingOf(options: StartReceiverOptions): Pick<ReceiverOptions, "secret" | "secrets" | "scheme" | "toleranceSeconds" | "publicUrl"> {
  const { secret, secrets, scheme, toleranceSeconds, publicUrl } = options;
  return { secret, secrets, scheme, toleranceSeconds, publicUrl };
}

/** The scripted answers and the answer plan of the options, checked; `startRules` are what reset() goes back to. */
function answersOf(options: StartReceiverOptions): { startRules: AnswerRule[]; scriptedAnswers: ScriptedAnswers; answerPlan: ResettableAnswerPlan } {
  const respond = typeof options.respond === "number" ? { status: options.respond } : (options.respond ?? {});
  const fallback = libraryCall(() => parseAnswer(respond, { field: "respond" }));
  const startRules = options.responses ? libraryCall(() => parseRules(options.responses, { field: "responses" })) : [];
  const hasFallback = Object.keys(fallback.headers).length > 0 || fallback.body !== null;
  const scriptedAnswers = new ScriptedAnswers(startRules, hasFallback ? fallback : undefined);
  const answerPlan = libraryCall(() => new ResettableAnswerPlan(() => answerPlanOf(options.faults ?? {}, fallback.status)));
  return { startRules, scriptedAnswers, answerPlan };
}

/**
 * The receiver's waitFor. Its overloads' narrower types hold: it resolves with `count` (at least 1) requests, each
 * passed by the matcher, and one naming a type, an event or kind "message" passes message bodies only (src/receiver/match.ts).
 * It rejects with a WaitTimeoutError at its timeout, or a ClosedError when the receiver closes first, each saying what arrived.
 */
function waitForOf(history: History, waiters: Waiters, errors: readonly string[]): TestReceiver["waitFor"] {
  return (async (matcher: WebhookMatcher, wait: WaitOptions = {}) => {
    const { test, shown } = libraryCall(() => testOf(matcher));
    const count = wait.count ?? 1;
    if (!Number.isInteger(count) || count < 1) throw new ConfigError(`count: expected a whole number from 1, got ${count}`, { field: "count" });
    const timeoutMs = libraryCall(() => durationOf(wait.timeout ?? DEFAULT_WAIT_MS, { field: "timeout" }));
    const found = history.views().filter(test);
    const failure = (ending: WaitEnding, matched: readonly ReceivedWebhook[]): Error => {
      const why = ending === "closed" ? "the receiver was closed" : `timed out after ${timeoutMs} ms`;
      const problems = errors.length > 0 ? `\nThe receiver could not handle every request: ${errors.join("; ")}` : "";
      const message = `waitFor: ${why}: ${matched.length} of ${count} request${count === 1 ? "" : "s"} matching ${shown}.\n${history.report()}${problems}`;
      if (ending === "closed") return new ClosedError(message);
      return new WaitTimeoutError(message, { timeoutMs, count, matched: [...matched], received: history.views() });
    };
    return waiters.wait(found, test, count, timeoutMs, failure);
  }) as TestReceiver["waitFor"];
}

/** Runs a check of the library's input; its error's message names where the bad value is (`matcher: unknown key "tpye"`). */
function libraryCall<T>(check: () => T): T {
  try {
    return check();
  } catch (error) {
    if (error instanceof WebhookCliError) throw new ConfigError(error.describe(), error.source);
    throw error;
  }
}

/** A matcher as a test function; an object is checked first (a misspelt field must not match everything). */
function testOf(matcher: WebhookMatcher): { test: (request: ReceivedWebhook) => boolean; shown: string } {
  if (typeof matcher === "function") return { test: matcher, shown: "the predicate" };
  const match = parseMatch(matcher, { field: "matcher" });
  return { test: (request) => matches(match, factsOf(request), "valid"), shown: describeMatch(match, "valid") };
}

/** The requests kept for `requests` and for what waitFor finds at its start: the receiver's bounded request history. */
class History {
  private store: RequestStore;
  /** Requests received since the last clear, kept or not. */
  private received = 0;
  /** The receiver's number of the last request before the last clear, and of the last one. */
  private base = 0;
  private last = 0;

  constructor(private readonly limits: { keep?: number; maxBytes?: number }) {
    this.store = new RequestStore(limits);
  }

  add(request: ReceivedRequest): ReceivedWebhook {
    this.received += 1;
    this.last = request.index;
    return viewOf(
      // Numbered from 1 again after each clear (reset): a test sees its own #1.
      this.store.add(receivedRow(request, String(request.index - this.base), null)),
    );
  }

  views(): ReceivedWebhook[] {
    return this.store.list().map(viewOf);
  }

  clear(): void {
    this.store = new RequestStore(this.limits);
    this.received = 0;
    this.base = this.last;
  }

  /** What arrived since the last clear, for a waitFor that ends without its match. */
  report(): string {
    const kept = this.store.list().map((row) => arrivalOf({ ...row, index: Number(row.label) }));
    return arrivalsReport(kept, this.received);
  }
}

/** A kept row as a test sees it; the body is parsed from the bytes when asked for, never kept parsed. */
function viewOf(row: Inspected): ReceivedWebhook {
  const { moreShapeErrors: _errors, moreShapeWarnings: _warnings, ...verdict } = row.verdict;
  return {
    index: Number(row.label),
    receivedAt: row.receivedAt,
    method: row.method,
    path: row.path,
    headers: row.headers,
    rawBody: row.raw,
    get body() {
      return readJsonBody(row.raw).body;
    },
    get message() {
      return verdict.bodyKind === "message" ? (readJsonBody(row.raw).body as Message) : undefined;
    },
    verdict,
    valid: verdict.valid,
    status: row.status,
    rule: row.rule ?? null,
  };
}

/** The answer plan of the options' faults, made again by reset(). */
function answerPlanOf(faults: ReceiverFaults, respond: number): AnswerPlan {
  if (faults.failRate !== undefined && !(faults.failRate >= 0 && faults.failRate <= 1))
    throw new ConfigError(`failRate must be from 0 to 1, got ${faults.failRate}`, { field: "faults" });
  if (faults.failStatus !== undefined) parseAnswer({ status: faults.failStatus }, { field: "faults", key: "failStatus" });
  const script = faults.script === undefined ? undefined : parseScript(typeof faults.script === "string" ? faults.script : faults.script.join(","));
  const delayMs = faults.delay === undefined ? undefined : durationOf(faults.delay, { field: "delay" });
  return new AnswerPlan({
    respond,
    delayMs,
    failFirst: faults.failFirst,
    failRate: faults.failRate,
    failStatus: faults.failStatus,
    script,
    random: seededRandom(faults.seed ?? Math.floor(Math.random() * 2 ** 32)),
  });
}

/** An answer plan that starts over on reset(): each test gets the faults from the start. */
class ResettableAnswerPlan extends AnswerPlan {
  private plan: AnswerPlan;

  constructor(private readonly make: () => AnswerPlan) {
    super();
    this.plan = make();
  }

  override next(signatureOk: boolean): ReturnType<AnswerPlan["next"]> {
    return this.plan.next(signatureOk);
  }

  reset(): void {
    this.plan = this.make();
  }
}
