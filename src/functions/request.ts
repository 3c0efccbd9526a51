import { Headers } from "undici";

/** Where a source function's webhook arrives at the service; the base of a request's URL when only a query is known. */
export const FUNCTION_ORIGIN = "https://fn.segmentapis.com/";

/** The request part of the functions library's `webhook-examples` format (docs/functions.md#test-requests). */
export interface RequestPayload {
  /** The body: text, or already-parsed JSON (an object or array), as the examples give it. */
  body: unknown;
  /** Header values; an array is a header sent several times. */
  headers?: Record<string, string | readonly string[]>;
  /** The absolute URL; wins over `queryParameters`. */
  url?: string;
  /** The query: a string, or names to values (an array value repeats the name). */
  queryParameters?: string | Record<string, unknown>;
}

/**
 * The `request` a source function's `onRequest` gets (docs/functions.md#source-functions), as the
 * service gives it: `json()` returns the parsed body itself, not a promise; `text()` the body
 * text; `headers` a `Headers`; `url` a `URL`.
 */
export class FunctionRequest {
  readonly #headers: Headers;
  readonly #url: URL;
  #text: string | undefined;
  #json: { value: unknown } | undefined;

  constructor(body: unknown, init: { headers: Headers; url: URL }) {
    if (typeof body === "string") this.#text = body;
    else if (Buffer.isBuffer(body)) this.#text = body.toString("utf8");
    else if (typeof body === "object") this.#json = { value: body };
    else throw new TypeError(`a request body is text or JSON, not ${typeof body}`);
    this.#headers = init.headers;
    this.#url = init.url;
  }

  get headers(): Headers {
    return this.#headers;
  }

  get url(): URL {
    return this.#url;
  }

  /** The parsed body, synchronously (a SyntaxError when it is not JSON); parsed once. */
  json(): unknown {
    if (this.#json === undefined) this.#json = { value: JSON.parse(this.#text as string) };
    return this.#json.value;
  }

  text(): string {
    if (this.#text === undefined) this.#text = JSON.stringify(this.#json?.value) ?? "";
    return this.#text;
  }
}

/** The request of a `webhook-examples` payload: its headers (arrays appended one by one) and its URL, built as the service builds it. */
export function requestFromPayload(payload: RequestPayload): FunctionRequest {
  const headers = new Headers();
  for (const [name, value] of Object.entries(payload.headers ?? {})) {
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, String(one));
  }
  return new FunctionRequest(payload.body, { headers, url: new URL(payload.url ?? urlWithQuery(payload.queryParameters)) });
}

/** The function's URL with a query given as text (`a=1`, `?a=1`) or as names to values. */
export function urlWithQuery(query: RequestPayload["queryParameters"]): string {
  if (typeof query === "string") return `${FUNCTION_ORIGIN}${query.startsWith("?") ? "" : "?"}${query}`;
  if (typeof query !== "object" || query === null) return FUNCTION_ORIGIN;
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    for (const one of Array.isArray(value) ? value : [value]) params.append(name, String(one));
  }
  return `${FUNCTION_ORIGIN}?${params}`;
}
