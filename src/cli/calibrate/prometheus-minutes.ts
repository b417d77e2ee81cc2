/**
 * Calibration minutes from Prometheus. Throughput, TTFT and ITL come from the
 * controller's own sampling pass (the same queries, per-pod rules, rank
 * filtering, cache adjustment and version fallbacks), evaluated at the end of
 * every minute with both windows 60 s, so a minute's figures mean exactly
 * what the scaler reads. Queue time, which that pass does not read, comes
 * from one `query_range` per engine over the whole period (step 60 s,
 * `increase(...[60s])`), summed by role and bucket.
 */
import { tokenFieldsRead } from "../../core/algorithms/capacity.js";
import { minuteOf, type CalibrationMinute, type RoleMinutes, type SkipReason } from "../../core/calibrate/minute.js";
import type { RoleKind } from "../../core/api/model-deployment.js";
import { mergeHistograms, p95Milliseconds } from "../../core/signals/histogram.js";
import { observeRole, staleAfterSeconds } from "../../core/signals/observe.js";
import type { HistogramWindow } from "../../core/signals/types.js";
import type { PrometheusClient } from "../../adapters/prometheus/client.js";
import type { PrometheusSignalConfig } from "../../adapters/prometheus/config.js";
import { anyOf } from "../../adapters/prometheus/queries.js";
import { PrometheusSignalSource, type ScalerSamplingInput } from "../../adapters/prometheus/source.js";

export const minuteSeconds = 60;
/** Sampling passes in flight at once: a long period does not flood Prometheus. */
const passesInFlight = 4;

export interface MinutesInput {
  readonly client: PrometheusClient;
  readonly config: PrometheusSignalConfig;
  readonly namespace: string;
  readonly deployment: string;
  readonly roles: readonly { readonly name: string; readonly kind: RoleKind }[];
  readonly samplingIntervalSeconds: number;
  readonly startUnixSeconds: number;
  readonly endUnixSeconds: number;
}

export interface PrometheusMinutes {
  readonly roles: readonly RoleMinutes[];
  /** Prometheus warnings (partial answers) and failed passes, each with its minute. */
  readonly warnings: readonly string[];
}

/** The ends of the whole minutes in (start, end]. */
export function minuteEnds(startUnixSeconds: number, endUnixSeconds: number): number[] {
  const ends: number[] = [];
  for (let t = startUnixSeconds + minuteSeconds; t <= endUnixSeconds; t += minuteSeconds) ends.push(t);
  return ends;
}

/** The queue-time histogram names per engine (vLLM, SGLang), without the engine prefix. */
const queueSeries = { vllm: "request_queue_time_seconds", sglang: "queue_time_seconds" } as const;

/** Per role, per minute end: the role's queue-time histogram over that minute. */
async function queueHistograms(
  input: MinutesInput,
  ends: readonly number[],
): Promise<Map<string, Map<number, HistogramWindow[]>>> {
  const { labels, metricNameSeparator: sep } = input.config;
  const matchers = [
    anyOf(labels.namespace, [input.namespace]),
    anyOf(labels.deployment, [input.deployment]),
    anyOf(
      labels.role,
      input.roles.map((r) => r.name),
    ),
  ];
  const out = new Map<string, Map<number, HistogramWindow[]>>();
  const first = ends[0];
  const last = ends[ends.length - 1];
  if (first === undefined || last === undefined) return out;
  for (const [engine, name] of Object.entries(queueSeries)) {
    // SGLang: one scheduler's view (tensor and pipeline rank 0), as the sampling pass reads its scheduler series.
    const ranks = engine === "sglang" ? ['tp_rank=~"0|"', 'pp_rank=~"0|"'] : [];
    const selector = (suffix: string): string =>
      `${engine}${sep}${name}${suffix}{${[...matchers, ...ranks].join(", ")}}`;
    const by = (extra: string): string => `${labels.role}${extra}`;
    const range = async (suffix: string, extra: string) =>
      (
        await input.client.rangeQuery(
          `sum by (${by(extra)}) (increase(${selector(suffix)}[${minuteSeconds}s]))`,
          first * 1000,
          last * 1000,
          minuteSeconds,
        )
      ).series;
    const [buckets, counts, sums] = await Promise.all([
      range("_bucket", ", le"),
      range("_count", ""),
      range("_sum", ""),
    ]);
    const at = (series: typeof counts, role: string, t: number): number | undefined =>
      series.find((s) => s.labels[labels.role] === role)?.points.find((p) => Math.round(p.timestampUnixSeconds) === t)
        ?.value;
    for (const role of input.roles) {
      for (const t of ends) {
        const count = at(counts, role.name, t);
        const sum = at(sums, role.name, t);
        if (count === undefined || sum === undefined) continue;
        const histogram: HistogramWindow = {
          count,
          sum,
          buckets: buckets
            .filter((s) => s.labels[labels.role] === role.name)
            .flatMap((s) => {
              const value = s.points.find((p) => Math.round(p.timestampUnixSeconds) === t)?.value;
              return value === undefined ? [] : [{ upperBound: Number(s.labels["le"]), count: value }];
            })
            .sort((a, b) => a.upperBound - b.upperBound),
        };
        const byMinute = out.get(role.name) ?? new Map<number, HistogramWindow[]>();
        byMinute.set(t, [...(byMinute.get(t) ?? []), histogram]);
        out.set(role.name, byMinute);
      }
    }
  }
  return out;
}

export async function minutesFromPrometheus(input: MinutesInput): Promise<PrometheusMinutes> {
  const ends = minuteEnds(input.startUnixSeconds, input.endUnixSeconds);
  const source = new PrometheusSignalSource(input.client, input.config);
  const sampling: ScalerSamplingInput = {
    key: `${input.namespace}/${input.deployment}`,
    namespace: input.namespace,
    deployment: input.deployment,
    roles: input.roles.map((r) => r.name),
    stableWindowSeconds: minuteSeconds,
    panicWindowSeconds: minuteSeconds,
    intervalSeconds: input.samplingIntervalSeconds,
  };
  const staleAfter = staleAfterSeconds(input.samplingIntervalSeconds);
  const queue = await queueHistograms(input, ends);
  const warnings: string[] = [];
  const roles = input.roles.map((r) => ({
    role: r.name,
    kind: r.kind,
    minutes: [] as CalibrationMinute[],
    skipped: {} as Partial<Record<SkipReason, number>>,
  }));
  const passes = new Map<number, Awaited<ReturnType<PrometheusSignalSource["sample"]>>>();
  for (let i = 0; i < ends.length; i += passesInFlight) {
    const batch = ends.slice(i, i + passesInFlight);
    const results = await Promise.all(batch.map((t) => source.sample([sampling], t * 1000)));
    batch.forEach((t, j) => passes.set(t, results[j] as Awaited<ReturnType<PrometheusSignalSource["sample"]>>));
  }
  for (const t of ends) {
    const pass = passes.get(t);
    const at = new Date(t * 1000).toISOString();
    for (const w of pass?.warnings ?? []) warnings.push(`${at}: ${w}`);
    for (const role of roles) {
      const samples = pass?.scalers.get(sampling.key)?.get(role.role) ?? {
        pods: [],
        queryFailed: { reason: "not sampled" },
      };
      if (samples.queryFailed !== undefined) warnings.push(`${at}: role ${role.role}: ${samples.queryFailed.reason}`);
      // Ready replicas over a past period: the pods that were serving series at the minute's end.
      const ready = samples.pods.filter((p) => p.lastSampleUnixSeconds >= t - staleAfter).length;
      const observation = observeRole({
        kind: role.kind,
        samples,
        readyReplicas: ready,
        nowMs: t * 1000,
        staleAfterSeconds: staleAfter,
        reads: tokenFieldsRead(role.kind),
      });
      const queueMerged = mergeHistograms(queue.get(role.role)?.get(t) ?? []);
      const queueP95 = p95Milliseconds(queueMerged);
      const reading = minuteOf({
        kind: role.kind,
        observation,
        endSeconds: t,
        ...(queueP95 === undefined ? {} : { queueP95Milliseconds: queueP95 }),
      });
      if (reading.kind === "minute") role.minutes.push(reading.minute);
      else role.skipped[reading.reason] = (role.skipped[reading.reason] ?? 0) + 1;
    }
  }
  return { roles, warnings };
}
