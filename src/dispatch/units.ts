import type { Target } from "../config/destination.js";
import { batchRequest, recordedRequest, singleRequest, type RequestContent } from "../delivery/actions-request.js";
import type { DeliveryResult, UrlResult } from "../delivery/types.js";
import { refusedResult } from "../delivery/url-state.js";
import type { Clock } from "../util/clock.js";
import type { Batch, Batcher } from "./batcher.js";
import type { DispatchEntry, Slot } from "./types.js";

/**
 * Webhooks (Actions) with batches (docs/actions.md#batches): the dispatcher's messages become
 * requests, one target's each (a batch of events, one event, or one recorded request), and each
 * request's answer comes back to every event in it.
 */

/** Whether every target is a destination function (and there is one): their batches are onBatch's, with the service's wait. */
export function allFunctions(targets: readonly Target[]): boolean {
  return targets.length > 0 && targets.every((target) => target.function !== undefined);
}

/**
 * The dispatcher's `batching` for these settings: Webhooks (Actions) where a target has a batch
 * size (docs/actions.md#batches), or destination functions with `onBatch` (docs/functions.md#batches);
 * else none.
 */
export function batchingFor(
  settings: { destination?: string | undefined; targets: readonly Target[] },
  waitMs?: number,
): { targets: readonly Target[]; waitMs?: number } | undefined {
  const batched = settings.targets.some((target) => target.batchSize !== undefined);
  if (!batched || (settings.destination !== "actions" && !allFunctions(settings.targets))) return undefined;
  return waitMs === undefined ? { targets: settings.targets } : { targets: settings.targets, waitMs };
}

/** One request to be: a target's batch of events, in source order. */
export interface Unit<E extends DispatchEntry> {
  target: Target;
  /** The target's index. */
  group: number;
  slots: Slot<E>[];
  /** The first event's position, for the status line's oldest retry. */
  index: number;
  orderKey: undefined;
  /** The target's index and each user of the batch: one user's batches go one after another, per target. */
  orderKeys: string[];
  time: number | undefined;
  nextAttemptAt: number | undefined;
}

export function unitOf<E extends DispatchEntry>(target: Target, group: number, slots: Slot<E>[]): Unit<E> {
  const keys = new Set<string>();
  for (const slot of slots) if (slot.orderKey !== undefined) keys.add(`${group}\u0000${slot.orderKey}`);
  const first = slots[0] as Slot<E>;
  return { target, group, slots, index: first.index, orderKey: undefined, orderKeys: [...keys], time: first.time, nextAttemptAt: undefined };
}

const NONE = new Map<number, string>();

/** The request of a unit, and the events left out of it (by position) with why. */
export function requestOf<E extends DispatchEntry>(unit: Unit<E>): { content: RequestContent | undefined; refused: ReadonlyMap<number, string> } {
  const first = (unit.slots[0] as Slot<E>).entry;
  if (first.recorded !== undefined) {
    const bytes = typeof first.body === "string" ? Buffer.from(first.body, "utf8") : Buffer.from(first.body);
    return { content: recordedRequest(first.recorded.method, bytes, first.recorded.rule), refused: NONE };
  }
  if (unit.target.batchSize !== undefined) {
    return batchRequest(
      unit.target,
      unit.slots.map((slot) => slot.entry),
    );
  }
  const single = singleRequest(unit.target, first);
  return "refused" in single ? { content: undefined, refused: new Map([[0, single.refused]]) } : { content: single, refused: NONE };
}

const DUE = Symbol("due");

/**
 * The dispatcher's messages as units: each message is handed to every target's open batch; a
 * batch becomes a unit when full, when its first message waited `waitMs` (when given) while the
 * source had nothing more, or when the source ends. A recorded request is a unit of its own for
 * every target, after the batches open before it. `onRead` sees each message as it is read.
 */
export async function* unitsOf<E extends DispatchEntry>(
  source: AsyncIterator<Slot<E>[]>,
  targets: readonly Target[],
  batcher: Batcher<Slot<E>>,
  clock: Clock,
  onRead: (slot: Slot<E>) => void,
): AsyncGenerator<Unit<E>[]> {
  const toUnit = (batch: Batch<Slot<E>>): Unit<E> => unitOf(targets[batch.group] as Target, batch.group, batch.items);
  let next: Promise<IteratorResult<Slot<E>[]>> | undefined;
  try {
    for (;;) {
      next ??= source.next();
      const dueAt = batcher.nextDueAt();
      const read = dueAt === undefined ? await next : await orWhenDue(next, clock, dueAt);
      if (read === DUE) {
        const due = batcher.due(clock.now());
        if (due.length > 0) yield due.map(toUnit);
        continue;
      }
      next = undefined;
      if (read.done === true) {
        const rest = batcher.flush();
        if (rest.length > 0) yield rest.map(toUnit);
        return;
      }
      const units: Unit<E>[] = [];
      const now = clock.now();
      for (const slot of read.value) {
        onRead(slot);
        if (slot.entry.recorded !== undefined) {
          for (const batch of batcher.flush()) units.push(toUnit(batch));
          for (const [group, target] of targets.entries()) units.push(unitOf(target, group, [slot]));
        } else for (const batch of batcher.add(slot, now)) units.push(toUnit(batch));
      }
      for (const batch of batcher.due(now)) units.push(toUnit(batch));
      if (units.length > 0) yield units;
    }
  } finally {
    if (next === undefined) await source.return?.();
  }
}

/** The source's next read, or DUE once the clock reaches `dueAt` first. */
function orWhenDue<T>(read: Promise<T>, clock: Clock, dueAt: number): Promise<T | typeof DUE> {
  return new Promise((resolve, reject) => {
    const timer = clock.setTimeout(() => resolve(DUE), Math.max(0, dueAt - clock.now()));
    read.then(
      (value) => {
        clock.clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clock.clearTimeout(timer);
        reject(error);
      },
    );
  });
}

/** Where one message stands: each target's answer, as its units finish. */
interface Standing {
  waiting: number;
  started: boolean;
  began: number;
  urls: (UrlResult | undefined)[];
  delivered: boolean;
  /** Every target that holds it skipped it (destination functions). */
  skipped: boolean;
  interrupted: boolean;
  rounds: number;
}

/**
 * Per-message bookkeeping: a message is finished once every target's request holding it is, and
 * its result is theirs together (delivered when every target took it, as Webhooks (Actions)
 * subscriptions are independent). `done` is told once per message.
 */
export class EventLedger<E extends DispatchEntry> {
  private readonly open = new Map<Slot<E>, Standing>();
  lastRead: Slot<E> | undefined;

  constructor(
    private readonly targets: number,
    private readonly done: (slot: Slot<E>, result: DeliveryResult, ms: number) => void,
  ) {}

  read(slot: Slot<E>): void {
    this.lastRead = slot;
    this.open.set(slot, { waiting: this.targets, started: false, began: 0, urls: [], delivered: true, skipped: true, interrupted: false, rounds: 0 });
  }

  /** A unit holding the message starts; true the first time. */
  start(slot: Slot<E>): boolean {
    const standing = this.open.get(slot);
    if (standing === undefined || standing.started) return false;
    standing.started = true;
    standing.began = performance.now();
    return true;
  }

  /**
   * A unit finished with `result` (undefined: nothing was sent, every message of it refused).
   * Tells `done` of each message it finished; the first error thrown by `done` is rethrown after
   * all of them were told.
   */
  finish(unit: Unit<E>, result: DeliveryResult | undefined, refused: ReadonlyMap<number, string>): void {
    this.finishEach(unit, (position) => {
      const why = refused.get(position);
      return why !== undefined ? { refused: why } : result;
    });
  }

  /** A unit finished with each message's own result (a destination function's batch: docs/functions.md#batches). */
  finishEach(unit: Unit<E>, resultAt: (position: number) => DeliveryResult | { refused: string } | undefined): void {
    let failure: { error: unknown } | undefined;
    for (const [position, slot] of unit.slots.entries()) {
      const standing = this.open.get(slot);
      if (standing === undefined) continue;
      const own = resultAt(position);
      const result = own !== undefined && "refused" in own ? undefined : own;
      standing.urls[unit.group] = own !== undefined && "refused" in own ? refusedResult(unit.target, own.refused) : result?.urls[0];
      standing.delivered &&= result?.delivered === true;
      standing.skipped &&= result?.skipped === true;
      standing.interrupted ||= result?.interrupted === true;
      standing.rounds = Math.max(standing.rounds, result?.rounds ?? 0);
      standing.waiting -= 1;
      if (standing.waiting > 0) continue;
      this.open.delete(slot);
      try {
        this.done(slot, resultOf(standing), performance.now() - standing.began);
      } catch (error) {
        failure ??= { error };
      }
    }
    if (failure) throw failure.error;
  }

  /** The messages not finished (the run stopped), in source order, with whether any of their requests started and what is known. */
  unfinished(): { slot: Slot<E>; started: boolean; result: DeliveryResult }[] {
    const rest = [...this.open.entries()].map(([slot, standing]) => ({
      slot,
      started: standing.started,
      result: resultOf({ ...standing, interrupted: true }),
    }));
    this.open.clear();
    return rest.sort((a, b) => a.slot.index - b.slot.index);
  }
}

function resultOf(standing: Standing): DeliveryResult {
  const result: DeliveryResult = {
    delivered: standing.delivered && !standing.interrupted,
    interrupted: standing.interrupted,
    rounds: standing.rounds,
    urls: standing.urls.filter((url): url is UrlResult => url !== undefined),
  };
  if (standing.skipped && !standing.interrupted) result.skipped = true;
  return result;
}
