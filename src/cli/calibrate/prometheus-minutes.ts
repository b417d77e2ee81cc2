/**
 * Calibration minutes from Prometheus. Throughput, TTFT and ITL come from the
 * controller's own sampling pass (the same queries, per-pod rules, rank
 * filtering, cache adjustment and version fallbacks), evaluated at the end of
 * every minute with both windows 60 s, so a minute's figures mean exactly
 * what the scaler reads, queue time included (it rides in the TTFT query).
 */
import { tokenFieldsRead } from "../../core/algorithms/capacity.js";
import { minuteOf, type CalibrationMinute, type RoleMinutes, type SkipReason } from "../../core/calibrate/minute.js";
import type { RoleKind } from "../../core/api/model-deployment.js";
import { observeRole, staleAfterSeconds } from "../../core/signals/observe.js";
import type { PrometheusClient } from "../../adapters/prometheus/client.js";
import type { PrometheusSignalConfig } from "../../adapters/prometheus/config.js";
import { PrometheusSignalSource, type ScalerSamplingInput } from "../../adapters/prometheus/source.js";

export const minuteSeconds = 60;
/**
 * Sampling passes in flight at once, so a long period does not flood Prometheus: each pass sends its
 * queries side by side (4 under the `unions` plan, 53 under `parts`), and Prometheus queues what is
 * beyond its `--query.max-concurrency` (default 20).
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

/** The ends of the whole minutes in (start, end]. */
export function minuteEnds(startUnixSeconds: number, endUnixSeconds: number): number[] {
  const ends: number[] = [];
  for (let t = startUnixSeconds + minuteSeconds; t <= endUnixSeconds; t += minuteSeconds) ends.push(t);
  return ends;
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
      const reading = minuteOf({ kind: role.kind, observation, endSeconds: t });
      if (reading.kind === "minute") role.minutes.push(reading.minute);
      else role.skipped[reading.reason] = (role.skipped[reading.reason] ?? 0) + 1;
    }
  }
  return { roles, warnings };
}
