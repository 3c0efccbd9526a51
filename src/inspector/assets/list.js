// The request list: one table row per request, built with DOM calls only (every field comes from a request anyone could send).
import { badge, h, size, statusKind, time } from "./dom.js";

/** `ok`, `failed` or `unsigned`; another scheme than X-Signature is named (`ok · standard`). */
function signatureBadge(row) {
  const scheme = row.scheme !== null && row.scheme !== "default" ? ` · ${row.scheme}` : "";
  if (row.signature === "ok") return badge(`ok${scheme}`, "ok");
  if (row.signature === "failed") return badge(`failed${scheme}`, "bad");
  return badge("unsigned", "dim");
}

function shapeBadge(row) {
  if (row.shape === "errors") return badge("errors", "bad");
  if (row.shape === "warnings") return badge("warnings", "warn");
  return badge("ok", "ok");
}

function answerCell(row, select) {
  if (row.resendOf !== null)
    return h(
      "span",
      {},
      h(
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
      ),
      row.resendEdited ? h("span", {}, " ", badge("edited", "warn")) : null,
    );
  if (row.fault === "timeout") return badge("held", "warn");
  if (row.fault === "drop") return badge("dropped", "warn");
  if (row.status === null && !row.injected) return h("span", { class: "muted" }, "–");
  return badge(`${row.status ?? "–"}${row.injected ? " injected" : ""}`, row.injected ? "warn" : statusKind(row.status));
}

function appCell(row) {
  if (row.appStatus !== null) return badge(String(row.appStatus), statusKind(row.appStatus));
  if (row.appError) return h("span", { title: row.appError }, badge(row.status === 504 || /answer/.test(row.appError) ? "timeout" : "unreachable", "bad"));
  return h("span", { class: "muted" }, "–");
}

/** The table rows of `shown` (newest first); `view` has the selected and cursor ids, the fresh ones and `select`. */
export function listRows(shown, view) {
  return shown.map((row) =>
    h(
      "tr",
      {
        "data-id": row.id,
        "aria-current": row.id === view.cursor ? "true" : null,
        class:
          [row.id === view.selected ? "selected" : "", row.id === view.cursor ? "cursor" : "", view.fresh.has(row.id) ? "fresh" : ""].join(" ").trim() || null,
        onclick: () => view.select(row.id),
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
      h("td", {}, answerCell(row, view.select)),
      h("td", {}, appCell(row)),
      h("td", { class: "num" }, size(row.size)),
      h("td", { class: "num" }, row.ms === null ? "–" : `${row.ms} ms`),
    ),
  );
}

/** Under the list: how far a search went (and a button to go on), or a recording's pages. */
export function listFooter(state, actions) {
  const parts = [];
  if (state.search) {
    const { next, scanned } = state.search;
    const where = state.mode === "file" ? "of the recording" : "of bodies";
    parts.push(h("span", { id: "search-note", class: "muted" }, `searched ${size(scanned)} ${where}${next === null ? ", to the oldest request" : ""}`));
    if (next !== null) parts.push(h("button", { id: "search-more", type: "button", class: "secondary", onclick: actions.searchMore }, "Search older requests"));
  } else if (state.mode === "file") {
    parts.push(h("button", { id: "newer", type: "button", class: "secondary", disabled: state.pages.length === 0, onclick: actions.newer }, "‹ Newer"));
    parts.push(h("button", { id: "older", type: "button", class: "secondary", disabled: state.page.next === null, onclick: actions.older }, "Older ›"));
  }
  return parts;
}

// The Type filter's value for a row: its message type, or what else its body is.
function typeKey(row) {
  if (row.kind === "batch" || row.kind === "payload") return row.kind;
  if (row.kind === "none") return "no data";
  return row.type ?? "(unknown)";
}

/** listen's rows are filtered here at once, on the list's fields; the server's answer adds the matches in bodies. */
export function matches(row, filters) {
  if (filters.type && typeKey(row) !== filters.type) return false;
  if (filters.verdict === "valid" && !row.valid) return false;
  if (filters.verdict === "invalid" && row.valid) return false;
  if (filters.verdict === "signature" && row.signature !== "failed") return false;
  if (filters.verdict === "shape" && row.shape !== "errors") return false;
  if (filters.verdict === "unsigned" && row.signature !== "unsigned") return false;
  if (filters.q) {
    const haystack = [row.label, row.method, row.path, row.kindLabel, row.userId, row.name, row.status, row.appStatus, row.appError, row.resendUrl]
      .join(" ")
      .toLowerCase();
    if (!haystack.includes(filters.q.toLowerCase())) return false;
  }
  return true;
}
