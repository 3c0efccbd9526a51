/**
 * Latency percentiles in constant memory: a log-bucketed histogram with about
 * 2 % resolution, from 0.01 ms to days. Pure.
 */
const GROWTH = 1.02;
const LOG_GROWTH = Math.log(GROWTH);
const MIN_MS = 0.01;
const BUCKETS = 1400;

export class LatencyHistogram {
  private readonly counts = new Float64Array(BUCKETS);
  private total = 0;

  record(ms: number): void {
    const index = ms <= MIN_MS ? 0 : Math.min(BUCKETS - 1, Math.ceil(Math.log(ms / MIN_MS) / LOG_GROWTH));
    this.counts[index] = (this.counts[index] ?? 0) + 1;
    this.total += 1;
  }

  /** The latency at quantile `q` (0–1), or 0 when nothing was recorded. */
  quantile(q: number): number {
    if (this.total === 0) return 0;
    const rank = Math.max(1, Math.ceil(q * this.total));
    let seen = 0;
    for (let i = 0; i < BUCKETS; i++) {
      seen += this.counts[i] ?? 0;
      if (seen >= rank) return i === 0 ? MIN_MS : MIN_MS * GROWTH ** i;
    }
    return MIN_MS * GROWTH ** (BUCKETS - 1);
  }
}
