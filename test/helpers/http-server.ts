import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: Buffer;
  at: number;
}

export type Responder = (request: ReceivedRequest, res: ServerResponse, index: number) => void | Promise<void>;

export interface TestServer {
  url: string;
  port: number;
  requests: ReceivedRequest[];
  server: Server;
  close(): Promise<void>;
}

/** A real HTTP server on 127.0.0.1, port 0, recording every request; answers 200 unless `respond` says otherwise. */
export async function startServer(respond?: Responder): Promise<TestServer> {
  const requests: ReceivedRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const received: ReceivedRequest = {
        method: req.method ?? "",
        url: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks),
        at: Date.now(),
      };
      const index = requests.push(received) - 1;
      if (respond) void respond(received, res, index);
      else res.end("ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Answers with the statuses in order, repeating the last. */
export function statuses(...codes: number[]): Responder {
  return (_req, res, index) => {
    res.statusCode = codes[Math.min(index, codes.length - 1)] ?? 200;
    res.end();
  };
}
