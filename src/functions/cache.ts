import type { Clock } from "../util/clock.js";

/** Keys kept per function; the oldest goes first past it (the service too may drop values at any time). */
const MAX_CACHE_KEYS = 1000;

interface Entry {
  value: Promise<unknown>;
  /** Epoch ms after which the value is loaded again; undefined: no expiry. */
  expiresAt: number | undefined;
}

/**
 * The service's `cache` global (docs/functions.md#globals): `load(key, ttl, fn)` returns the
 * value cached under `key`, calling `fn` when it is missing or older than `ttl` ms (`-1` or none:
 * no expiry); calls for a key already loading share its promise; a rejected load is not kept.
 * `delete(key)` drops it. Process-local, like the service's, and empty at each start.
 */
export function functionCache(clock: Clock): { load(key: unknown, ttl: unknown, fn: unknown): Promise<unknown>; delete(key: unknown): void } {
  const entries = new Map<string, Entry>();
  return {
    load(key, ttl, fn) {
      if (typeof fn !== "function") return Promise.reject(new TypeError("cache.load(key, ttl, fn): fn must be a function"));
      const name = String(key);
      const found = entries.get(name);
      if (found && (found.expiresAt === undefined || clock.now() < found.expiresAt)) return found.value;
      let expiresAt: number | undefined;
      try {
        expiresAt = expiryOf(ttl, clock.now());
      } catch (error) {
        return Promise.reject(error);
      }
      const value = Promise.resolve().then(() => (fn as () => unknown)());
      const entry = { value, expiresAt };
      entries.delete(name);
      entries.set(name, entry);
      if (entries.size > MAX_CACHE_KEYS) entries.delete(entries.keys().next().value as string);
      value.catch(() => {
        if (entries.get(name) === entry) entries.delete(name);
      });
      return value;
    },
    delete(key) {
      entries.delete(String(key));
    },
  };
}

function expiryOf(ttl: unknown, now: number): number | undefined {
  if (ttl === undefined || ttl === null || ttl === -1) return undefined;
  const ms = Number(ttl);
  if (!Number.isFinite(ms) || ms < 0) throw new TypeError(`cache.load: ttl must be a number of milliseconds or -1, not ${String(ttl)}`);
  return now + ms;
}
