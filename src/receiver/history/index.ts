/**
 * The receiver's request history, as the rest of the code uses it: the bounded store of rows (what
 * listen's page and `r` key show, and `startReceiver`'s received list), a row made from a received
 * request or from a recording line, and what a row keeps. Modules outside this folder import from here.
 */
export { DEFAULT_HISTORY_MB, DEFAULT_KEEP, inspectedRow, receivedRow, RequestStore } from "./store.js";
export type { DropNotice, Inspected, NewInspected, StoreLimits } from "./store.js";
export type { KeptResponse, KeptVerdict, PeerResponse } from "./kept.js";
export { rowFromLine, type RecordedRowOptions } from "./recorded-row.js";
