import { connect, type Socket } from "node:net";

/** A raw HTTP/1.1 POST whose body goes out in pieces, as a slow sender uploads. */
export interface SlowUpload {
  socket: Socket;
  /** Everything the server sent, as text. */
  received(): string;
  /** Resolves when the socket closes: whether it ended in a reset (ECONNRESET/EPIPE) rather than a clean close. */
  closed: Promise<{ reset: boolean }>;
  /** Resolves when the server has finished its side (FIN), or the socket closed. */
  ended: Promise<void>;
}

export function slowUpload(url: string, path: string, declaredLength: number, headers: Record<string, string> = {}): Promise<SlowUpload> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    // Half-open like an HTTP client: it goes on uploading after the server's FIN, so an early close shows as a reset.
    const socket = connect({ port: Number(port), host: hostname, allowHalfOpen: true }, () => {
      const lines = [`POST ${path} HTTP/1.1`, `Host: ${hostname}:${port}`, "Content-Type: application/json", `Content-Length: ${declaredLength}`];
      for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
      socket.write(`${lines.join("\r\n")}\r\n\r\n`);
      resolve({ socket, received: () => text, closed, ended });
    });
    let text = "";
    let reset = false;
    socket.on("data", (chunk: Buffer) => (text += chunk.toString("latin1")));
    socket.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "ECONNRESET" || error.code === "EPIPE") reset = true;
      else reject(error);
    });
    const closed = new Promise<{ reset: boolean }>((done) => socket.on("close", () => done({ reset })));
    const ended = new Promise<void>((done) => {
      socket.on("end", done);
      socket.on("close", () => done());
    });
  });
}

/** Writes `total` bytes in `pieces` pieces, `gapMs` apart, stopping early if the socket closes. */
export async function trickle(socket: Socket, total: number, pieces: number, gapMs: number): Promise<void> {
  const piece = Buffer.alloc(Math.ceil(total / pieces), 0x20);
  let sent = 0;
  while (sent < total && !socket.destroyed && socket.writable) {
    const size = Math.min(piece.length, total - sent);
    socket.write(size === piece.length ? piece : piece.subarray(0, size));
    sent += size;
    await new Promise((resolve) => setTimeout(resolve, gapMs));
  }
}

/** The RSS of a process in MB, from /proc (Linux). */
export async function rssMb(pid: number): Promise<number> {
  const { readFile } = await import("node:fs/promises");
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  const match = /VmRSS:\s+(\d+) kB/.exec(status);
  return match ? Number(match[1]) / 1024 : NaN;
}
