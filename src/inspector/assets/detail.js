// The detail pane of one request: its verdict, the app's answer, headers, body, Resend and Copy as curl.
import { actions, curlSection } from "./actions.js";
import { badge, day, h, keyValues, size, statusKind, time } from "./dom.js";

/** The detail pane of one request; `page` gives the page's select and the URLs it resends to. */
export function renderDetail(d, page) {
  const title = [d.kindLabel ?? "unknown", d.userId, d.name ? `“${d.name}”` : null].filter(Boolean).join(" · ");
  const sub = `${d.method} ${d.path} · ${day(d.receivedAt)} ${time(d.receivedAt)} · ${size(d.size)}`;
  return [
    h("h2", {}, `#${d.label} `, title),
    h(
      "p",
      { class: "sub mono" },
      sub,
      d.resendOf !== null
        ? h(
            "span",
            { id: "resend-of" },
            d.resendEdited ? " · edited resend of " : " · resend of ",
            h("span", { class: "link", onclick: () => page.select(d.resendOf) }, `#${d.resendOfLabel}`),
            ` to ${d.resendUrl}`,
          )
        : null,
    ),
    actions(d, page),
    h("h3", {}, "Signature"),
    signatureSection(d),
    h("h3", {}, "Shape"),
    ...shapeSection(d),
    ...(d.elements ? [h("h3", {}, `Elements (${d.batch?.elements ?? d.elements.length})`), elementsSection(d)] : []),
    h("h3", {}, d.resendOf !== null ? "Target's response" : "App's response"),
    responseSection(d, page),
    h("h3", {}, "Headers"),
    keyValues(d.headers),
    h("h3", {}, "Body"),
    bodySection(d),
    curlSection(d),
  ];
}

function signatureSection(d) {
  if (d.signature === "ok" && d.signatureRule === "first-element")
    return h(
      "div",
      { id: "signature-ok" },
      h("p", { class: "problem ok" }, "X-Signature matches element 0's bytes (the Webhooks (Actions) batch rule)"),
      h("p", { class: "problem warn" }, d.signatureNote),
    );
  if (d.signature === "ok" && d.scheme !== null && d.scheme !== "default") return h("p", { id: "signature-ok", class: "problem ok" }, schemeVerified(d));
  if (d.signature === "ok") return h("p", { class: "problem ok" }, d.kind === "batch" ? "X-Signature matches the whole body" : "X-Signature matches the body");
  if (d.signature === "unsigned") return h("p", { class: "problem warn" }, d.signatureNote ?? "not checked: listen has no secret");
  return h(
    "div",
    { id: "signature-problem" },
    h("p", { class: "problem bad" }, d.signatureError ?? "signature failed"),
    d.diagnosis ? h("p", { class: "problem warn" }, "Likely cause: ", d.diagnosis) : null,
  );
}

/** `standard: webhook-signature matches the body (secret 2; timestamp 3 s old)`. */
function schemeVerified(d) {
  const notes = [];
  if (d.signatureSecret !== null && d.signatureSecret > 1) notes.push(`secret ${d.signatureSecret}`);
  if (d.skewSeconds !== null) notes.push(d.skewSeconds >= 0 ? `timestamp ${d.skewSeconds} s old` : `timestamp ${-d.skewSeconds} s ahead`);
  return `${d.scheme}: ${d.signatureHeader} matches the ${d.kind === "batch" ? "whole body" : "body"}${notes.length > 0 ? ` (${notes.join("; ")})` : ""}`;
}

// A batch's element issues are listed per element below; here only what concerns the body as a whole.
const bodyLevel = (d, issues) => (d.elements ? issues.filter((issue) => !issue.key.startsWith("[") && issue.key !== "(more)") : issues);

function shapeSection(d) {
  const items = [
    ...bodyLevel(d, d.shapeErrors).map((issue) => h("p", { class: "problem bad" }, issue.message)),
    ...bodyLevel(d, d.shapeWarnings).map((issue) => h("p", { class: "problem warn" }, issue.message)),
  ];
  if (items.length > 0) return items;
  if (d.kind === "batch") {
    const failing = d.elements.filter((element) => element.errors.length > 0).length;
    return [
      h("p", { class: `problem ${failing > 0 ? "bad" : "ok"}` }, failing > 0 ? `${failing} of the elements listed have shape errors` : "every element passes"),
    ];
  }
  if (d.kind === "payload") return [h("p", { class: "problem ok" }, "a mapped payload, not a message: it has no message shape to check")];
  if (d.kind === "none") return [h("p", { class: "problem ok" }, "no data: an empty body, as Webhooks (Actions) sends for an event without data")];
  return [h("p", { class: "problem ok" }, "a known message type with every required key")];
}

const ELEMENT_KINDS = { message: "message", payload: "payload", empty: "null (no data)", invalid: "invalid" };

// Each element of a batch with what it is and its shape result.
function elementsSection(d) {
  const rows = d.elements.map((element) =>
    h(
      "tr",
      { "data-index": element.index },
      h("td", { class: "mono" }, String(element.index)),
      h("td", {}, ELEMENT_KINDS[element.kind] ?? element.kind, element.signed ? h("span", {}, " ", badge("signed", "ok")) : null),
      h("td", {}, element.type ?? "–"),
      h("td", {}, element.userId ?? "–", element.name ? h("span", { class: "muted" }, ` · ${element.name}`) : null),
      h(
        "td",
        { class: "shape" },
        element.errors.length === 0 && element.warnings.length === 0 ? badge("ok", "ok") : null,
        ...element.errors.map((message) => h("div", { class: "bad" }, message)),
        ...element.warnings.map((message) => h("div", { class: "warn" }, message)),
      ),
    ),
  );
  return h(
    "div",
    { id: "elements" },
    h(
      "table",
      { class: "elements" },
      h("thead", {}, h("tr", {}, h("th", {}, "#"), h("th", {}, "Element"), h("th", {}, "Type"), h("th", {}, "User / event"), h("th", {}, "Shape"))),
      h("tbody", {}, rows),
    ),
    d.elementsNote ? h("p", { class: "note muted" }, d.elementsNote) : null,
  );
}

function responseSection(d, page) {
  const r = d.response;
  if (d.rule !== null) return h("p", { id: "answered-by-rule" }, `answered by rule ${d.rule} (--responses): ${d.status ?? "no answer"}`);
  if (!r)
    return h(
      "p",
      { class: "muted" },
      d.forwardTarget
        ? "not forwarded (answered by a fault flag)"
        : page.receiverUrl === null
          ? "no app's answer in the recording (listen was not forwarding it)"
          : page.forwarding
            ? `not forwarded: no route takes it (no --forward-to without a type); listen answered ${d.status ?? "nothing"}`
            : `not forwarding: listen answered ${d.status ?? "nothing"}`,
    );
  return h(
    "div",
    { id: "app-response" },
    h(
      "p",
      {},
      r.status !== null ? badge(String(r.status), statusKind(r.status)) : badge("no answer", "bad"),
      ` in ${r.ms} ms`,
      r.error ? h("span", { class: "muted" }, ` · ${r.error}`) : null,
    ),
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
