import type { IncomingMessage } from "node:http";

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
