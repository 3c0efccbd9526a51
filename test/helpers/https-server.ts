import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { afterAll } from "vitest";

export interface TestHttpsServer {
  server: Server;
  /** `https://127.0.0.1:PORT/hook` */
  url: string;
  requests: number;
  /** TLS handshakes completed (connections reused do not add one). */
  handshakes: number;
}

/**
 * Starts real HTTPS servers on 127.0.0.1 (port 0) with the given certificate,
 * answering 200 with `body`; all are closed after the file's tests. Call once
 * in a describe block (or at a test file's top level).
 */
export function httpsServersClosedAfterAll(body = ""): (cert: string, key: string) => Promise<TestHttpsServer> {
  const started: TestHttpsServer[] = [];
  afterAll(async () => {
    await Promise.all(
      started.map(
        (h) =>
          new Promise<void>((resolve) => {
            h.server.closeAllConnections();
            h.server.close(() => resolve());
          }),
      ),
    );
  });
  return async (cert, key) => {
    const entry: TestHttpsServer = { server: createServer({ cert, key }), url: "", requests: 0, handshakes: 0 };
    entry.server.on("request", (req, res) => {
      entry.requests += 1;
      req.resume();
      req.on("end", () => res.end(body));
    });
    entry.server.on("secureConnection", () => (entry.handshakes += 1));
    await new Promise<void>((resolve) => entry.server.listen(0, "127.0.0.1", resolve));
    entry.url = `https://127.0.0.1:${(entry.server.address() as AddressInfo).port}/hook`;
    started.push(entry);
    return entry;
  };
}
