import { request } from "undici";

/* Whether a running listen answers on its control API (docs/receiver.md#control-api): `expect --ready` asks. */

/**
 * True when GET /api/received at `base` answers 200 within `timeoutMs`; false when nothing
 * listens there (a ready file left by an earlier listen names a closed port), or it does not answer.
 */
export async function controlAnswers(base: string, signal: AbortSignal, timeoutMs: number): Promise<boolean> {
  try {
    const response = await request(`${base}/api/received?limit=1`, {
      method: "GET",
      signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]),
      headers: { accept: "application/json" },
    });
    // The answer is a short JSON page; more than that is not listen's, and is not read.
    await response.body.dump({ limit: 64 * 1024 });
    return response.statusCode === 200;
  } catch {
    return false;
  }
}
