/**
 * Calibration minutes from Prometheus. Throughput, TTFT and ITL come from the
 * controller's own sampling pass (the same queries, per-pod rules, rank
 * filtering, cache adjustment and version fallbacks), evaluated at the end of
 * every minute with both windows 60 s, so a minute's figures mean exactly
 * what the scaler reads, queue time included (it rides in the TTFT query).
 * The passes' queries are answered from range queries over the minutes
 * (`RangeAnswers`): each query text is sent once per stretch of
 * `minutesPerRangeQuery` minutes, not once per minute.
 */
import { tokenFieldsRead } from "../../core/algorithms/capacity.js";
import { minuteOf, type CalibrationMinute, type RoleMinutes, type SkipReason } from "../../core/calibrate/minute.js";
import type { RoleKind } from "../../core/api/model-deployment.js";
import { observeRole, staleAfterSeconds } from "../../core/signals/observe.js";
import type { PrometheusClient } from "../../adapters/prometheus/client.js";
import type { PrometheusSignalConfig } from "../../adapters/prometheus/config.js";
import { RangeAnswers } from "../../adapters/prometheus/range-answers.js";
import {
  PrometheusSignalSource,
  type SamplingPass,
  type ScalerSamplingInput,
} from "../../adapters/prometheus/source.js";

export const minuteSeconds = 60;
/**
 * Minutes one range query covers: 6 hours, so an answer holds at most 360 points per series (Prometheus
 * refuses more than 11,000) and only one stretch's answers are held in memory at a time.
 */
const minutesPerRangeQuery = 360;
/**
 * Sampling passes in flight at once. The first pass of a stretch sends its queries side by side as range
 * queries (4 under the `unions` plan, 42 under `parts`, `roles` and `native`; Prometheus queues what is beyond its
 * `--query.max-concurrency`, default 20); the others are answered from them.
 */
const passesInFlight = 2;

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

/**
 * The ends of the whole minutes in (start, end], in whole seconds: a period from `--last` starts at a
 * fraction of a second, and its minutes begin at the whole second before it (a range query's steps are
 * whole seconds, `RangeAnswers`).
 */
export function minuteEnds(startUnixSeconds: number, endUnixSeconds: number): number[] {
  const ends: number[] = [];
  for (let t = Math.floor(startUnixSeconds) + minuteSeconds; t <= endUnixSeconds; t += minuteSeconds) ends.push(t);
  return ends;
}

export async function minutesFromPrometheus(input: MinutesInput): Promise<PrometheusMinutes> {
  const ends = minuteEnds(input.startUnixSeconds, input.endUnixSeconds);
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
  const warnings: string[] = [];
  const roles: MinutesRead[] = input.roles.map((r) => ({ role: r.name, kind: r.kind, minutes: [], skipped: {} }));
  for (let from = 0; from < ends.length; from += minutesPerRangeQuery) {
    const stretch = ends.slice(from, from + minutesPerRangeQuery);
    const answers = new RangeAnswers(input.client, {
      firstUnixSeconds: stretch[0] as number,
      lastUnixSeconds: stretch[stretch.length - 1] as number,
      stepSeconds: minuteSeconds,
    });
    const source = new PrometheusSignalSource(answers, input.config);
    // A few passes at a time, each read into its minute before the next are sampled: a stretch's 360 passes held at
    // once grew with the pods (a day of a 24-pod deployment peaked at 445 MiB so, 352 MiB read as they come).
    for (let i = 0; i < stretch.length; i += passesInFlight) {
      const batch = stretch.slice(i, i + passesInFlight);
      readMinutes(batch, await passesOf(source, sampling, batch), sampling, roles, staleAfter, warnings);
    }
  }
  return { roles, warnings };
}

/** A role's minutes as they are read, stretch after stretch. */
interface MinutesRead extends RoleMinutes {
  readonly minutes: CalibrationMinute[];
  readonly skipped: Partial<Record<SkipReason, number>>;
}

async function passesOf(
  source: PrometheusSignalSource,
  sampling: ScalerSamplingInput,
  ends: readonly number[],
): Promise<Map<number, SamplingPass>> {
  const results = await Promise.all(ends.map((t) => source.sample([sampling], t * 1000)));
  return new Map(ends.map((t, j) => [t, results[j] as SamplingPass]));
}

/** Each role's minute at every end, read from its pass as the scaler would read it; a failed pass is a warning. */
function readMinutes(
  ends: readonly number[],
  passes: ReadonlyMap<number, SamplingPass>,
  sampling: ScalerSamplingInput,
  roles: readonly MinutesRead[],
  staleAfter: number,
  warnings: string[],
): void {
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
      const reading = minuteOf({ kind: role.kind, observation, endSeconds: t });
      if (reading.kind === "minute") role.minutes.push(reading.minute);
      else role.skipped[reading.reason] = (role.skipped[reading.reason] ?? 0) + 1;
    }
  }
}
