// Registered with --import: appends one JSON line per HTTP request the process serves to
// $RECORD_ANSWERS_TO, when it starts (with its Origin and Sec-Fetch-Site) and when its answer
// is finished (with the status sent). What a test sees from the server's side: a browser
// gives a page no status for a no-cors request.
import { subscribe } from "node:diagnostics_channel";
import { appendFileSync } from "node:fs";

const out = process.env.RECORD_ANSWERS_TO;

function record(event, { request, socket }, extra = {}) {
  const line = {
    event,
    port: socket?.localPort ?? null,
    method: request.method,
    url: request.url,
    site: request.headers["sec-fetch-site"] ?? null,
    origin: request.headers.origin ?? null,
    ...extra,
  };
  appendFileSync(out, `${JSON.stringify(line)}\n`);
}

subscribe("http.server.request.start", (message) => record("start", message));
subscribe("http.server.response.finish", (message) => record("finish", message, { status: message.response.statusCode }));
