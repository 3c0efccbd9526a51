import { startHttpServer, type HttpServer } from "../http/server.js";
import type { ControlApi } from "./api.js";
import { refuse, sendJson } from "../http/loopback-api.js";

/**
 * listen's control port without the page (no --ui): the control API alone, on 127.0.0.1, with the
 * inspector's guards (loopback Host names only; other pages refused: docs/receiver.md#other-pages).
 */
export function startControlServer(port: number, api: ControlApi): Promise<HttpServer> {
  return startHttpServer({ host: "127.0.0.1", port, portSource: { field: "uiPort" }, closeGraceMs: 0, onClosing: () => api.close() }, (req, res) => {
    const target = req.url ?? "/";
    req.resume();
    if (!URL.canParse(target, "http://localhost")) return sendJson(res, 400, { error: "the request-target is not a URL path" });
    const url = new URL(target, "http://localhost");
    const refusal = refuse(req, url.pathname.startsWith("/api/") ? url.pathname : `/api${url.pathname}`);
    if (refusal) return sendJson(res, 403, { error: refusal });
    if (api.handles(url.pathname)) return api.handle(req, res, url);
    sendJson(res, 404, { error: `no ${req.method ?? ""} ${url.pathname}: the control API answers GET /api/received and GET /api/wait (the page needs --ui)` });
  });
}
