import type { Secrets } from "../safe-text/redact.js";
import type { IncomingMessage, ServerResponse } from "node:http";
import { parseHttpUrl } from "../config/checks.js";
import { WebhookCliError } from "../errors.js";
import { routeFor, type ForwardRoutes } from "../receiver/forward-routes.js";
import { startHttpServer } from "../http/server.js";
import { shippedFile } from "../util/shipped-file.js";
import type { CurlTarget } from "./curl.js";
import { downloadIds, MAX_DOWNLOADS, writeLines } from "./download.js";
import type { ControlApi } from "../control/api.js";
import { EventStreams } from "./events.js";
import { readJson, refuse, SECURITY_HEADERS, send, sendJson, TooLarge } from "../http/loopback-api.js";
import { MAX_EDITED_BODY_BYTES } from "./resend.js";
import { liveRows, type RowSource } from "./rows.js";
import { MAX_SEARCH_ROWS, MAX_SEARCHES, search, searchQuery } from "./search.js";
import type { Inspected, RequestStore } from "../receiver/history/index.js";
import { detail, summarize } from "./view.js";

export interface InspectorServerOptions {
  /** 0 = any free port. Always bound to 127.0.0.1. */
  port: number;
  /** listen's history: the live stream's rows (and the API's, unless `source` is given). */
  store: RequestStore;
  /** Where the API reads rows: `inspect`'s recording; default, the store. */
  source?: RowSource;
  /** Every secret, masked wherever a row is shown. */
  secret: Secrets;
  /** listen --strict, for a batch's elements in a row's detail. */
  strict?: boolean;
  /** listen --forward-to's routes (docs/receiver.md#routing), or null when not forwarding. */
  routes: ForwardRoutes | null;
  /** listen's URL; null for `inspect`, which has no receiver: Resend and curl go to a URL the page names. */
  receiverUrl: string | null;
  /** Resends row `id` to `url` (or its default target), with `body` in place of its bytes when edited. */
  resend: (id: number, url?: string, body?: Buffer) => Promise<Inspected | undefined>;
  /** What `GET /api/info` tells the page besides the mode (`inspect`: the file, its size and rows). */
  info?: Record<string, unknown>;
  /** Live event streams open at once (default 16); more are answered 503. */
  maxStreams?: number;
  /** The option that names the port, for a port-in-use error (default listen's `uiPort`). */
  portField?: string;
  /** listen's control API, served beside the page (docs/receiver.md#control-api). */
  control?: ControlApi | undefined;
}

export interface InspectorServer {
  url: string;
  close(): Promise<void>;
}

/** When a page refused a stream (too many open) tries again. */
const STREAM_RETRY_S = 3;
/** A Resend's JSON: an edited body up to 1 MiB, escaped (`\u0000` is six bytes for one). */
const MAX_RESEND_REQUEST_BYTES = 6 * MAX_EDITED_BODY_BYTES + 64 * 1024;

const ASSETS: Record<string, { file: string; type: string }> = {
  "/": { file: "index.html", type: "text/html; charset=utf-8" },
  "/inspector.js": { file: "inspector.js", type: "text/javascript; charset=utf-8" },
  "/list.js": { file: "list.js", type: "text/javascript; charset=utf-8" },
  "/keys.js": { file: "keys.js", type: "text/javascript; charset=utf-8" },
  "/detail.js": { file: "detail.js", type: "text/javascript; charset=utf-8" },
  "/actions.js": { file: "actions.js", type: "text/javascript; charset=utf-8" },
  "/dom.js": { file: "dom.js", type: "text/javascript; charset=utf-8" },
  "/inspector.css": { file: "inspector.css", type: "text/css; charset=utf-8" },
  "/detail.css": { file: "detail.css", type: "text/css; charset=utf-8" },
};

/**
 * The inspector page and its API on 127.0.0.1: the row list as server-sent
 * events (listen) or pages (inspect), search, one row's detail, Resend, and
 * Download as a recording. Answers only a loopback Host (a DNS-rebinding page
 * has its own name in Host).
 */
export async function startInspectorServer(options: InspectorServerOptions): Promise<InspectorServer> {
  const app = new InspectorApp(options);
  const { url, close } = await startHttpServer(
    // Nothing here is worth waiting for on close: open pages reconnect to the next run.
    { host: "127.0.0.1", port: options.port, portSource: { field: options.portField ?? "uiPort" }, closeGraceMs: 0, onClosing: () => app.close() },
    (req, res) => app.handle(req, res),
  );
  return { url, close };
}

/** The page's routes: its files, the event stream, pages and search, one row's detail, Resend and Download. */
class InspectorApp {
  private readonly assets = new Map(
    Object.entries(ASSETS).map(([path, asset]) => [path, { type: asset.type, body: shippedFile(`inspector/assets/${asset.file}`) }]),
  );
  private readonly streams: EventStreams;
  private readonly source: RowSource;
  private downloads = 0;
  private searches = 0;

  constructor(private readonly options: InspectorServerOptions) {
    this.source = options.source ?? liveRows(options.store, options.secret);
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
    const { source } = this;
    if (this.options.control?.handles(url.pathname)) return this.options.control.handle(req, res, url);
    const get = req.method === "GET";
    const asset = get ? this.assets.get(url.pathname) : undefined;
    if (asset) return send(res, 200, asset.type, asset.body);
    if (get && url.pathname === "/api/info") return sendJson(res, 200, this.info());
    if (get && url.pathname === "/api/events") return this.openStream(res);
    if (get && url.pathname === "/api/rows") return await this.searchRows(res, url, false);
    if (get && url.pathname === "/api/search") return await this.searchRows(res, url, true);
    if (get && url.pathname === "/api/download") return await this.download(res, url);
    const match = /^\/api\/requests\/(\d+)(\/resend)?$/.exec(url.pathname);
    const row = match ? await source.get(Number(match[1])) : undefined;
    if (match && !row) return sendJson(res, 404, { error: source.whyGone(Number(match[1])) });
    if (row && !match?.[2] && get) {
      const { secret, strict, routes } = this.options;
      const curl = this.curlTarget(row, url.searchParams.get("url"));
      return sendJson(res, 200, detail(row, { secret, curl, forwardTarget: routes && routeFor(routes, row.verdict), strict: strict ?? false }));
    }
    if (row && match?.[2] && req.method === "POST") return this.resendRow(req, res, row);
    sendJson(res, 404, { error: `no ${req.method ?? ""} ${url.pathname}` });
  }

  private info(): Record<string, unknown> {
    const { routes, receiverUrl } = this.options;
    const mode = receiverUrl === null ? "file" : "live";
    return { mode, receiverUrl, forwardUrl: routes?.fallback ?? null, forwardByType: routes?.byType ?? {}, ...this.options.info };
  }

  /**
   * Where a row's curl command sends: a URL the page names (`?url=`), else the row's route or
   * listen's URL; inspect has no receiver, so there the page must name one.
   */
  private curlTarget(row: Inspected, typed: string | null): CurlTarget | { problem: string } {
    if (typed !== null && typed.trim() !== "") {
      try {
        return { receiverUrl: "", forwardUrl: parseHttpUrl(typed.trim(), { field: "url" }).href };
      } catch (error) {
        return { problem: (error as Error).message };
      }
    }
    const { routes, receiverUrl } = this.options;
    if (receiverUrl === null) return { problem: "type the URL to send it to above (a recording has no receiver of its own)" };
    return { receiverUrl, forwardUrl: routes && routeFor(routes, row.verdict) };
  }

  private openStream(res: ServerResponse): void {
    const { options, streams } = this;
    if (options.receiverUrl === null) return sendJson(res, 404, { error: "a recording has no live stream: GET /api/rows pages through it" });
    const refusal = streams.refusal();
    if (refusal) return sendJson(res, 503, { error: refusal, limit: streams.maxClients }, { "retry-after": String(STREAM_RETRY_S) });
    res.writeHead(200, { ...SECURITY_HEADERS, "content-type": "text/event-stream; charset=utf-8", connection: "keep-alive" });
    const { forwardUrl, forwardByType, receiverUrl } = this.info();
    streams.open(res, { forwardUrl, forwardByType, receiverUrl, keep: options.store.keep, dropped: options.store.dropNotice() });
  }

  /**
   * `GET /api/rows?before=ID&limit=N`: a page of rows, newest first; `GET /api/search?q=…&type=…&verdict=…&before=ID`:
   * the matches, bounded in rows and in bytes looked through (docs/receiver.md#search); `next` goes on.
   */
  private async searchRows(res: ServerResponse, url: URL, filtered: boolean): Promise<void> {
    const params = url.searchParams;
    const before = /^\d{1,15}$/.test(params.get("before") ?? "") ? Number(params.get("before")) : undefined;
    const limit = Math.min(MAX_SEARCH_ROWS, Math.max(1, Number(params.get("limit")) || MAX_SEARCH_ROWS));
    if (this.searches >= MAX_SEARCHES)
      return sendJson(res, 503, { error: `at most ${MAX_SEARCHES} searches at once; try again when one ends`, limit: MAX_SEARCHES }, { "retry-after": "1" });
    this.searches += 1;
    try {
      const query = filtered ? searchQuery(params) : { text: "", type: "", verdict: "" };
      sendJson(res, 200, await search(this.source.newestFirst(before), query, { rows: limit, bytes: filtered ? undefined : Number.POSITIVE_INFINITY }));
    } finally {
      this.searches -= 1;
    }
  }

  private async download(res: ServerResponse, url: URL): Promise<void> {
    const ids = downloadIds(url.searchParams.get("ids") ?? "", this.source.maxIds);
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

  /** Each row still there, as a recording line, built only when the previous one is sent. */
  private async *lines(ids: readonly number[]): AsyncGenerator<string> {
    for (const id of ids) {
      const line = await this.source.line(id);
      if (line !== undefined) yield line;
    }
  }

  /** `{"url": "…", "body": "…"}`: `body`, when given, is the edited body to send (edit-then-resend). */
  private async resendRow(req: IncomingMessage, res: ServerResponse, row: Inspected): Promise<void> {
    let input: Record<string, unknown>;
    try {
      input = await readJson(req, MAX_RESEND_REQUEST_BYTES);
    } catch (error) {
      if (error instanceof TooLarge) return sendJson(res, 413, { error: `${error.message}: an edited body may be up to 1 MiB` });
      throw error;
    }
    const url = typeof input["url"] === "string" && input["url"].trim() !== "" ? input["url"].trim() : undefined;
    const body = typeof input["body"] === "string" ? Buffer.from(input["body"], "utf8") : undefined;
    try {
      const resent = await this.options.resend(row.id, url, body);
      if (!resent) return sendJson(res, 404, { error: `request ${row.id} is no longer kept` });
      sendJson(res, 200, summarize(resent));
    } catch (error) {
      if (error instanceof WebhookCliError) return sendJson(res, 400, { error: error.message });
      throw error;
    }
  }
}
