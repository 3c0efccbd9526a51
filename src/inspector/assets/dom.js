// Building the page's elements and formatting values: DOM calls only, never innerHTML, because
// every field shown comes from a request anyone could send.

export function h(tag, attrs = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on")) element.addEventListener(name.slice(2), value);
    else if (name === "class") element.className = value;
    else element.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat())
    if (child !== null && child !== undefined && child !== false) element.append(child instanceof Node ? child : String(child));
  return element;
}

export const badge = (text, kind) => h("span", { class: `badge ${kind}` }, text);
const pad = (n, w = 2) => String(n).padStart(w, "0");
export const time = (iso) => {
  const date = new Date(iso);
  return `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)}`;
};
export const day = (iso) => {
  const date = new Date(iso);
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
};
export const size = (bytes) => (bytes < 1024 ? `${bytes} B` : bytes < 1048576 ? `${(bytes / 1024).toFixed(1)} KB` : `${(bytes / 1048576).toFixed(1)} MB`);
export const statusKind = (status) => (status === null ? "bad" : status < 300 ? "ok" : status < 500 ? "warn" : "bad");

export function keyValues(record) {
  const rows = Object.entries(record).flatMap(([name, value]) =>
    (Array.isArray(value) ? value : [value]).map((one) => h("tr", {}, h("td", { class: "mono" }, name), h("td", { class: "mono" }, one))),
  );
  return h("table", { class: "kv" }, h("tbody", {}, rows));
}
