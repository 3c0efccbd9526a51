import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface TestCertificates {
  dir: string;
  /** A CA that signed `cert`; pass its PEM as --ca to trust the server. */
  caCert: string;
  caCertPath: string;
  cert: string;
  key: string;
  certPath: string;
  keyPath: string;
  /** A self-signed certificate for 127.0.0.1 (no CA). */
  selfSignedCert: string;
  selfSignedKey: string;
  selfSignedCertPath: string;
  selfSignedKeyPath: string;
}

/** Generates, with the openssl CLI, a CA + server certificate and a self-signed one, all for 127.0.0.1/localhost. */
export function generateCertificates(): TestCertificates {
  const dir = mkdtempSync(join(tmpdir(), "webhook-cli-tls-"));
  const run = (args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: "pipe" });
  const san = "subjectAltName=IP:127.0.0.1,DNS:localhost";
  run(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.crt", "-days", "2", "-subj", "/CN=webhook-cli test CA"]);
  run(["req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1"]);
  writeFileSync(join(dir, "ext.cnf"), `${san}\nbasicConstraints=CA:FALSE\n`);
  run(["x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial", "-out", "server.crt", "-days", "2", "-extfile", "ext.cnf"]);
  run(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "self.key", "-out", "self.crt", "-days", "2", "-subj", "/CN=127.0.0.1", "-addext", san]);
  const read = (name: string) => readFileSync(join(dir, name), "utf8");
  return {
    dir,
    caCert: read("ca.crt"),
    caCertPath: join(dir, "ca.crt"),
    cert: read("server.crt"),
    key: read("server.key"),
    certPath: join(dir, "server.crt"),
    keyPath: join(dir, "server.key"),
    selfSignedCert: read("self.crt"),
    selfSignedKey: read("self.key"),
    selfSignedCertPath: join(dir, "self.crt"),
    selfSignedKeyPath: join(dir, "self.key"),
  };
}
