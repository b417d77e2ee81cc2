/**
 * Role observations as status shows them, and the test for whether a pass
 * moved the control plane (and so needs a status write).
 */
import { formatQuantity } from "../api/quantity.js";
import type { RoleStatus, ScalerStatus } from "../api/scaler.js";
import type { TargetRoleStatus } from "../api/model-deployment.js";
import type { RoleObservation } from "../signals/types.js";
import type { HistorySample } from "./pacing.js";
import { formatTimestamp, parseTimestampMs } from "../time/timestamp.js";

/** A reading worth showing: present and finite (absent, NaN and infinities are unknown). */
function isFiniteReading(value: number | undefined): value is number {
  return Number.isFinite(value);
}

function quantityField<K extends string>(key: K, value: number | undefined): { [P in K]?: string } {
  return isFiniteReading(value) ? ({ [key]: formatQuantity(value) } as { [P in K]?: string }) : {};
}

function countField<K extends string>(key: K, value: number | undefined): { [P in K]?: number } {
  return isFiniteReading(value) ? ({ [key]: value } as { [P in K]?: number }) : {};
}

/**
 * One role's readings. An unobserved role is `Missing` with the target's
 * ready count; absent readings stay absent (a missing signal is not zero).
 */
export function observedRoleStatus(
  name: string,
  currentReplicas: number,
  observation: RoleObservation | undefined,
  targetStatus: TargetRoleStatus | undefined,
): RoleStatus {
  if (observation === undefined) {
    return { name, currentReplicas, readyReplicas: targetStatus?.ready ?? 0, signalState: "Missing" };
  }
  return {
    name,
    currentReplicas,
    readyReplicas: observation.readyReplicas,
    signalState: observation.signalState,
    ...quantityField("promptTokensPerSecond", observation.promptTokensPerSecond),
    ...quantityField("generationTokensPerSecond", observation.generationTokensPerSecond),
    ...countField("runningRequests", observation.runningRequests),
    ...countField("waitingRequests", observation.waitingRequests),
    ...quantityField("kvCacheUsage", observation.kvCacheUsage),
    ...quantityField("ttftMilliseconds", observation.ttftMilliseconds),
    ...quantityField("itlMilliseconds", observation.itlMilliseconds),
    ...quantityField("queueTimeMilliseconds", observation.queueTimeMilliseconds),
  };
}

/** Status history entries into samples; unparseable entries are dropped. */
export function historyFromStatus(entries: RoleStatus["stabilizationHistory"]): HistorySample[] {
  const out: HistorySample[] = [];
  for (const entry of entries ?? []) {
    const ms = parseTimestampMs(entry.timestamp);
    if (ms !== undefined) out.push({ timestampMs: ms, replicas: entry.replicas, timestamp: entry.timestamp });
  }
  return out;
}

type HistoryEntry = NonNullable<RoleStatus["stabilizationHistory"]>[number];

/** Samples into status entries; a sample carried unchanged keeps its original stamp text. */
export function historyToStatus(samples: readonly HistorySample[]): HistoryEntry[] {
  const out: HistoryEntry[] = [];
  for (const s of samples) out.push({ timestamp: s.timestamp ?? formatTimestamp(s.timestampMs), replicas: s.replicas });
  return out;
}

/**
 * The part of status whose change is worth a write: decisions, binding,
 * conditions and role replica counts. Readings, reasons, history and
 * predictor state change every pass and ride along with the next write.
 */
function controlPlane(status: ScalerStatus | undefined): unknown {
  if (status === undefined) return undefined;
  return {
    observedGeneration: status.observedGeneration,
    binding: status.binding,
    lastCommit: status.lastCommit,
    pendingCohort: status.pendingCohort,
    rebalance: status.rebalance,
    lastScaleDown: status.lastScaleDown,
    conditions: (status.conditions ?? []).map((c) => [
      c.type,
      c.status,
      c.reason,
      c.observedGeneration,
      c.lastTransitionTime,
    ]),
    roles: (status.roles ?? []).map((r) => [
      r.name,
      r.currentReplicas,
      r.readyReplicas,
      r.rawRecommendedReplicas,
      r.constrainedReplicas,
      r.lastScaleUpTime,
    ]),
  };
}

/** JSON with object keys sorted, so key order never counts as a change. */
export function stableJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v === null || typeof v !== "object" || Array.isArray(v)) return v;
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(v).sort()) sorted[key] = (v as Record<string, unknown>)[key];
    return sorted;
  });
}

export function controlPlaneMoved(previous: ScalerStatus | undefined, next: ScalerStatus): boolean {
  return stableJson(controlPlane(previous)) !== stableJson(controlPlane(next));
}
