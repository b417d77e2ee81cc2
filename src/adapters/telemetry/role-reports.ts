/**
 * Turns a planned status into the figures the metrics adapter exports, so the
 * dashboards show the same numbers `kubectl get mds -o yaml` does.
 */
import { roleDemandTokensPerSecond, tokenTargetPerReplica } from "../../core/algorithms/capacity.js";
import { judgedOnQueueTime } from "../../core/algorithms/queue-time-target.js";
import { tokenThroughputBlockOf } from "../../core/algorithms/windows.js";
import { hourlyFloorAt } from "../../core/planner/hourly-floor.js";
import { parseOptionalTimestampMs } from "../../core/time/timestamp.js";
import { roleKinds, type RoleKind } from "../../core/api/model-deployment.js";
import { quantityValue } from "../../core/api/quantity.js";
import type { ScalerSpec, ScalerStatus, TokenThroughputParams } from "../../core/api/scaler.js";
import type { RoleObservation } from "../../core/signals/types.js";
import type { RoleReport } from "./metrics.js";

function num(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  return Number.isFinite(value) ? value : undefined;
}

function roleKindOf(kind: string | undefined): RoleKind | undefined {
  return roleKinds.find((known) => known === kind);
}

type Defined<T> = { [K in keyof T]: Exclude<T[K], undefined> };

/** Drops undefined fields: an unknown figure exports no series. */
function defined<T extends object>(record: T): Partial<Defined<T>> {
  return Object.fromEntries(Object.entries(record).filter(([, v]) => v !== undefined)) as Partial<Defined<T>>;
}

/**
 * The latency targets a role is drawn against; the queue-time one only for the kinds judged on it. A role whose kind
 * could not be read is drawn as a Server, as its demand is.
 */
function latencyTargets(tt: TokenThroughputParams | undefined, kind: RoleKind | undefined) {
  if (tt === undefined) return {};
  const queue = tt.queueTimeTargetMilliseconds;
  return {
    ttftTargetMilliseconds: quantityValue(tt.ttftTargetMilliseconds),
    itlTargetMilliseconds: quantityValue(tt.itlTargetMilliseconds),
    ...(queue === undefined || !judgedOnQueueTime(kind ?? "Server")
      ? {}
      : { queueTimeTargetMilliseconds: quantityValue(queue) }),
  };
}

export function roleReports(
  spec: ScalerSpec,
  status: ScalerStatus,
  kinds: Readonly<Record<string, string>> = {},
  observations: Readonly<Record<string, RoleObservation>> = {},
): RoleReport[] {
  // The block the algorithm reads: TokenThroughput's own, or Predictive's fallback.
  const tt = tokenThroughputBlockOf(spec).params;
  const predictive = spec.algorithm.predictive;
  const committed = status.lastCommit?.vector ?? {};
  // The floor of the hour the last pass ran in: what the planner raised that pass's recommendation to.
  const lastPassMs = parseOptionalTimestampMs(status.lastPassTime);
  const floorOf = (name: string): number | undefined =>
    lastPassMs === undefined
      ? undefined
      : hourlyFloorAt(spec.roles.find((r) => r.name === name)?.floorReplicasByUtcHour, lastPassMs);
  return (status.roles ?? []).map((role) => {
    const predictor = status.predictors?.find((p) => p.name === role.name);
    const kind = roleKindOf(kinds[role.name]);
    // The core's rules: what one replica of this kind carries, and the demand it serves per window.
    const capacity = tt === undefined || kind === undefined ? undefined : tokenTargetPerReplica(kind, tt);
    const level = num(predictor?.level);
    const trend = num(predictor?.trend);
    const observed = observations[role.name];
    const rates = defined({
      promptTokensPerSecond: num(role.promptTokensPerSecond),
      generationTokensPerSecond: num(role.generationTokensPerSecond),
      panicPromptTokensPerSecond: observed?.panicPromptTokensPerSecond,
      panicGenerationTokensPerSecond: observed?.panicGenerationTokensPerSecond,
    });
    // A role whose target could not be read is reported as serving both (a Server), as before; an
    // Encode role serves no tokens of its own.
    const stable = roleDemandTokensPerSecond(kind ?? "Server", rates, "stable");
    const panic = roleDemandTokensPerSecond(kind ?? "Server", rates, "panic");
    return {
      role: role.name,
      currentReplicas: role.currentReplicas,
      readyReplicas: role.readyReplicas,
      signalState: role.signalState,
      ...defined({
        rawRecommendedReplicas: role.rawRecommendedReplicas,
        constrainedReplicas: role.constrainedReplicas,
        committedReplicas: committed[role.name],
        hourlyFloorReplicas: floorOf(role.name),
        stableDemandTokensPerSecond: stable,
        panicDemandTokensPerSecond: panic,
        forecastDemandTokensPerSecond:
          predictive !== undefined && level !== undefined && trend !== undefined
            ? Math.max(0, level + trend * predictive.horizonSeconds)
            : undefined,
        capacityPerReplicaTokensPerSecond: capacity,
        ...latencyTargets(tt, kind),
        queueTimeMilliseconds: num(role.queueTimeMilliseconds),
        ttftMilliseconds: num(role.ttftMilliseconds),
        itlMilliseconds: num(role.itlMilliseconds),
        runningRequests: role.runningRequests,
        waitingRequests: role.waitingRequests,
        kvCacheUsage: num(role.kvCacheUsage),
        reason: role.reason,
        panic: role.reason === undefined ? undefined : role.reason === "Panic",
        predictorLevelTokensPerSecond: predictive !== undefined ? level : undefined,
        predictorTrendTokensPerSecondPerSecond: predictive !== undefined ? trend : undefined,
        seriesUsed: observed?.seriesUsed,
      }),
    };
  });
}
