import { activeInvocation } from "./invocation.js";

/** What a loaded function does with a rejection nobody handled that is its own. */
export interface RejectionWatch {
  /** The function context's `Promise.prototype`: a promise of that realm is the function's. */
  promisePrototype: object;
  /** A rejection of this function outside any running invocation (at load, in a timer, after the handler ended). */
  late: (reason: unknown) => void;
}

const watches = new Set<RejectionWatch>();
let listening = false;

/**
 * A promise the function rejected and never handled (`fetch(url)` without `await`, say) would end
 * the whole process under Node's default, as it ends the service's instance. It is the function's
 * when it was made in one of its invocations (Node runs this listener in the promise's async
 * context) or in its context: then the running invocation fails with it, or it is reported as late.
 * Any other unhandled rejection is thrown on, as Node would.
 */
function onUnhandledRejection(reason: unknown, promise: Promise<unknown>): void {
  const invocation = activeInvocation.getStore();
  if (invocation) {
    invocation.reject(reason);
    return;
  }
  const prototype = Object.getPrototypeOf(promise) as object | null;
  for (const watch of watches) {
    if (watch.promisePrototype === prototype) {
      watch.late(reason);
      return;
    }
  }
  throw reason;
}

/**
 * Watches for a function's unhandled rejections while it is loaded; the returned function stops.
 * The listener stays once installed: a request the function left running is aborted when its
 * invocation ends and may reject after the function is closed; what is not a function's is thrown
 * on all the same.
 */
export function watchRejections(watch: RejectionWatch): () => void {
  if (!listening) process.on("unhandledRejection", onUnhandledRejection);
  listening = true;
  watches.add(watch);
  return () => watches.delete(watch);
}
