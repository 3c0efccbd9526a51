import { resolve } from "node:path";
import { UsageError } from "../../errors.js";
import { MAX_SETTINGS_FILE_BYTES, readRegularFile } from "../../util/readable-file.js";

/** The certificate and key of `--tls-cert` and `--tls-key` (listen, serve): both or neither, each readable. */
export function readTlsFiles(options: { tlsCert?: string | undefined; tlsKey?: string | undefined }, cwd: string): { cert: Buffer; key: Buffer } | undefined {
  if (options.tlsCert === undefined && options.tlsKey === undefined) return undefined;
  if (options.tlsCert === undefined) throw new UsageError("--tls-key needs --tls-cert", { flag: "--tls-cert" });
  if (options.tlsKey === undefined) throw new UsageError("--tls-cert needs --tls-key", { flag: "--tls-key" });
  const read = (file: string, flag: string): Buffer => readRegularFile(resolve(cwd, file), { flag, file }, MAX_SETTINGS_FILE_BYTES);
  return { cert: read(options.tlsCert, "--tls-cert"), key: read(options.tlsKey, "--tls-key") };
}

/** The two flags, in one place for every command that serves HTTPS. */
export const TLS_OPTIONS = [
  { key: "tlsCert", flag: "--tls-cert", arg: "<file>", kind: "string", help: "serve HTTPS with this certificate (PEM)" },
  { key: "tlsKey", flag: "--tls-key", arg: "<file>", kind: "string", help: "the certificate's private key (PEM)" },
] as const;
