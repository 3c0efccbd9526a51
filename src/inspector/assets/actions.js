// A request's actions: Resend (as it was, or edited first) to a URL, and Copy as curl.
import { h } from "./dom.js";

const curlProblem = (d) => `Cannot be copied as curl: ${d.curlProblem}.`;

const SIGNED_BY = {
  "first-element": "re-signed over element 0, the rule it verified with (the edit must keep it a JSON array)",
  body: "re-signed over the whole body, the rule it verified with",
};

/** The action bar of detail `d`; `page` gives `select`, `receiverUrl` (null for a recording) and `onResent`. */
export function actions(d, page) {
  const url = h("input", {
    id: "resend-url",
    type: "url",
    value: d.forwardTarget ?? page.receiverUrl ?? "",
    "aria-label": "Resend to URL",
    placeholder: "http://127.0.0.1:8080/hook",
  });
  const note = h("p", { id: "action-note", class: "note muted", role: "status" });
  const resend = h("button", { id: "resend", type: "button" }, "Resend");
  const editing = editor(d);
  const send = async (button, body) => {
    button.disabled = true;
    note.textContent = "Resending…";
    try {
      const response = await fetch(`/api/requests/${d.id}/resend`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body === undefined ? { url: url.value } : { url: url.value, body }),
      });
      const result = await response.json();
      if (!response.ok) note.textContent = result.error;
      else {
        note.replaceChildren(
          body === undefined ? "Resent as " : "Edited and resent as ",
          h("span", { class: "link", onclick: () => page.select(result.id) }, `#${result.label}`),
          ` → ${result.appStatus ?? result.appError ?? "no answer"}${result.ms !== null ? ` in ${result.ms} ms` : ""}`,
        );
        page.onResent(result);
      }
    } finally {
      button.disabled = false;
    }
  };
  resend.addEventListener("click", () => send(resend, undefined));
  editing.sendButton.addEventListener("click", () => send(editing.sendButton, editing.text.value));
  const copy = h("button", { id: "copy-curl", type: "button", class: "secondary" }, "Copy as curl");
  copy.addEventListener("click", () => copyCurl(d, page, url.value, note));
  const bar = h("div", { class: "actions" }, url, resend, editing.toggle, copy);
  return h("div", {}, bar, editing.panel, note);
}

/** The Edit button and its panel: the body as text, sent as edited (the original row stays as it is). */
function editor(d) {
  const editable = !d.bodyRaw.startsWith("(not UTF-8)");
  const text = h("textarea", { id: "edit-body", spellcheck: "false", "aria-label": "Body to send", rows: 12 });
  text.value = editable ? d.bodyRaw : "";
  const sendButton = h("button", { id: "send-edited", type: "button" }, "Send edited");
  const rule =
    d.scheme !== null && d.scheme !== "default"
      ? `re-signed by ${d.scheme} (a fresh timestamp, the same message id) with listen's secrets`
      : (SIGNED_BY[d.signatureRule] ?? "signed over the whole body with the secret, if one is set");
  const panel = h(
    "div",
    { id: "edit-panel", class: "edit", hidden: true },
    text,
    h("div", { class: "actions" }, sendButton, h("span", { class: "muted" }, rule)),
  );
  const toggle = h(
    "button",
    { id: "edit", type: "button", class: "secondary", disabled: !editable, title: editable ? null : "the body is not UTF-8 text" },
    "Edit and resend",
  );
  toggle.addEventListener("click", () => {
    panel.hidden = !panel.hidden;
    if (!panel.hidden) text.focus();
  });
  return { text, sendButton, panel, toggle };
}

/** Copies the command to send this request to its target (for a recording, to the URL typed). */
async function copyCurl(d, page, typed, note) {
  let shown = d;
  if (page.receiverUrl === null) {
    const response = await fetch(`/api/requests/${d.id}?url=${encodeURIComponent(typed)}`);
    shown = await response.json();
    if (!response.ok) {
      note.textContent = shown.error;
      return;
    }
    showCurl(shown);
  }
  if (shown.curl === null) {
    note.textContent = curlProblem(shown);
    return;
  }
  try {
    await navigator.clipboard.writeText(shown.curl);
    note.textContent = "curl command copied";
  } catch {
    note.textContent = "the clipboard is not available: the command is under “curl” below";
  }
}

/** The `curl` section of the detail: the command, or why there is none. */
export function curlSection(d) {
  return h(
    "details",
    { id: "curl", open: d.curl === null },
    h("summary", {}, "curl"),
    d.curl !== null ? h("pre", { id: "curl-text" }, d.curl) : h("p", { id: "curl-problem", class: "problem warn" }, curlProblem(d)),
  );
}

function showCurl(d) {
  document.getElementById("curl")?.replaceWith(curlSection(d));
}
