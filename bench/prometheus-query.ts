/**
 * One instant query sent to Prometheus as a benchmark sends it: POST, with
 * `stats=all` when asked, so Prometheus says what the query read. The answer
 * is kept as the text it came in (its length is the response's size) and parsed.
 */

export interface QueryStats {
  /** Samples Prometheus read (`totalQueryableSamples`; a native histogram sample counts as its size in 16-byte units). */
  readonly samplesTouched: number;
  readonly peakSamples: number;
  readonly evalMs: number;
}

/** One series of an instant vector: a float (`value`) or a native histogram (`histogram`). */
export interface VectorSeries {
  readonly metric: Readonly<Record<string, string>>;
  readonly value?: readonly [number, string];
  readonly histogram?: readonly [number, HistogramValue];
}

export interface HistogramValue {
  readonly count: string;
  readonly sum: string;
  /** [boundary rule, lower, upper, count]; empty buckets are left out. */
  readonly buckets?: readonly (readonly [number, string, string, string])[];
}

export interface QueryAnswer {
  readonly result: readonly VectorSeries[];
  /** The answer's length in characters, uncompressed. */
  readonly bytes: number;
  readonly stats?: QueryStats;
}

export async function instantQuery(
  url: string,
  query: string,
  atUnixMs: number,
  options: { readonly timeoutMs: number; readonly stats?: boolean },
): Promise<QueryAnswer> {
  const body = new URLSearchParams({
    query,
    time: String(atUnixMs / 1000),
    timeout: `${options.timeoutMs / 1000}s`,
    ...(options.stats ? { stats: "all" } : {}),
  });
  const res = await fetch(`${url}/api/v1/query`, {
    method: "POST",
    body,
    signal: AbortSignal.timeout(options.timeoutMs),
  });
  const text = await res.text();
  const json = JSON.parse(text) as {
    status: string;
    error?: string;
    data?: {
      resultType?: string;
      result?: VectorSeries[];
      stats?: {
        timings?: { evalTotalTime?: number };
        samples?: { totalQueryableSamples?: number; peakSamples?: number };
      };
    };
  };
  if (json.status !== "success") throw new Error(`query failed (${res.status}): ${json.error ?? text.slice(0, 200)}`);
  if (json.data?.resultType !== "vector")
    throw new Error(`query answered a ${json.data?.resultType ?? "missing"} result, not a vector`);
  const st = json.data.stats;
  return {
    result: json.data.result ?? [],
    bytes: text.length,
    ...(st
      ? {
          stats: {
            samplesTouched: st.samples?.totalQueryableSamples ?? NaN,
            peakSamples: st.samples?.peakSamples ?? NaN,
            evalMs: (st.timings?.evalTotalTime ?? NaN) * 1000,
          },
        }
      : {}),
  };
}
