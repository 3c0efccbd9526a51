import type { IncomingMessage } from "node:http";
import { NOT_CHECKED } from "./signature-check.js";
import type { RequestVerdict } from "./verdict.js";

/** The methods a webhook arrives with: POST (the classic destination), PUT or PATCH (Webhooks (Actions), per mapping). */
export const ACCEPTED_METHODS: readonly string[] = ["POST", "PUT", "PATCH"];
/** The `Allow` header of a 405. */
export const ALLOW_HEADER = ACCEPTED_METHODS.join(", ");

export function isAcceptedMethod(method: string | undefined): boolean {
  return method === "POST" || method === "PUT" || method === "PATCH";
}

/** `GET /health` or `HEAD /health` (query ignored): the readiness probe CI scripts wait on. */
export function isHealthCheck(req: IncomingMessage): boolean {
  return (req.method === "GET" || req.method === "HEAD") && (req.url ?? "/").split("?")[0] === "/health";
}

/**
 * The verdict of a request whose method no webhook uses (other than the health check): invalid,
 * with the reason, so it is shown and counted instead of hidden behind a bare 405.
 */
export function methodNotAllowedVerdict(method: string | undefined): RequestVerdict {
  return unreadVerdict(
    0,
    "(method)",
    `${method ?? "this method"} is not accepted: webhooks arrive as POST, PUT or PATCH (GET /health answers readiness probes)`,
  );
}

/** The verdict of a request refused before its body was read (wrong method, too large): invalid, for one reason. */
export function unreadVerdict(size: number, key: string, message: string): RequestVerdict {
  return {
    size,
    ...NOT_CHECKED,
    text: null,
    body: undefined,
    bodyKind: "invalid",
    batch: null,
    type: undefined,
    userId: undefined,
    name: undefined,
    shapeErrors: [{ key, message }],
    shapeWarnings: [],
    valid: false,
  };
}
