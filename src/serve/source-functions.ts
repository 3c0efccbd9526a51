import { Headers } from "undici";
import { FUNCTION_ORIGIN, FunctionRequest } from "../functions/request.js";
import type { FunctionSettings } from "../functions/settings.js";
import type { InvocationRecord, Outcome } from "../functions/types.js";
import type { ErrorCode } from "./ingest.js";

/**
 * serve's source functions (docs/serve-api.md#source-functions): `POST /functions/NAME` runs the
 * function's `onRequest` on the webhook as the service gives it, and its `Segment` calls are
 * queued as a client's calls are, before the answer. The answer is a success or a failure, as
 * the service's (a function cannot choose its own).
 */

/** What serve needs of a loaded source function (functions/runtime.ts's FunctionModule). */
export interface SourceFunction {
  readonly file: string;
  runRequest(request: FunctionRequest, settings: FunctionSettings): Promise<InvocationRecord>;
  close(): Promise<void>;
}

export interface SourceFunctionEntry {
  /** The route's NAME: `/functions/NAME`. */
  name: string;
  fn: SourceFunction;
  settings: FunctionSettings;
}

/** One webhook as serve's HTTP adapter hands it over, already routed to a function. */
export interface FunctionWebhook {
  name: string;
  body: Buffer;
  /** Header names and values as received, in order (`IncomingMessage.rawHeaders`): a repeated header stays repeated. */
  rawHeaders: readonly string[];
  /** The request-target's query (`?a=1`), or "". */
  search: string;
  ip: string | undefined;
}

export interface FunctionAnswer {
  status: number;
  body: Record<string, unknown>;
}

/** How an invocation's calls are stored: the collector's `acceptFunctionCalls`. */
export type AcceptCalls = (name: string, messages: readonly Record<string, unknown>[], ip: string | undefined) => FunctionAnswer;

/** One invocation as serve reports it: which function, what it did, what the sender was answered. */
export interface SourceInvocation {
  name: string;
  search: string;
  record: InvocationRecord;
  answer: FunctionAnswer;
}

/** A source function's answer to a webhook it failed on: 400 for what the service rejects, 500 for what it would run again. */
function failureAnswer(outcome: Exclude<Outcome, { kind: "delivered" }>): FunctionAnswer {
  const retried = outcome.kind === "retry" || (outcome.kind === "failed" && outcome.setup === true);
  const code: ErrorCode = "function_error";
  return { status: retried ? 500 : 400, body: { success: false, message: `${outcome.errorType}: ${outcome.reason}`, code } };
}

export class SourceFunctions {
  private readonly byName: ReadonlyMap<string, SourceFunctionEntry>;
  /** `Segment.set` objects emitted by successful invocations (GET /health). */
  objects = 0;

  constructor(
    entries: readonly SourceFunctionEntry[],
    private readonly accept: AcceptCalls,
    private readonly onInvocation?: (invocation: SourceInvocation) => void,
  ) {
    this.byName = new Map(entries.map((entry) => [entry.name, entry]));
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  get names(): string[] {
    return [...this.byName.keys()];
  }

  /**
   * Runs the function on the webhook; with success its calls are stored (durably) before this resolves with the 200.
   * The name is one `has` knows: the server answers 404 for any other before reading the body.
   */
  async handle(webhook: FunctionWebhook): Promise<FunctionAnswer> {
    const entry = this.byName.get(webhook.name);
    if (entry === undefined) throw new Error(`no source function named ${webhook.name}: the server routes only the names it has`);
    const request = new FunctionRequest(webhook.body.toString("utf8"), {
      headers: headersOf(webhook.rawHeaders),
      url: new URL(`${FUNCTION_ORIGIN}${webhook.search}`),
    });
    const record = await entry.fn.runRequest(request, entry.settings);
    const answer = record.outcome.kind === "delivered" ? this.stored(entry.name, record, webhook.ip) : failureAnswer(record.outcome);
    this.onInvocation?.({ name: entry.name, search: webhook.search, record, answer });
    return answer;
  }

  private stored(name: string, record: InvocationRecord, ip: string | undefined): FunctionAnswer {
    const answer = record.messages.length > 0 ? this.accept(name, record.messages, ip) : { status: 200, body: { success: true } };
    if (answer.status === 200) this.objects += record.objects.length;
    return answer;
  }
}

/** The webhook's headers as a `Headers`: a repeated one appended, so `get` joins its values with `, `. */
function headersOf(raw: readonly string[]): Headers {
  const headers = new Headers();
  for (let i = 0; i + 1 < raw.length; i += 2) {
    try {
      headers.append(raw[i] as string, raw[i + 1] as string);
    } catch {
      // A name or value fetch refuses (node:http lets more through): not given to the function.
    }
  }
  return headers;
}
