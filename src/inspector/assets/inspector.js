// The inspector page: rows arrive as server-sent events; everything is built with DOM calls
// (never innerHTML), because every field shown comes from a request anyone could send.

const state = { rows: [], keep: 1000, selected: null, forwardUrl: null, receiverUrl: "", fresh: new Set() };
const $ = (id) => document.getElementById(id);

function h(tag, attrs = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on")) element.addEventListener(name.slice(2), value);
    else if (name === "class") element.className = value;
    else element.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat()) if (child !== null && child !== undefined && child !== false) element.append(child instanceof Node ? child : String(child));
  return element;
}

const badge = (text, kind) => h("span", { class: `badge ${kind}` }, text);
const pad = (n, w = 2) => String(n).padStart(w, "0");
const time = (iso) => {
  const date = new Date(iso);
  return `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)}`;
};
const day = (iso) => {
  const date = new Date(iso);
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
};
const size = (bytes) => (bytes < 1024 ? `${bytes} B` : bytes < 1048576 ? `${(bytes / 1024).toFixed(1)} KB` : `${(bytes / 1048576).toFixed(1)} MB`);
const statusKind = (status) => (status === null ? "bad" : status < 300 ? "ok" : status < 500 ? "warn" : "bad");

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
  if (row.resendOf !== null) return h("span", { class: "link", title: "the request this one resent", onclick: (e) => (e.stopPropagation(), select(row.resendOf)) }, `↻ #${row.resendOfLabel}`);
  if (row.fault === "timeout") return badge("held", "warn");
  if (row.fault === "drop") return badge("dropped", "warn");
  return badge(`${row.status ?? "–"}${row.injected ? " injected" : ""}`, row.injected ? "warn" : statusKind(row.status));
}

function appCell(row) {
  if (row.appStatus !== null) return badge(String(row.appStatus), statusKind(row.appStatus));
  if (row.appError) return h("span", { title: row.appError }, badge(row.status === 504 || /answer/.test(row.appError) ? "timeout" : "unreachable", "bad"));
  return h("span", { class: "muted" }, "–");
}

function matches(row, filters) {
  if (filters.type && (row.type ?? "(unknown)") !== filters.type) return false;
  if (filters.verdict === "valid" && !row.valid) return false;
  if (filters.verdict === "invalid" && row.valid) return false;
  if (filters.verdict === "signature" && row.signature !== "failed") return false;
  if (filters.verdict === "shape" && row.shape !== "errors") return false;
  if (filters.verdict === "unsigned" && row.signature !== "unsigned") return false;
  if (filters.text) {
    const haystack = [row.label, row.method, row.path, row.type, row.userId, row.name, row.status, row.appStatus, row.appError, row.resendUrl].join(" ").toLowerCase();
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
        { "data-id": row.id, class: [row.id === state.selected ? "selected" : "", state.fresh.has(row.id) ? "fresh" : ""].join(" ").trim() || null, onclick: () => select(row.id) },
        h("td", { class: "mono" }, row.label),
        h("td", { class: "mono" }, time(row.receivedAt)),
        h("td", {}, row.method),
        h("td", { class: "mono", title: row.path }, row.path),
        h("td", {}, row.type ?? h("span", { class: "muted" }, "?")),
        h("td", { title: [row.userId, row.name].filter(Boolean).join(" · ") }, row.userId ?? "–", row.name ? h("span", { class: "muted" }, ` · ${row.name}`) : null),
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
  if (state.selected === id) pane.replaceChildren(...renderDetail(detail));
}

function renderDetail(d) {
  const title = [d.type ?? "unknown", d.userId, d.name ? `“${d.name}”` : null].filter(Boolean).join(" · ");
  const sub = `${d.method} ${d.path} · ${day(d.receivedAt)} ${time(d.receivedAt)} · ${size(d.size)}`;
  return [
    h("h2", {}, `#${d.label} `, title),
    h("p", { class: "sub mono" }, sub, d.resendOf !== null ? h("span", {}, " · resend of ", h("span", { class: "link", onclick: () => select(d.resendOf) }, `#${d.resendOfLabel}`), ` to ${d.resendUrl}`) : null),
    actions(d),
    h("h3", {}, "Signature"),
    signatureSection(d),
    h("h3", {}, "Shape"),
    ...shapeSection(d),
    h("h3", {}, d.resendOf !== null ? "Target's response" : "App's response"),
    responseSection(d),
    h("h3", {}, "Headers"),
    keyValues(d.headers),
    h("h3", {}, "Body"),
    bodySection(d),
    h("details", { open: d.curl === null }, h("summary", {}, "curl"), d.curl !== null ? h("pre", { id: "curl-text" }, d.curl) : h("p", { id: "curl-problem", class: "problem warn" }, curlProblem(d))),
  ];
}

function actions(d) {
  const url = h("input", { id: "resend-url", type: "url", value: state.forwardUrl ?? state.receiverUrl, "aria-label": "Resend to URL", placeholder: "http://localhost:3000/webhook" });
  const note = h("p", { id: "action-note", class: "note muted", role: "status" });
  const resend = h("button", { id: "resend", type: "button" }, "Resend");
  resend.addEventListener("click", async () => {
    resend.disabled = true;
    note.textContent = "Resending…";
    try {
      const response = await fetch(`/api/requests/${d.id}/resend`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ url: url.value }) });
      const result = await response.json();
      if (!response.ok) note.textContent = result.error;
      else {
        note.replaceChildren(`Resent as `, h("span", { class: "link", onclick: () => select(result.id) }, `#${result.label}`), ` → ${result.appStatus ?? result.appError ?? "no answer"}${result.ms !== null ? ` in ${result.ms} ms` : ""}`);
      }
    } finally {
      resend.disabled = false;
    }
  });
  const copy = h("button", { id: "copy-curl", type: "button", class: "secondary", title: d.curl === null ? curlProblem(d) : null }, "Copy as curl");
  copy.addEventListener("click", async () => {
    if (d.curl === null) {
      note.textContent = curlProblem(d);
      return;
    }
    try {
      await navigator.clipboard.writeText(d.curl);
      note.textContent = "curl command copied";
    } catch {
      note.textContent = "the clipboard is not available: the command is under “curl” below";
    }
  });
  return h("div", {}, h("div", { class: "actions" }, url, resend, copy), note);
}

const curlProblem = (d) => `Cannot be copied as curl: ${d.curlProblem}.`;

function signatureSection(d) {
  if (d.signature === "ok") return h("p", { class: "problem ok" }, "X-Signature matches the body");
  if (d.signature === "unsigned") return h("p", { class: "problem warn" }, "not checked: listen has no secret");
  return h("div", { id: "signature-problem" }, h("p", { class: "problem bad" }, d.signatureError ?? "signature failed"), d.diagnosis ? h("p", { class: "problem warn" }, "Likely cause: ", d.diagnosis) : null);
}

function shapeSection(d) {
  const items = [
    ...d.shapeErrors.map((issue) => h("p", { class: "problem bad" }, issue.message)),
    ...d.shapeWarnings.map((issue) => h("p", { class: "problem warn" }, issue.message)),
  ];
  return items.length > 0 ? items : [h("p", { class: "problem ok" }, "a known message type with every required key")];
}

function responseSection(d) {
  const r = d.response;
  if (!r) return h("p", { class: "muted" }, state.forwardUrl ? "not forwarded (answered by a fault flag)" : `not forwarding: listen answered ${d.status ?? "nothing"}`);
  return h(
    "div",
    { id: "app-response" },
    h("p", {}, r.status !== null ? badge(String(r.status), statusKind(r.status)) : badge("no answer", "bad"), ` in ${r.ms} ms`, r.error ? h("span", { class: "muted" }, ` · ${r.error}`) : null),
    Object.keys(r.headers).length > 0 ? keyValues(r.headers) : null,
    r.body ? h("pre", {}, r.bodyPretty ?? r.body) : null,
    r.body === null && r.bodySha256 ? h("p", { id: "app-body-digest", class: "muted" }, `body not kept (${size(r.bodySize)}): sha256 ${r.bodySha256}`) : null,
  );
}

function bodySection(d) {
  const pretty = h("pre", { id: "body-pretty", hidden: d.bodyPretty === null }, d.bodyPretty ?? "");
  const raw = h("pre", { id: "body-raw", hidden: d.bodyPretty !== null }, d.bodyRaw);
  const tab = (label, target, other) => {
    const button = h("button", { type: "button", "aria-selected": String(!target.hidden) }, label);
    button.addEventListener("click", () => {
      target.hidden = false;
      other.hidden = true;
      for (const b of button.parentElement.children) b.setAttribute("aria-selected", String(b === button));
    });
    return button;
  };
  // A body whose pretty form would be too large comes raw only, with the reason.
  const note = d.bodyNote ? h("p", { id: "body-note", class: "note muted" }, d.bodyNote) : null;
  return h("div", {}, h("div", { class: "tabs" }, tab("Pretty", pretty, raw), tab("Raw", raw, pretty)), note, pretty, raw);
}

function keyValues(record) {
  const rows = Object.entries(record).flatMap(([name, value]) => (Array.isArray(value) ? value : [value]).map((one) => h("tr", {}, h("td", { class: "mono" }, name), h("td", { class: "mono" }, one))));
  return h("table", { class: "kv" }, h("tbody", {}, rows));
}

function showDropped(dropped) {
  const note = $("history-note");
  note.hidden = !dropped;
  if (dropped) note.textContent = `${dropped.message} (${dropped.dropped} so far)`;
}

function download() {
  const ids = shownRows().map((row) => row.id).join(",");
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
    Object.assign(state, { rows: hello.rows, keep: hello.keep, forwardUrl: hello.forwardUrl, receiverUrl: hello.receiverUrl });
    $("receiver-url").textContent = hello.receiverUrl;
    $("forward-url").textContent = hello.forwardUrl ?? "– (not forwarding)";
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
