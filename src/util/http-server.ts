import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { PortError, UsageError } from "../errors.js";
import { CONNECTIONS_CHECKING_INTERVAL_MS } from "./http-limits.js";

/* The receiver's node:http(s) server: made from its TLS options, hardened against bad requests, listening with clear port errors. */

export function createServerFor(options: { tls?: { cert: string | Buffer; key: string | Buffer } | undefined }, onRequest: (req: IncomingMessage, res: ServerResponse) => void): Server {
  const serverOptions = { connectionsCheckingInterval: CONNECTIONS_CHECKING_INTERVAL_MS };
  let server: Server;
  if (options.tls) {
    try {
      server = createHttpsServer({ ...serverOptions, cert: options.tls.cert, key: options.tls.key }, onRequest);
    } catch (error) {
      throw new UsageError(`cannot use the certificate and key: ${(error as Error).message}`, { field: "tlsCert" });
    }
  } else {
    server = createHttpServer(serverOptions, onRequest);
  }
  // A bad request line or TLS handshake must not take the receiver down.
  server.on("clientError", (error: NodeJS.ErrnoException, socket) => {
    if (!socket.writable) return socket.destroy();
    const status = error.code === "ERR_HTTP_REQUEST_TIMEOUT" ? "408 Request Timeout" : "400 Bad Request";
    // Closed once written, even if the client keeps its side open (sockets here allow half-open).
    socket.write(`HTTP/1.1 ${status}\r\nConnection: close\r\n\r\n`, () => socket.destroy());
  });
  server.on("tlsClientError", () => {});
  return server;
}

export function listen(server: Server, host: string, port: number): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException): void => {
      reject(new PortError(`cannot listen on ${formatHost(host)}:${port}: ${portProblem(error)}`, { cause: error }));
    };
    server.once("error", onError);
    server.listen(port, host, () => {
      server.off("error", onError);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

export function formatHost(host: string): string {
  return host.includes(":") ? `[${host}]` : host;
}

function portProblem(error: NodeJS.ErrnoException): string {
  switch (error.code) {
    case "EADDRINUSE":
      return "the port is already in use (EADDRINUSE)";
    case "EACCES":
      return "permission denied (EACCES): ports below 1024 need privileges";
    case "EADDRNOTAVAIL":
      return "the address is not available on this machine (EADDRNOTAVAIL)";
    case "ENOTFOUND":
      return "the host name does not resolve (ENOTFOUND)";
    default:
      return error.message;
  }
}
