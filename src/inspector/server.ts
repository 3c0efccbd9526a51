import { readFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { WebhookCliError } from "../errors.js";
import { startHttpServer } from "../util/http-server.js";
import { isLoopbackHost } from "../util/loopback.js";
import { downloadIds, MAX_DOWNLOADS, writeLines } from "./download.js";
import { EventStreams } from "./events.js";
import type { Inspected, RequestStore } from "./store.js";
import { detail, recordLine, summarize } from "./view.js";

export interface InspectorServerOptions {
  /** 0 = any free port. Always bound to 127.0.0.1. */
  port: number;
  store: RequestStore;
  secret: string | undefined;
  /** listen --strict, for a batch's elements in a row's detail. */
  strict?: boolean;
  forwardUrl: string | null;
  receiverUrl: string;
  resend: (id: number, url?: string) => Promise<Inspected | undefined>;
  /** Live event streams open at once (default 16); more are answered 503. */
  maxStreams?: number;
}

export interface InspectorServer {
  url: string;
  close(): Promise<void>;
}

/** When a page refused a stream (too many open) tries again. */
const STREAM_RETRY_S = 3;
// The page's own files only: no inline script, nothing from elsewhere.
const SECURITY_HEADERS = {
  "content-security-policy": "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
};

const ASSETS: Record<string, { file: string; type: string }> = {
  "/": { file: "index.html", type: "text/html; charset=utf-8" },
  "/inspector.js": { file: "inspector.js", type: "text/javascript; charset=utf-8" },
  "/detail.js": { file: "detail.js", type: "text/javascript; charset=utf-8" },
  "/dom.js": { file: "dom.js", type: "text/javascript; charset=utf-8" },
  "/inspector.css": { file: "inspector.css", type: "text/css; charset=utf-8" },
};

/**
 * The inspector page and its API on 127.0.0.1: the row list as server-sent
 * events, one row's detail, Resend, and Download as a recording. Answers only
 * a loopback Host (a DNS-rebinding page has its own name in Host).
 */
export async function startInspectorServer(options: InspectorServerOptions): Promise<InspectorServer> {
  const app = new InspectorApp(options);
  const { url, close } = await startHttpServer(
    // Nothing here is worth waiting for on close: open pages reconnect to the next run.
    { host: "127.0.0.1", port: options.port, portSource: { field: "uiPort" }, closeGraceMs: 0, onClosing: () => app.close() },
    (req, res) => app.handle(req, res),
  );
  return { url, close };
}

/** The page's routes: its files, the event stream, one row's detail, Resend and Download. */
class InspectorApp {
  private readonly assets = new Map(Object.entries(ASSETS).map(([path, asset]) => [path, { type: asset.type, body: readAsset(asset.file) }]));
  private readonly streams: EventStreams;
  private readonly store: RequestStore;
  private downloads = 0;

  constructor(private readonly options: InspectorServerOptions) {
    this.store = options.store;
    this.streams = new EventStreams(options.store, options.maxStreams);
  }

  handle(req: IncomingMessage, res: ServerResponse): void {
    const target = req.url ?? "/";
    // Node accepts request-targets such as `http://[` that are no URL.
    if (!URL.canParse(target, "http://localhost")) {
      req.resume();
      return sendJson(res, 400, { error: "the request-target is not a URL path" });
    }
    const url = new URL(target, "http://localhost");
    const refusal = refuse(req, url.pathname);
    if (refusal) {
      req.resume();
      return sendJson(res, 403, { error: refusal });
    }
    this.route(req, res, url).catch((error: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { error: error instanceof Error ? error.message : String(error) });
      else res.destroy();
    });
  }

  close(): void {
    this.streams.close();
  }

  private async route(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const { store } = this;
    const asset = req.method === "GET" ? this.assets.get(url.pathname) : undefined;
    if (asset) return send(res, 200, asset.type, asset.body);
    if (req.method === "GET" && url.pathname === "/api/events") return this.openStream(res);
    if (req.method === "GET" && url.pathname === "/api/download") return await this.download(res, url);
    const match = /^\/api\/requests\/(\d+)(\/resend)?$/.exec(url.pathname);
    const row = match ? store.get(Number(match[1])) : undefined;
    if (match && !row) return sendJson(res, 404, { error: store.whyGone(Number(match[1])) });
    if (row && !match?.[2] && req.method === "GET")
      return sendJson(res, 200, detail(row, { secret: this.options.secret, curl: this.options, strict: this.options.strict ?? false }));
    if (row && match?.[2] && req.method === "POST") return this.resendRow(req, res, row);
    sendJson(res, 404, { error: `no ${req.method ?? ""} ${url.pathname}` });
  }

  private openStream(res: ServerResponse): void {
    const { store, options, streams } = this;
    const refusal = streams.refusal();
    if (refusal) return sendJson(res, 503, { error: refusal, limit: streams.maxClients }, { "retry-after": String(STREAM_RETRY_S) });
    res.writeHead(200, { ...SECURITY_HEADERS, "content-type": "text/event-stream; charset=utf-8", connection: "keep-alive" });
    streams.open(res, { forwardUrl: options.forwardUrl, receiverUrl: options.receiverUrl, keep: store.keep, dropped: store.dropNotice() });
  }

  private async download(res: ServerResponse, url: URL): Promise<void> {
    const ids = downloadIds(url.searchParams.get("ids") ?? "", this.store.keep);
    if ("error" in ids) return sendJson(res, 400, ids);
    if (this.downloads >= MAX_DOWNLOADS)
      return sendJson(res, 503, { error: `at most ${MAX_DOWNLOADS} downloads at once; try again when one ends`, limit: MAX_DOWNLOADS }, { "retry-after": "5" });
    this.downloads += 1;
    res.once("close", () => (this.downloads -= 1));
    res.writeHead(200, {
      ...SECURITY_HEADERS,
      "content-type": "application/x-ndjson; charset=utf-8",
      "content-disposition": 'attachment; filename="webhook-requests.ndjson"',
    });
    await writeLines(res, this.lines(ids));
  }

  /** Each row still kept, as a recording line, built only when the previous one is sent. */
  private *lines(ids: readonly number[]): Generator<string> {
    for (const id of ids) {
      const row = this.store.get(id);
      if (row) yield recordLine(row, this.options.secret);
    }
  }

  private async resendRow(req: IncomingMessage, res: ServerResponse, row: Inspected): Promise<void> {
    const input = await readJson(req);
    const url = typeof input["url"] === "string" && input["url"].trim() !== "" ? input["url"].trim() : undefined;
    try {
      const resent = await this.options.resend(row.id, url);
      if (!resent) return sendJson(res, 404, { error: `request ${row.id} is no longer kept` });
      sendJson(res, 200, summarize(resent));
    } catch (error) {
      if (error instanceof WebhookCliError) return sendJson(res, 400, { error: error.message });
      throw error;
    }
  }
}

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

function readAsset(file: string): Buffer {
  // Through ../inspector/ so the path holds from src/inspector/, dist/inspector/ and the command-line bundle in dist/cli/.
  return readFileSync(new URL(`../inspector/assets/${file}`, import.meta.url));
}

function send(res: ServerResponse, status: number, type: string, body: Buffer | string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { ...SECURITY_HEADERS, ...headers, "content-type": type }).end(body);
}

function sendJson(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  send(res, status, "application/json; charset=utf-8", JSON.stringify(value), headers);
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  let text = "";
  for await (const chunk of req) {
    text += String(chunk);
    if (text.length > 64 * 1024) break;
  }
  try {
    const value: unknown = JSON.parse(text || "{}");
    return typeof value === "object" && value !== null ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
