// The inspector page: rows arrive as server-sent events; everything is built with DOM calls
// (never innerHTML), because every field shown comes from a request anyone could send.

import { renderDetail } from "./detail.js";
import { badge, h, size, statusKind, time } from "./dom.js";

const state = { rows: [], keep: 1000, selected: null, forwarding: false, receiverUrl: "", fresh: new Set() };
const $ = (id) => document.getElementById(id);

function signatureBadge(row) {
  if (row.signature === "ok") return badge("ok", "ok");
  if (row.signature === "failed") return badge("failed", "bad");
  return badge("unsigned", "dim");
}

function shapeBadge(row) {
  if (row.shape === "errors") return badge("errors", "bad");
  if (row.shape === "warnings") return badge("warnings", "warn");
  return badge("ok", "ok");
}

function answerCell(row) {
  if (row.resendOf !== null)
    return h(
      "span",
      {
        class: "link",
        title: "the request this one resent",
        onclick: (e) => {
          e.stopPropagation();
          select(row.resendOf);
        },
      },
      `↻ #${row.resendOfLabel}`,
    );
  if (row.fault === "timeout") return badge("held", "warn");
  if (row.fault === "drop") return badge("dropped", "warn");
  return badge(`${row.status ?? "–"}${row.injected ? " injected" : ""}`, row.injected ? "warn" : statusKind(row.status));
}

function appCell(row) {
  if (row.appStatus !== null) return badge(String(row.appStatus), statusKind(row.appStatus));
  if (row.appError) return h("span", { title: row.appError }, badge(row.status === 504 || /answer/.test(row.appError) ? "timeout" : "unreachable", "bad"));
  return h("span", { class: "muted" }, "–");
}

// The Type filter's value for a row: its message type, or what else its body is.
function typeKey(row) {
  if (row.kind === "batch" || row.kind === "payload") return row.kind;
  if (row.kind === "none") return "no data";
  return row.type ?? "(unknown)";
}

function matches(row, filters) {
  if (filters.type && typeKey(row) !== filters.type) return false;
  if (filters.verdict === "valid" && !row.valid) return false;
  if (filters.verdict === "invalid" && row.valid) return false;
  if (filters.verdict === "signature" && row.signature !== "failed") return false;
  if (filters.verdict === "shape" && row.shape !== "errors") return false;
  if (filters.verdict === "unsigned" && row.signature !== "unsigned") return false;
  if (filters.text) {
    const haystack = [row.label, row.method, row.path, row.kindLabel, row.userId, row.name, row.status, row.appStatus, row.appError, row.resendUrl]
      .join(" ")
      .toLowerCase();
    if (!haystack.includes(filters.text)) return false;
  }
  return true;
}

function currentFilters() {
  return { type: $("filter-type").value, verdict: $("filter-verdict").value, text: $("filter-text").value.trim().toLowerCase() };
}

function shownRows() {
  const filters = currentFilters();
  return state.rows.filter((row) => matches(row, filters)).reverse();
}

function renderList() {
  const shown = shownRows();
  const body = $("rows");
  body.replaceChildren(
    ...shown.map((row) =>
      h(
        "tr",
        {
          "data-id": row.id,
          class: [row.id === state.selected ? "selected" : "", state.fresh.has(row.id) ? "fresh" : ""].join(" ").trim() || null,
          onclick: () => select(row.id),
        },
        h("td", { class: "mono" }, row.label),
        h("td", { class: "mono" }, time(row.receivedAt)),
        h("td", {}, row.method),
        h("td", { class: "mono", title: row.path }, row.path),
        h("td", { class: "type" }, row.kindLabel ?? h("span", { class: "muted" }, "?")),
        h(
          "td",
          { title: [row.userId, row.name].filter(Boolean).join(" · ") },
          row.userId ?? "–",
          row.name ? h("span", { class: "muted" }, ` · ${row.name}`) : null,
        ),
        h("td", {}, signatureBadge(row)),
        h("td", {}, shapeBadge(row)),
        h("td", {}, answerCell(row)),
        h("td", {}, appCell(row)),
        h("td", { class: "num" }, size(row.size)),
        h("td", { class: "num" }, row.ms === null ? "–" : `${row.ms} ms`),
      ),
    ),
  );
  state.fresh.clear();
  $("empty").hidden = state.rows.length > 0;
  $("count").textContent = shown.length === state.rows.length ? `${state.rows.length} requests` : `${shown.length} of ${state.rows.length} requests`;
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
  renderList();
  const response = await fetch(`/api/requests/${id}`);
  const pane = $("detail");
  pane.hidden = false;
  if (!response.ok) {
    pane.replaceChildren(h("p", { class: "problem bad" }, (await response.json()).error));
    return;
  }
  const detail = await response.json();
  if (state.selected === id) pane.replaceChildren(...renderDetail(detail, { select, forwarding: state.forwarding, receiverUrl: state.receiverUrl }));
}

// listen's routing: one line per routed type, then where the rest goes.
function showRoutes(fallback, typed) {
  const lines = typed.map(([type, url]) => h("div", { class: "route", "data-type": type }, `${type} → ${url}`));
  const rest = typed.length > 0 ? "the rest → " : "";
  if (fallback !== null) lines.push(h("div", { class: "route", "data-type": "" }, `${rest}${fallback}`));
  else if (typed.length > 0) lines.push(h("div", { class: "route muted", "data-type": "" }, "the rest: answered here"));
  $("forward-url").replaceChildren(...(lines.length > 0 ? lines : ["– (not forwarding)"]));
}

function showDropped(dropped) {
  const note = $("history-note");
  note.hidden = !dropped;
  if (dropped) note.textContent = `${dropped.message} (${dropped.dropped} so far)`;
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

function connect() {
  const live = $("live");
  const events = new EventSource("/api/events");
  events.addEventListener("hello", (event) => {
    const hello = JSON.parse(event.data);
    const typed = Object.entries(hello.forwardByType ?? {});
    const forwarding = hello.forwardUrl !== null || typed.length > 0;
    Object.assign(state, { rows: hello.rows, keep: hello.keep, forwarding, receiverUrl: hello.receiverUrl });
    $("receiver-url").textContent = hello.receiverUrl;
    showRoutes(hello.forwardUrl, typed);
    showDropped(hello.dropped);
    scheduleRender();
  });
  // The rest of the kept rows, in batches after hello; then each new row on its own.
  events.addEventListener("rows", (event) => {
    for (const row of JSON.parse(event.data)) state.rows.push(row);
    keepNewest();
    scheduleRender();
  });
  events.addEventListener("row", (event) => {
    const row = JSON.parse(event.data);
    state.rows.push(row);
    keepNewest();
    state.fresh.add(row.id);
    scheduleRender();
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

$("filters").addEventListener("input", scheduleRender);
$("filters").addEventListener("submit", (event) => event.preventDefault());
$("download").addEventListener("click", download);
connect();
