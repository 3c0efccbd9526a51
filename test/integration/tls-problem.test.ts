import { afterAll, describe, expect, it } from "vitest";
import { Transport } from "../../src/client/transport.js";
import { UndiciTransport } from "../../src/delivery/undici-transport.js";
import { httpsServersClosedAfterAll } from "../helpers/https-server.js";
import { startServer } from "../helpers/http-server.js";
import { generateCertificates } from "../helpers/tls.js";

const certs = generateCertificates();
const httpsServer = httpsServersClosedAfterAll();
const closing: (() => Promise<void>)[] = [];
afterAll(async () => {
  await Promise.all(closing.map((close) => close()));
});

/** What the client's transport and the engine's make of one URL. */
async function bothSenders(url: string): Promise<{ client: string; engine: string; engineError: string | null }> {
  const client = new Transport({ endpoint: new URL(url).origin, writeKey: "wk", timeoutMs: 5_000, connections: 1, userAgent: "t", now: Date.now });
  const engine = new UndiciTransport({ timeoutMs: 5_000 });
  closing.push(
    () => client.close(),
    () => engine.close(),
  );
  const [sent, report] = await Promise.all([
    client.post("{}"),
    engine.send({ url, method: "POST", headers: { "content-type": "application/json" }, body: Buffer.from("{}") }, { timeoutMs: 5_000 }),
  ]);
  return { client: sent.kind, engine: report.outcome.kind, engineError: report.error };
}

describe("both senders classify TLS failures with the one classifier", () => {
  it("a self-signed certificate: a TLS failure for both (neither retries it)", async () => {
    const server = await httpsServer(certs.selfSignedCert, certs.selfSignedKey);
    const { client, engine, engineError } = await bothSenders(server.url);
    expect([client, engine]).toEqual(["tls", "tls"]);
    expect(engineError).toContain("(self-signed certificate)");
  });

  it("TLS spoken to a plain HTTP port: a failed handshake for both, not a network error the client would retry", async () => {
    const plain = await startServer();
    closing.push(() => plain.close());
    const { client, engine, engineError } = await bothSenders(plain.url.replace(/^http:/, "https:"));
    expect([client, engine]).toEqual(["tls", "tls"]);
    expect(engineError).toMatch(/^TLS: handshake with 127\.0\.0\.1:\d+ failed \(ERR_SSL_/);
  });
});
