// The inspector page: listen's requests arrive as server-sent events; a recording (`inspect FILE`) is read in pages.
// Everything is built with DOM calls (never innerHTML), because every field shown comes from a request anyone could send.

import { renderDetail } from "./detail.js";
import { h, size } from "./dom.js";
import { installKeys } from "./keys.js";
import { listFooter, listRows, matches } from "./list.js";

const state = {
  mode: "live",
  rows: [],
  keep: 1000,
  selected: null,
  cursor: null,
  forwarding: false,
  receiverUrl: "",
  fresh: new Set(),
  // A recording: the page shown (newest first), the `before` of each newer page, and where the next older one starts.
  page: { rows: [], before: null, next: null },
  pages: [],
  // Filters set: the server's matches, newest first, and where to search on.
  search: null,
};
const $ = (id) => document.getElementById(id);

function currentFilters() {
  return { q: $("filter-text").value.trim(), type: $("filter-type").value, verdict: $("filter-verdict").value };
}

const filtering = () => Object.values(currentFilters()).some((value) => value !== "");

/** The rows listed, newest first. */
function shownRows() {
  if (state.mode === "file") return state.search ? state.search.rows : state.page.rows;
  if (!filtering()) return [...state.rows].reverse();
  const filters = currentFilters();
  const found = new Set(state.search?.rows.map((row) => row.id));
  return state.rows.filter((row) => found.has(row.id) || matches(row, filters)).reverse();
}

function renderList() {
  const shown = shownRows();
  $("rows").replaceChildren(...listRows(shown, { selected: state.selected, cursor: state.cursor, fresh: state.fresh, select }));
  state.fresh.clear();
  $("list-footer").replaceChildren(...listFooter(state, { searchMore, older, newer }));
  const total = state.mode === "file" ? state.total : state.rows.length;
  $("empty").hidden = total > 0;
  $("count").textContent = filtering() ? `${shown.length} of ${total} requests` : `${total} requests`;
  $("download").disabled = shown.length === 0;
}

let pending = false;
function scheduleRender() {
  if (pending) return;
  pending = true;
  requestAnimationFrame(() => {
    pending = false;
    renderList();
  });
}

async function select(id) {
  state.selected = id;
  state.cursor = id;
  renderList();
  const response = await fetch(`/api/requests/${id}`);
  const pane = $("detail");
  pane.hidden = false;
  if (!response.ok) {
    pane.replaceChildren(h("p", { class: "problem bad" }, (await response.json()).error));
    return;
  }
  const detail = await response.json();
  const page = { select, forwarding: state.forwarding, receiverUrl: state.receiverUrl, onResent };
  if (state.selected === id) pane.replaceChildren(...renderDetail(detail, page));
}

/** A recording's resends are listed at the top of its newest page (listen's come through the stream). */
function onResent(row) {
  if (state.mode !== "file") return;
  state.total += 1;
  if (state.pages.length === 0) state.page.rows.unshift(row);
  scheduleRender();
}

// Filters are applied by the server, over every row it has (a recording's whole file, in bounded steps).
let searchTimer;
let searchToken = 0;
function scheduleSearch(delayMs = 250) {
  clearTimeout(searchTimer);
  searchTimer = setTimeout(() => void runSearch(), delayMs);
}

async function runSearch(before) {
  const token = ++searchToken;
  if (!filtering()) {
    state.search = null;
    return scheduleRender();
  }
  const params = new URLSearchParams(currentFilters());
  if (before !== undefined) params.set("before", String(before));
  const response = await fetch(`/api/search?${params}`);
  const answer = await response.json();
  if (token !== searchToken) return;
  if (!response.ok) {
    $("count").textContent = answer.error;
    return;
  }
  const earlier = before !== undefined && state.search ? state.search : { rows: [], scanned: 0 };
  state.search = { rows: [...earlier.rows, ...answer.rows], next: answer.next, scanned: earlier.scanned + answer.scanned };
  scheduleRender();
}

const searchMore = () => void runSearch(state.search?.next ?? undefined);

async function loadPage(before) {
  const response = await fetch(`/api/rows${before === null ? "" : `?before=${before}`}`);
  const answer = await response.json();
  state.page = { rows: answer.rows, before, next: answer.next };
  scheduleRender();
}

function older() {
  state.pages.push(state.page.before);
  void loadPage(state.page.next);
}

function newer() {
  void loadPage(state.pages.pop() ?? null);
}

function showDropped(dropped) {
  const note = $("history-note");
  note.hidden = !dropped;
  if (dropped) note.textContent = `${dropped.message} (${dropped.dropped} so far)`;
}

// listen's routing: one line per routed type, then where the rest goes.
function showRoutes(fallback, byType) {
  const typed = Object.entries(byType ?? {});
  const lines = typed.map(([type, url]) => h("div", { class: "route", "data-type": type }, `${type} → ${url}`));
  const rest = typed.length > 0 ? "the rest → " : "";
  if (fallback !== null) lines.push(h("div", { class: "route", "data-type": "" }, `${rest}${fallback}`));
  else if (typed.length > 0) lines.push(h("div", { class: "route muted", "data-type": "" }, "the rest: answered here"));
  $("forward-url").replaceChildren(...(lines.length > 0 ? lines : ["– (not forwarding)"]));
  state.forwarding = lines.length > 0;
}

function download() {
  const ids = shownRows()
    .map((row) => row.id)
    .join(",");
  const link = h("a", { href: `/api/download?ids=${ids}`, download: "webhook-requests.ndjson" });
  document.body.append(link);
  link.click();
  link.remove();
}

const keepNewest = () => {
  if (state.rows.length > state.keep) state.rows.splice(0, state.rows.length - state.keep);
};

// A new row while filters are set: the server searches again, at most twice a second.
function newRow() {
  if (state.search) scheduleSearch(500);
  scheduleRender();
}

function connect() {
  const live = $("live");
  const events = new EventSource("/api/events");
  events.addEventListener("hello", (event) => {
    const hello = JSON.parse(event.data);
    Object.assign(state, { rows: hello.rows, keep: hello.keep, receiverUrl: hello.receiverUrl });
    $("receiver-url").textContent = hello.receiverUrl;
    showRoutes(hello.forwardUrl, hello.forwardByType);
    showDropped(hello.dropped);
    newRow();
  });
  // The rest of the kept rows, in batches after hello; then each new row on its own.
  events.addEventListener("rows", (event) => {
    for (const row of JSON.parse(event.data)) state.rows.push(row);
    keepNewest();
    newRow();
  });
  events.addEventListener("row", (event) => {
    const row = JSON.parse(event.data);
    state.rows.push(row);
    keepNewest();
    state.fresh.add(row.id);
    newRow();
  });
  // listen dropped its oldest rows (too many, or too many bytes): drop them here too, and say why.
  events.addEventListener("dropped", (event) => {
    const dropped = JSON.parse(event.data);
    state.rows = state.rows.filter((row) => row.id >= dropped.oldestId);
    showDropped(dropped);
    scheduleRender();
  });
  events.addEventListener("open", () => {
    live.textContent = "live";
    live.classList.remove("off");
  });
  events.addEventListener("error", () => {
    live.classList.add("off");
    if (events.readyState !== EventSource.CLOSED) {
      live.textContent = "disconnected: retrying…";
      return;
    }
    // Refused (any answer but a stream): the browser gives up, so ask why, say it, and try again later.
    events.close();
    void explainRefusal(live);
  });
}

async function explainRefusal(live) {
  let reason = "disconnected: retrying…";
  let retryMs = 3000;
  try {
    const response = await fetch("/api/events");
    if (response.ok) {
      // A stream is free again: this probe lets it go and the page connects.
      await response.body?.cancel();
      return connect();
    }
    retryMs = Number(response.headers.get("retry-after") ?? 3) * 1000 || retryMs;
    reason = (await response.json()).error ?? `the live stream was refused (${response.status})`;
  } catch {
    // No answer at all: listen has stopped; keep trying.
  }
  live.textContent = reason;
  setTimeout(connect, retryMs);
}

/** `inspect FILE`: the recording's name and size in the header, its newest page in the list. */
function openRecording(info) {
  Object.assign(state, { mode: "file", receiverUrl: null, total: info.requests });
  $("where").replaceChildren(
    h("dt", {}, "Recording"),
    h("dd", { id: "recording-file" }, `${info.file} (${size(info.size)})`),
    h("dt", {}, "Requests"),
    h("dd", { id: "recording-count" }, String(info.requests)),
  );
  $("live").textContent = "recording (read-only)";
  $("live").classList.remove("off");
  $("empty").textContent = "This recording holds no requests.";
  if (info.skipped > 0) {
    $("history-note").hidden = false;
    $("history-note").textContent = `${info.skipped} line${info.skipped === 1 ? "" : "s"} skipped: ${info.skips.join("; ")}`;
  }
  void loadPage(null);
}

async function start() {
  const info = await (await fetch("/api/info")).json();
  if (info.mode === "file") openRecording(info);
  else connect();
}

// A change of filters: listen's rows are filtered at once; the server's answer follows.
$("filters").addEventListener("input", () => {
  searchToken += 1;
  state.search = null;
  scheduleRender();
  scheduleSearch();
});
$("filters").addEventListener("submit", (event) => event.preventDefault());
$("download").addEventListener("click", download);
installKeys({
  ids: () => shownRows().map((row) => row.id),
  cursor: () => state.cursor,
  setCursor: (id) => {
    state.cursor = id;
    renderList();
  },
  open: (id) => void select(id),
  search: $("filter-text"),
});
void start();
