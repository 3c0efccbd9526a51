import { AsyncLocalStorage } from "node:async_hooks";
import type { Clock, TimerHandle } from "../util/clock.js";

/** A guard against a function that starts timers in a loop; Node has no such bound. */
const MAX_TIMERS = 10_000;

/**
 * The function's `setTimeout`, `setInterval` and their `clear…`, on the runtime's clock (so a
 * test runs them in virtual time). Each callback runs in the invocation that set it; a throw in
 * one goes to `onError` instead of ending the process. `clearAll` (when the function is closed)
 * stops whatever the function left running.
 */
export class FunctionTimers {
  private next = 1;
  private readonly active = new Map<number, TimerHandle>();

  constructor(
    private readonly clock: Clock,
    private readonly onError: (error: unknown) => void,
  ) {}

  globals(): Record<string, unknown> {
    return {
      setTimeout: (callback: unknown, ms?: unknown, ...args: unknown[]) => this.start(callback, ms, args, false),
      setInterval: (callback: unknown, ms?: unknown, ...args: unknown[]) => this.start(callback, ms, args, true),
      clearTimeout: (id: unknown) => this.clear(id),
      clearInterval: (id: unknown) => this.clear(id),
    };
  }

  clearAll(): void {
    for (const handle of this.active.values()) this.clock.clearTimeout(handle);
    this.active.clear();
  }

  private start(callback: unknown, ms: unknown, args: unknown[], repeat: boolean): TimerObject {
    if (typeof callback !== "function") throw new TypeError('The "callback" argument must be of type function');
    if (this.active.size >= MAX_TIMERS) throw new RangeError(`more than ${MAX_TIMERS} timers at once`);
    const id = this.next++;
    // As Node does: a delay that is not a positive finite number is 1 ms.
    const delay = typeof ms === "number" && Number.isFinite(ms) && ms >= 1 ? ms : 1;
    const inInvocation = AsyncLocalStorage.snapshot();
    const fire = (): void => {
      if (repeat) this.active.set(id, this.clock.setTimeout(fire, delay));
      else this.active.delete(id);
      inInvocation(() => {
        try {
          (callback as (...a: unknown[]) => unknown)(...args);
        } catch (error) {
          this.onError(error);
        }
      });
    };
    this.active.set(id, this.clock.setTimeout(fire, delay));
    return timerObject(id);
  }

  private clear(timer: unknown): void {
    const id = typeof timer === "number" ? timer : (timer as Partial<TimerObject> | null)?.id;
    if (typeof id !== "number") return;
    const handle = this.active.get(id);
    if (handle) this.clock.clearTimeout(handle);
    this.active.delete(id);
  }
}

/** What setTimeout returns in Node: `ref`/`unref` (no-ops here: the function's timers end with it), and its number where one is used. */
interface TimerObject {
  readonly id: number;
  ref(): TimerObject;
  unref(): TimerObject;
  hasRef(): boolean;
  [Symbol.toPrimitive](): number;
}

function timerObject(id: number): TimerObject {
  const timer: TimerObject = {
    id,
    ref: () => timer,
    unref: () => timer,
    hasRef: () => true,
    [Symbol.toPrimitive]: () => id,
  };
  return timer;
}
