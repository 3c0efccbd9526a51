/*
 * The one classifier of TLS error codes, for both senders: the delivery engine's undici
 * transport and the client's. Pure and import-free: the client imports it, and
 * `import { Analytics }` must load none of the engine.
 */

// Node's verification failures, worded by us: Node's own text differs between versions (24 appends
// advice about --use-system-ca, a Node flag), and the fix offered is webhook-cli's --ca.
const CERT_PROBLEMS: ReadonlyMap<string, string> = new Map([
  ["DEPTH_ZERO_SELF_SIGNED_CERT", "self-signed certificate"],
  ["SELF_SIGNED_CERT_IN_CHAIN", "self-signed certificate in the chain"],
  ["UNABLE_TO_VERIFY_LEAF_SIGNATURE", "issued by a CA that is not trusted"],
  ["UNABLE_TO_GET_ISSUER_CERT", "issued by a CA that is not trusted"],
  ["UNABLE_TO_GET_ISSUER_CERT_LOCALLY", "issued by a CA that is not trusted"],
  ["CERT_UNTRUSTED", "not trusted for this use"],
  ["CERT_HAS_EXPIRED", "expired"],
  ["CERT_NOT_YET_VALID", "not valid yet"],
  ["CERT_REVOKED", "revoked"],
  ["CERT_SIGNATURE_FAILURE", "its signature does not verify"],
  ["CERT_REJECTED", "rejected"],
  ["INVALID_CA", "an invalid CA certificate"],
  ["HOSTNAME_MISMATCH", "issued for another host name"],
  ["ERR_TLS_CERT_ALTNAME_INVALID", "issued for another host name"],
]);

// Other verification failures OpenSSL names (CERT_CHAIN_TOO_LONG, UNABLE_TO_DECRYPT_CERT_SIGNATURE…), shown by code.
const OTHER_CERT_PROBLEM = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER/;

/** What a TLS failure is: a certificate that is not trusted (and why), or a handshake that failed. */
export type TlsProblem = { kind: "certificate"; problem: string } | { kind: "handshake" };

/** The TLS problem an error code names, or undefined when the code is not a TLS failure. */
export function tlsProblem(code: string): TlsProblem | undefined {
  const problem = CERT_PROBLEMS.get(code);
  if (problem !== undefined) return { kind: "certificate", problem };
  if (code.startsWith("ERR_SSL_") || code.startsWith("ERR_TLS_")) return { kind: "handshake" };
  if (OTHER_CERT_PROBLEM.test(code)) return { kind: "certificate", problem: code };
  return undefined;
}
