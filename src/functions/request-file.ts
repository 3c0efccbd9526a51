import { InputError } from "../errors.js";
import { isPlainObject, parseUntrustedJson } from "../json/parse.js";
import type { RequestPayload } from "./request.js";
import { checkSettings, type FunctionSettings } from "./settings.js";

/** The largest webhook body the service passes to a source function (512 KiB). */
export const MAX_SOURCE_BODY_BYTES = 512 * 1024;
/** A test request file: its body within 512 KiB, written as JSON, headers and all (docs/security.md#files-named-by-options). */
export const MAX_REQUEST_FILE_BYTES = 8 * 1024 * 1024;

export interface RequestFile {
  payload: RequestPayload;
  /** The file's own `settings`, when it has them. */
  settings?: FunctionSettings;
  /** What the file holds that the service would not read, said once. */
  warnings: string[];
}

/**
 * A test request in the functions library's `webhook-examples` format, accepted as is:
 * `{"payload": {"body", "headers", "queryParameters" | "url"}, "settings"}` (docs/functions.md#test-requests).
 * Each problem is an InputError naming the file and the key.
 */
export function parseRequestFile(text: string, file: string): RequestFile {
  let document: unknown;
  try {
    document = parseUntrustedJson(text.replace(/^\uFEFF/, ""));
  } catch (error) {
    throw new InputError(`not valid JSON: ${(error as Error).message}`, { file });
  }
  const fail = (key: string, message: string): never => {
    throw new InputError(message, { file, key });
  };
  if (!isPlainObject(document)) return fail("payload", 'a test request is a JSON object {"payload": {"body", "headers", "queryParameters"}, "settings"}');
  const payload = document["payload"];
  if (!isPlainObject(payload)) return fail("payload", "missing, or not an object with the request's body, headers and queryParameters");
  const { body, headers, url, queryParameters } = payload;
  if (body === undefined) fail("payload.body", "missing: the request's body (a JSON value, or text)");
  if (typeof body !== "string" && typeof body !== "object") fail("payload.body", `a body is text or JSON, not ${typeof body}`);
  if (bodyBytes(body) > MAX_SOURCE_BODY_BYTES) fail("payload.body", `over the service's ${MAX_SOURCE_BODY_BYTES / 1024} KiB limit for a webhook body`);
  if (headers !== undefined && !isHeaders(headers)) fail("payload.headers", "names to a text value, or to a list of them");
  if (url !== undefined && !isAbsoluteUrl(url)) fail("payload.url", "not an absolute URL");
  if (queryParameters !== undefined && typeof queryParameters !== "string" && !isPlainObject(queryParameters)) {
    fail("payload.queryParameters", "text (a=1&b=2), or names to values");
  }
  const warnings: string[] = [];
  if (payload["queryParams"] !== undefined && queryParameters === undefined && url === undefined) {
    warnings.push(`${file}: key "payload.queryParams" is not read: the format names the query "queryParameters" (the service's shim ignores it too)`);
  }
  const settings = document["settings"] === undefined ? undefined : checkSettings(document["settings"], { file, key: "settings" });
  return {
    payload: {
      body,
      ...(headers !== undefined ? { headers: headers as RequestPayload["headers"] & object } : {}),
      ...(typeof url === "string" ? { url } : {}),
      ...(queryParameters !== undefined ? { queryParameters: queryParameters as string | Record<string, unknown> } : {}),
    },
    ...(settings !== undefined ? { settings } : {}),
    warnings,
  };
}

function isHeaders(value: unknown): boolean {
  return isPlainObject(value) && Object.values(value).every((v) => typeof v === "string" || (Array.isArray(v) && v.every((one) => typeof one === "string")));
}

function isAbsoluteUrl(value: unknown): boolean {
  return typeof value === "string" && URL.canParse(value);
}

function bodyBytes(body: unknown): number {
  return Buffer.byteLength(typeof body === "string" ? body : (JSON.stringify(body) ?? ""));
}
