import { Pool } from "undici";
import { ConfigError } from "../errors.js";
import { honoursRetryAfterOf, RETRY_RULES } from "../delivery/retry-rules.js";
import { tlsProblem } from "../delivery/tls-problem.js";
import { parseRetryAfter } from "../util/retry-after.js";
import type { SendOutcome } from "./retry.js";

/**
 * The one adapter of the client that does I/O: POSTs a batch body to
 * `{endpoint}/v1/batch` through a keep-alive undici pool. Never rejects: every
 * way a request can end is a `SendOutcome`.
 */

export interface TransportOptions {
  endpoint: string;
  writeKey: string;
  timeoutMs: number;
  connections: number;
  userAgent: string;
  now: () => number;
}

export class Transport {
  private readonly pool: Pool;
  private readonly path: string;
  private readonly headers: Record<string, string>;
  readonly url: string;

  constructor(private readonly options: TransportOptions) {
    let base: URL;
    try {
      base = new URL(options.endpoint);
    } catch {
      throw new ConfigError(`endpoint is not a URL: ${JSON.stringify(options.endpoint)}`, { key: "endpoint" });
    }
    if (base.protocol !== "http:" && base.protocol !== "https:") {
      throw new ConfigError(`endpoint must be an http: or https: URL, got ${JSON.stringify(options.endpoint)}`, { key: "endpoint" });
    }
    this.path = `${base.pathname.replace(/\/+$/, "")}/v1/batch`;
    this.url = `${base.origin}${this.path}`;
    this.headers = {
      "content-type": "application/json",
      authorization: `Basic ${Buffer.from(`${options.writeKey}:`).toString("base64")}`,
      "user-agent": options.userAgent,
    };
    this.pool = new Pool(base.origin, {
      connections: options.connections,
      // The request deadline below is ours; undici's own must not fire first.
      headersTimeout: options.timeoutMs + 1_000,
      bodyTimeout: options.timeoutMs + 1_000,
      connect: { timeout: options.timeoutMs },
    });
  }

  async post(body: string): Promise<SendOutcome> {
    const controller = new AbortController();
    let timedOut = false;
    // A real timer, not the injected clock: this is an I/O deadline, not a schedule.
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, this.options.timeoutMs);
    timer.unref();
    try {
      const response = await this.pool.request({
        path: this.path,
        method: "POST",
        headers: this.headers,
        body,
        signal: controller.signal,
      });
      const text = await response.body.text();
      const retryAfterMs = honoursRetryAfterOf(RETRY_RULES.client, response.statusCode)
        ? parseRetryAfter(response.headers["retry-after"], this.options.now())
        : undefined;
      return {
        kind: "status",
        status: response.statusCode,
        body: text,
        retryAfterMs,
      };
    } catch (error) {
      if (timedOut) return { kind: "timeout" };
      const err = error as NodeJS.ErrnoException;
      const code = err.code ?? err.name ?? "ERROR";
      const message = err.message || String(error);
      return tlsProblem(code) !== undefined ? { kind: "tls", code, message } : { kind: "network", code, message };
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    try {
      await this.pool.close();
    } catch {
      // Closing twice or after a failure has nothing left to release.
    }
  }
}
