/**
 * The settings stand-in, pure: the body of `GET /v1/projects/{writeKey}/settings`
 * (and `/projects/{writeKey}/settings`), which analytics.js fetches from its
 * `cdnURL` and analytics-kotlin/-swift from `https://{cdnHost}` at start. It
 * points each library's delivery at serve itself, so a page needs one line:
 * `AnalyticsBrowser.load({ writeKey, cdnURL: "http://127.0.0.1:PORT" })`.
 *
 * Deliberately minimal: with one integration (`Segment.io`) and no remote
 * plugins, middleware or video settings, analytics.js loads nothing else;
 * every other field it reads is optional (`?? []`, `?? {}`), and Kotlin and
 * Swift ignore what they do not know and default what is missing. No
 * `httpConfig`: it would switch Kotlin and Swift to another retry mode.
 */

/** What a client reads from `integrations["Segment.io"]`. */
export interface SegmentioSettings {
  /** The key the library delivers with: analytics.js puts it in each body and in Basic auth (not the key it was loaded with). */
  apiKey: string;
  /** serve's host and port + `/v1`, without a scheme: analytics.js builds `${protocol}://${apiHost}/t`, Kotlin and Swift `https://${apiHost}/b`. */
  apiHost: string;
  /** analytics.js only (Kotlin and Swift hard-code https). */
  protocol: "http" | "https";
  /** analytics.js batching mode: POST /v1/b with `size` events or every `timeout` ms. */
  deliveryStrategy?: { strategy: "batching"; config?: { size?: number; timeout?: number } };
}

export interface SettingsBody {
  integrations: { "Segment.io": SegmentioSettings };
  /**
   * The libraries' own metrics, kept off the real service: analytics.js posts
   * them to `https://api.segment.io/v1/m` unless sampled at 0 (a leak from a
   * laptop, and a console error offline), and its `protocol` there comes only
   * from the page's load options, so pointing `host` at an HTTP serve alone
   * would not do. Sampled at 0, Kotlin and Swift start no telemetry either;
   * `host` is serve as well, should a library ever send one.
   */
  metrics: { sampleRate: 0; host: string };
}

export interface SettingsAnswerOptions {
  /** The key from the path. */
  writeKey: string;
  /** Where the client reached serve: scheme, host and port (`publicBaseUrl`). */
  baseUrl: string;
  /**
   * analytics.js's batching mode for every page. A page can turn it on itself
   * in its load options (`integrations: {"Segment.io": {deliveryStrategy: {strategy: "batching"}}}`,
   * merged over this answer), so serve needs no flag for a test to use it.
   */
  batching?: { size?: number; timeoutMs?: number };
}

export function settingsAnswer(options: SettingsAnswerOptions): SettingsBody {
  const url = new URL(options.baseUrl);
  const apiHost = `${url.host}/v1`;
  const segmentio: SegmentioSettings = { apiKey: options.writeKey, apiHost, protocol: url.protocol === "https:" ? "https" : "http" };
  if (options.batching !== undefined) {
    const { size, timeoutMs } = options.batching;
    const config = { ...(size !== undefined ? { size } : {}), ...(timeoutMs !== undefined ? { timeout: timeoutMs } : {}) };
    segmentio.deliveryStrategy = Object.keys(config).length > 0 ? { strategy: "batching", config } : { strategy: "batching" };
  }
  return { integrations: { "Segment.io": segmentio }, metrics: { sampleRate: 0, host: apiHost } };
}

/** A Host header's syntax: a name or IPv4 address, or a bracketed IPv6 address, and an optional port. */
const HOST_SYNTAX = /^(?:\[[0-9A-Fa-f:.]{2,45}\]|[A-Za-z0-9.-]{1,253})(?::\d{1,5})?$/;

/**
 * The base URL a client used to reach serve: the request's Host (the name
 * and port it dialled, so `localhost`, a LAN address a phone uses, or a port
 * forwarded elsewhere all work), else `fallback` (serve's own URL) when Host
 * is missing or no host. The settings then point the client back the way it
 * came.
 */
export function publicBaseUrl(host: string | undefined, tls: boolean, fallback: string): string {
  if (host === undefined || !HOST_SYNTAX.test(host)) return fallback;
  const url = `${tls ? "https" : "http"}://${host.toLowerCase()}`;
  // The syntax lets through what no URL is (port 99999, [1:2]).
  return URL.canParse(url) ? url : fallback;
}
