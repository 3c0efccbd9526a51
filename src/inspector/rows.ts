import type { Secrets } from "../safe-text/redact.js";
import type { Candidate } from "./search.js";
import { liveText } from "./search.js";
import type { Inspected, RequestStore } from "../receiver/history/index.js";
import { recordLine } from "./view.js";

/**
 * Where the page's API reads rows from: listen's live history (the store), or a recording that
 * `inspect` opened (read again from the file on demand, its resends in a store of their own).
 */
export interface RowSource {
  get(id: number): Promise<Inspected | undefined>;
  /** Why row `id` is not there. */
  whyGone(id: number): string;
  /** The rows below `before` (exclusive; all when undefined), newest first, for paging and search. */
  newestFirst(before?: number): AsyncIterable<Candidate>;
  /** The recording line Download writes for row `id` (docs/recording.md#recording-line), newline included. */
  line(id: number): Promise<string | undefined>;
  /** Distinct ids one Download may name. */
  readonly maxIds: number;
}

/** listen's rows: the store's, newest first. */
export function liveRows(store: RequestStore, secret: Secrets): RowSource {
  return {
    get: (id) => Promise.resolve(store.get(id)),
    whyGone: (id) => store.whyGone(id),
    newestFirst: (before) => storeNewestFirst(store, before),
    line: (id) => {
      const row = store.get(id);
      return Promise.resolve(row && recordLine(row, secret));
    },
    maxIds: store.keep,
  };
}

/** A store's rows below `before`, newest first; each is looked up as the search reaches it (rows may leave meanwhile). */
export async function* storeNewestFirst(store: RequestStore, before?: number): AsyncGenerator<Candidate> {
  for (let id = Math.min(store.newestId(), (before ?? Number.MAX_SAFE_INTEGER) - 1); id > 0 && id >= store.oldestId(); id--) {
    const row = store.get(id);
    if (row) yield { id, text: liveText(row), row: () => Promise.resolve(row) };
  }
}
