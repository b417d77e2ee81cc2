/** Default histogram buckets of the engines (seconds), as the engines declare them. */

export const vllmTtftBucketsSeconds: readonly number[] = [
  0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0,
  640.0, 2560.0,
];

export const vllmItlBucketsSeconds: readonly number[] = [
  0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0,
];

export const vllmE2eBucketsSeconds: readonly number[] = [
  0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0,
  7680.0,
];

export const sglangTtftBucketsSeconds: readonly number[] = [
  0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400,
];

export const sglangItlBucketsSeconds: readonly number[] = [
  0.002, 0.004, 0.006, 0.008, 0.01, 0.015, 0.02, 0.025, 0.03, 0.035, 0.04, 0.06, 0.08, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0,
  2.0, 4.0, 6.0, 8.0,
];

export const sglangE2eBucketsSeconds: readonly number[] = [
  0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400, 600, 1200, 1800, 2400,
];

/** vLLM `request_queue_time_seconds` uses the request-latency buckets of `e2e_request_latency_seconds`. */
export const vllmQueueTimeBucketsSeconds: readonly number[] = vllmE2eBucketsSeconds;

/** SGLang `queue_time_seconds` (2026 builds; older ones started 0, 0.1, 0.2, 0.5). */
export const sglangQueueTimeBucketsSeconds: readonly number[] = [
  0, 0.001, 0.005, 0.01, 0.05, 0.1, 0.2, 0.5, 1, 2, 3, 4, 5, 10, 15, 20, 30, 40, 50, 60, 70, 80, 90, 100, 200, 300, 400,
  500, 600, 700, 800, 900, 1000, 1200, 1400, 1600, 1800, 2000, 2500, 3000,
];

/**
 * A cumulative-style histogram kept as per-bucket counts (the last slot is
 * `+Inf`), like prometheus_client keeps it before exposition.
 */
export class Histogram {
  readonly bucketCounts: number[];
  sum = 0;
  count = 0;

  constructor(readonly upperBoundsSeconds: readonly number[]) {
    this.bucketCounts = new Array<number>(upperBoundsSeconds.length + 1).fill(0);
  }

  observe(valueSeconds: number, weight = 1): void {
    let i = 0;
    while (i < this.upperBoundsSeconds.length && valueSeconds > (this.upperBoundsSeconds[i] ?? Infinity)) i++;
    this.bucketCounts[i] = (this.bucketCounts[i] ?? 0) + weight;
    this.sum += valueSeconds * weight;
    this.count += weight;
  }

  /** Cumulative counts by upper bound, `+Inf` last. */
  cumulative(): { upperBound: number; count: number }[] {
    let running = 0;
    return this.bucketCounts.map((c, i) => {
      running += c;
      return { upperBound: this.upperBoundsSeconds[i] ?? Infinity, count: running };
    });
  }
}
