import type { IncomingMessage, ServerResponse } from "node:http";
import { isLoopbackHost } from "./loopback.js";

/*
 * The HTTP edges of the APIs a browser on this machine may reach (the inspector's page and API, listen's
 * control API): who may ask (Host, Origin, Sec-Fetch-Site), and how answers and JSON bodies go.
 */

// The page's own files only: no inline script, nothing from elsewhere.
export const SECURITY_HEADERS = {
  "content-security-policy": "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
};

/**
 * Why a request must not be answered, or null. Host must be a loopback name
 * (DNS rebinding). The API (and anything but GET/HEAD) answers only this page
 * and clients that are not browsers: a foreign `Origin` is refused, and so is a
 * `Sec-Fetch-Site` other than `same-origin` (the page's own requests) or `none`
 * (a typed URL), since a no-cors request (`<img>`, a no-cors fetch, a link)
 * carries no Origin; another port of 127.0.0.1 is another origin but the same
 * site. A POST must be JSON (another site's form cannot send application/json
 * without a CORS preflight, which gets no allow). The page itself stays open to
 * top-level navigation from anywhere.
 */
export function refuse(req: IncomingMessage, pathname: string): string | null {
  const host = req.headers.host ?? "";
  if (!isLoopbackHost(host)) return `the inspector answers only loopback names (Host: ${host || "none"}); open it at http://127.0.0.1:PORT`;
  const readOnly = req.method === "GET" || req.method === "HEAD";
  if (readOnly && !pathname.startsWith("/api/")) return null;
  const origin = req.headers.origin;
  if (origin !== undefined && origin !== `http://${host}`) return `cross-origin request from ${origin} refused`;
  const site = req.headers["sec-fetch-site"];
  if (site !== undefined && site !== "same-origin" && site !== "none")
    return `request from another page refused (Sec-Fetch-Site: ${site}); open the inspector at http://${host}/`;
  if (!readOnly && !(req.headers["content-type"] ?? "").startsWith("application/json")) return "expected Content-Type: application/json";
  return null;
}

export function send(res: ServerResponse, status: number, type: string, body: Buffer | string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { ...SECURITY_HEADERS, ...headers, "content-type": type }).end(body);
}

export function sendJson(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  send(res, status, "application/json; charset=utf-8", JSON.stringify(value), headers);
}

/**
 * Writes `chunk` to an answer sent in pieces: true when `res` takes more at once; otherwise `ready`
 * runs once this chunk has reached the socket (never when the answer closes first). It waits on the
 * write's own callback, not on 'drain': Node.js 26 can return false from write() and then emit no
 * 'drain' (its response buffer flushed into a socket that stays under its own high-water mark).
 */
export function writeOrWait(res: ServerResponse, chunk: string, ready: () => void): boolean {
  let waiting = false;
  const more = res.write(chunk, (error) => {
    if (waiting && !error) ready();
  });
  waiting = !more;
  return more;
}

/**
 * A JSON object body of at most `maxBytes` (other JSON is read as {}). A larger one is read to its
 * end and thrown away, then rejected with TooLarge, so the answer reaches the client.
 */
export function readJson(req: IncomingMessage, maxBytes: number): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxBytes) chunks.push(chunk);
      else chunks.length = 0;
    });
    req.on("error", reject);
    req.on("end", () => {
      if (size > maxBytes) return reject(new TooLarge(maxBytes));
      try {
        const value: unknown = JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}");
        resolve(typeof value === "object" && value !== null ? (value as Record<string, unknown>) : {});
      } catch {
        resolve({});
      }
    });
  });
}

/** A request body over its bound. */
export class TooLarge extends Error {
  constructor(readonly maxBytes: number) {
    super(`the request body is over ${maxBytes} bytes`);
  }
}
