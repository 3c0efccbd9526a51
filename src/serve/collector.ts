import { randomUUID } from "node:crypto";
import type { DeliveryEngine } from "../delivery/deliver.js";
import type { AttemptEvent, DeliveryResult } from "../delivery/types.js";
import { undiciEngine, type UndiciEngineOptions } from "../delivery/undici-engine.js";
import { DEFAULT_DELIVERY_CONCURRENCY } from "../dispatch/dispatcher.js";
import type { DestinationSettings } from "../config/destination.js";
import { systemClock, type Clock } from "../util/clock.js";
import {
  DEFAULT_SOURCE,
  authenticate,
  parseCalls,
  parseJsonBody,
  writeKeyOf,
  type ErrorCode,
  type IngestCall,
  type IngestResult,
  type Rejection,
} from "./ingest.js";
import { isPlainObject } from "../json/parse.js";
import type { MessageQueue, NewMessage, QueuedMessage, SeenUser } from "./queue/message-queue.js";
import type { Route } from "./endpoints.js";
import { isDestinationEnabled } from "./integrations.js";
import { clientName, libraryOf, Traffic, UNKNOWN_LIBRARY, type TrafficCounts } from "./traffic.js";
import { deleteMessage, toMessage } from "./transform.js";
import { TargetHealth, type TargetChange } from "./target-health.js";
import { DeliveryWorker, forwardingBatches } from "./worker.js";
import type { FunctionDestination } from "../delivery/function-transport.js";
import { SourceFunctions, type SourceFunctionEntry, type SourceInvocation } from "./source-functions.js";

export interface CollectorOptions {
  settings: DestinationSettings;
  queue: MessageQueue;
  /** Timeout, retry window, CA, clock… for THE delivery engine. */
  delivery?: UndiciEngineOptions;
  /** Deliveries in flight at once (default 64). */
  concurrency?: number;
  clock?: Clock;
  /** A message was delivered or given up. */
  onSettled?: (message: QueuedMessage, result: DeliveryResult) => void;
  /** Deliveries to a URL started failing, or recovered (rate-limited per URL: target-health.ts). */
  onTargetChange?: (change: TargetChange) => void;
  /**
   * All or nothing (`serve --strict`, the CI mode): one invalid call refuses
   * the whole request with 400 naming its index. Otherwise invalid calls are
   * dropped one by one and the valid ones queued, as the real Tracking API does.
   */
  strict?: boolean;
  /** A call dropped from an accepted request (not under `strict`). */
  onRejected?: (rejection: Rejection & { source: string; path: string; where: string }) => void;
  /** A request refused with 401 (wrong or missing write key), and the client that sent it. */
  onUnauthorized?: (refusal: { path: string; client: string; message: string }) => void;
  /** The messageId of a call that has none (default: `api-` and a random UUID, as the real service). */
  newMessageId?: () => string;
  /** Destination functions among the targets, under their URLs (docs/functions.md#as-a-destination). */
  functions?: ReadonlyMap<string, FunctionDestination> | undefined;
  /** A destination function uses a package that is not installed here. */
  onSetupProblem?: ((problem: string, file: string) => void) | undefined;
  /** After each attempt of a destination function: what it did (serve shows it). */
  onFunctionAttempt?: ((event: AttemptEvent) => void) | undefined;
  /** Source functions, each answering `POST /functions/NAME` (docs/serve-api.md#source-functions). */
  sourceFunctions?: readonly SourceFunctionEntry[] | undefined;
  /** After each source function invocation. */
  onSourceInvocation?: ((invocation: SourceInvocation) => void) | undefined;
}

/** The routes the collector handles (src/serve/endpoints.ts). */
export type IngestRoute = Extract<Route, { kind: "single" | "batch" | "delete" }>;

/** One HTTP request as the adapter hands it over, already routed (a POST to an ingest path). */
export interface IngestRequest {
  route: IngestRoute;
  /** The path as received, named in logs. */
  path: string;
  authorization: string | undefined;
  body: Buffer;
  /** The client's address, added to `context.ip`. */
  ip: string | undefined;
  /** Names the client of a refused request when its body names no library. */
  userAgent?: string | undefined;
}

export interface IngestResponse {
  status: number;
  body: Record<string, unknown>;
}

/** The counts of GET /health (docs/serve-api.md#health); `pending` is everything stored and not settled. */
export interface CollectorCounts extends TrafficCounts {
  accepted: number;
  /** Calls dropped as invalid from requests that were otherwise accepted. */
  rejected: number;
  filtered: number;
  delivered: number;
  /** Skipped by a destination function (no handler, or EventNotSupported). */
  skipped: number;
  retrying: number;
  failed: number;
  pending: number;
  /** `Segment.set` objects made by source functions (docs/serve-api.md#source-functions). */
  objects: number;
}

/**
 * The collection service stand-in without its HTTP adapter: authenticates and
 * validates a request, routes and transforms its calls, stores them durably
 * (before answering) and lets the worker deliver them.
 */
export class Collector {
  private readonly settings: DestinationSettings;
  private readonly queue: MessageQueue;
  private readonly engine: DeliveryEngine | undefined;
  private readonly worker: DeliveryWorker | undefined;
  private readonly health: TargetHealth | undefined;
  private readonly clock: Clock;
  private readonly sourceNames: ReadonlySet<string>;
  private accepted = 0;
  private rejected = 0;
  private filtered = 0;
  private readonly strict: boolean;
  private readonly onRejected: CollectorOptions["onRejected"];
  private readonly onUnauthorized: CollectorOptions["onUnauthorized"];
  /** Requests by route and by client library, and the 401s by client. */
  readonly traffic = new Traffic();
  /** The source functions' route, when serve runs any. */
  readonly sourceFunctions: SourceFunctions | undefined;
  private readonly newMessageId: () => string;

  constructor(options: CollectorOptions) {
    this.settings = options.settings;
    this.queue = options.queue;
    this.clock = options.clock ?? options.delivery?.clock ?? systemClock;
    this.strict = options.strict ?? false;
    this.onRejected = options.onRejected;
    this.onUnauthorized = options.onUnauthorized;
    this.newMessageId = options.newMessageId ?? (() => `api-${randomUUID()}`);
    this.sourceNames = new Set(this.settings.sources.length > 0 ? this.settings.sources.map((s) => s.name) : [DEFAULT_SOURCE]);
    const entries = options.sourceFunctions ?? [];
    this.sourceFunctions =
      entries.length > 0
        ? new SourceFunctions(entries, (name, messages, ip) => this.acceptFunctionCalls(name, messages, ip), options.onSourceInvocation)
        : undefined;
    // Without a URL there is nowhere to deliver: messages wait in the queue for a run that has one.
    if (this.settings.targets.length > 0) {
      this.engine = undiciEngine(this.settings, {
        ...options.delivery,
        connections: options.delivery?.connections ?? Math.max(16, options.concurrency ?? DEFAULT_DELIVERY_CONCURRENCY),
        functions: options.functions,
        onSetupProblem: options.onSetupProblem,
      });
      const onTargetChange = options.onTargetChange;
      if (onTargetChange) this.health = new TargetHealth(this.clock, onTargetChange);
      this.worker = this.createWorker(this.engine, options);
    }
  }

  private createWorker(engine: DeliveryEngine, options: CollectorOptions): DeliveryWorker {
    const health = this.health;
    const onFunction = options.onFunctionAttempt;
    const onAttempt =
      health || onFunction
        ? (event: AttemptEvent) => {
            if (event.invocation !== undefined) onFunction?.(event);
            health?.attempt(event.url, event.error);
          }
        : undefined;
    return new DeliveryWorker({
      queue: this.queue,
      engine,
      concurrency: options.concurrency ?? DEFAULT_DELIVERY_CONCURRENCY,
      clock: this.clock,
      secret: this.settings.secrets,
      batching: forwardingBatches(this.settings),
      onSettled: options.onSettled,
      onAttempt,
    });
  }

  /** Starts delivering what is queued (including what a previous run left). */
  start(): void {
    this.worker?.start();
  }

  counts(): CollectorCounts {
    return {
      accepted: this.accepted,
      rejected: this.rejected,
      filtered: this.filtered,
      delivered: this.worker?.delivered ?? 0,
      skipped: this.worker?.skipped ?? 0,
      retrying: this.worker?.retrying ?? 0,
      failed: this.worker?.failed ?? 0,
      pending: this.queue.pendingCount(),
      objects: this.sourceFunctions?.objects ?? 0,
      ...this.traffic.counts(),
    };
  }

  /** Handles one request of the ingest API; synchronous, so the queue write precedes the answer. */
  handle(request: IngestRequest): IngestResponse {
    const route = request.route;
    const basicKey = writeKeyOf(request.authorization, undefined);
    const parsed = parseJsonBody(request.body);
    // A wrong Basic key is refused whatever the body holds, which is read only to name the client.
    if (basicKey !== undefined && authenticate(basicKey, this.settings.sources) === undefined) {
      return this.unauthorized(request, parsed.ok ? parsed.body : undefined, "invalid write key");
    }
    if (!parsed.ok) return reject(parsed.status, parsed.code, parsed.error);
    const source = authenticate(basicKey ?? writeKeyOf(undefined, parsed.body), this.settings.sources);
    if (source === undefined) {
      const missing = basicKey === undefined && parsed.body["writeKey"] === undefined;
      return this.unauthorized(request, parsed.body, missing ? "missing write key" : "invalid write key");
    }
    this.traffic.library(libraryOf(parsed.body)?.name ?? UNKNOWN_LIBRARY);

    const receivedAt = new Date(this.clock.now());
    if (route.kind === "delete") return this.handleDelete(parsed.body, receivedAt);

    const result = parseCalls(route, parsed.body);
    if (!result.ok) return reject(result.status, result.code, result.error);
    return this.accept(result, { batch: route.kind === "batch", source, path: request.path, receivedAt, ip: request.ip });
  }

  /**
   * A source function's `Segment` calls (docs/serve-api.md#source-functions): each one checked,
   * routed and stored as a client's call is (a message id, the timestamps; `context.function`
   * naming the function), durably, before the caller answers.
   */
  acceptFunctionCalls(name: string, messages: readonly Record<string, unknown>[], ip: string | undefined): IngestResponse {
    const batch = messages.map((message) => ({
      ...message,
      context: { ...(isPlainObject(message["context"]) ? message["context"] : {}), function: { name } },
    }));
    const result = parseCalls({ kind: "batch" }, { batch });
    if (!result.ok) return reject(result.status, result.code, result.error);
    return this.accept(result, { batch: true, source: `function:${name}`, path: `/functions/${name}`, receivedAt: new Date(this.clock.now()), ip });
  }

  /** The valid calls of a request are stored (one transaction), the invalid ones dropped and told; under `strict`, one invalid call refuses them all. */
  private accept(
    result: Extract<IngestResult, { ok: true }>,
    request: { batch: boolean; source: string; path: string; receivedAt: Date; ip: string | undefined },
  ): IngestResponse {
    const { source, path } = request;
    const first = result.rejected[0];
    if (this.strict && first !== undefined) {
      const where = request.batch ? `batch[${first.index}]: ` : "";
      return { status: 400, body: { ...errorBody(`${where}${first.reason}`, "invalid_request"), index: first.index } };
    }
    for (const rejection of result.rejected) {
      this.rejected += rejection.count ?? 1;
      const where = request.batch ? `batch[${rejection.index}]` : path;
      this.onRejected?.({ ...rejection, source, path, where });
    }
    this.store(result.calls, source, request.receivedAt, request.ip);
    return { status: 200, body: { success: true } };
  }

  /** 401, counted and reported with the client that sent it (a stand-in should reveal what the real API hides). */
  private unauthorized(request: IngestRequest, body: Record<string, unknown> | undefined, message: string): IngestResponse {
    const client = clientName(body, request.userAgent);
    this.traffic.refused(client);
    this.onUnauthorized?.({ path: request.path, client, message });
    return reject(401, "unauthorized", message);
  }

  /** Routes and transforms accepted calls, then writes them to the queue in one transaction. */
  private store(calls: readonly IngestCall[], source: string, receivedAt: Date, ip: string | undefined): void {
    const messages: NewMessage[] = [];
    const seen: SeenUser[] = [];
    for (const call of calls) {
      for (const userId of usersOf(call)) seen.push({ source, userId });
      if (!this.settings.enabled || !isDestinationEnabled(call.integrations)) {
        this.filtered += 1;
        continue;
      }
      // Receivers deduplicate on messageId, so every forwarded message has one.
      const withId = call.messageId === undefined ? { ...call, messageId: this.newMessageId() } : call;
      const message = toMessage(withId, { aliasKeys: this.settings.aliasKeys, receivedAt, ip });
      messages.push({ body: JSON.stringify(message), source });
    }
    this.queue.enqueue(messages, seen);
    this.accepted += calls.length;
    if (messages.length > 0) this.worker?.notify();
  }

  /** POST /v1/delete: one `delete` per configured source that has seen the user. */
  private handleDelete(body: Record<string, unknown>, receivedAt: Date): IngestResponse {
    const userId = body["userId"];
    if (typeof userId !== "string" || userId === "") return reject(400, "invalid_request", `"userId" must be a non-empty string`);
    const sources = this.queue.sourcesThatSaw(userId).filter((name) => this.sourceNames.has(name));
    const text = JSON.stringify(deleteMessage(userId, receivedAt));
    this.accepted += sources.length;
    if (!this.settings.enabled) {
      this.filtered += sources.length;
      return { status: 200, body: { success: true, sources: [] } };
    }
    this.queue.enqueue(sources.map((source) => ({ body: text, source })));
    if (sources.length > 0) this.worker?.notify();
    return { status: 200, body: { success: true, sources } };
  }

  /** Stops delivering (what is in flight stays queued), then closes connections and the queue; the source functions are closed by whoever loaded them. */
  async close(): Promise<void> {
    // Attempts cut by the stop are not a URL failing.
    this.health?.close();
    await this.worker?.stop();
    await this.engine?.close();
    this.queue.close();
  }
}

function usersOf(call: IngestCall): string[] {
  const users = call.userId !== undefined ? [call.userId] : [];
  if (call.type === "alias" && call.previousId !== undefined) users.push(call.previousId);
  return users;
}

function reject(status: number, code: ErrorCode, message: string): IngestResponse {
  return { status, body: errorBody(message, code) };
}

/** The real Tracking API's error body (docs/serve-api.md#error-bodies). */
export function errorBody(message: string, code: ErrorCode): Record<string, unknown> {
  return { success: false, message, code };
}
