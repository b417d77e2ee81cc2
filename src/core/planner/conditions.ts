/**
 * The four conditions and their reasons (spec: Conditions). A condition's
 * `lastTransitionTime` moves only when its status moves; reason, message and
 * `observedGeneration` follow every pass that sets it. A pass that exits
 * early sets only some conditions and leaves the others as they were.
 */
import type { Condition, ConditionType } from "../api/scaler.js";

export const boundReasons = [
  "Bound",
  "TargetNotFound",
  "AlreadyBound",
  "TargetReplaced",
  "InvalidBinding",
  "Suspended",
] as const;
export const activeReasons = [
  "Active",
  "TargetNotFound",
  "AlreadyBound",
  "TargetReplaced",
  "InvalidBinding",
  "Suspended",
  "ShadowMode",
] as const;
export const metricsReadyReasons = [
  "Observed",
  "WaitingForMetrics",
  "ResourceExhausted",
  "BoundsConflict",
  "RatioConflict",
] as const;
export const blockedReasons = [
  "Ready",
  "BoundsConflict",
  "RatioConflict",
  "PacingBounded",
  "ResourceExhausted",
  "ScaleDownAborted",
  "RebalanceNotApplicable",
  "RebalanceBlocked",
] as const;

export type BoundReason = (typeof boundReasons)[number];
export type ActiveReason = (typeof activeReasons)[number];
export type MetricsReadyReason = (typeof metricsReadyReasons)[number];
export type BlockedReason = (typeof blockedReasons)[number];

/** Reasons that may apply at once, strongest first: the condition shows the first. */
export const blockedReasonPrecedence: readonly BlockedReason[] = [
  "BoundsConflict",
  "RatioConflict",
  "ScaleDownAborted",
  "ResourceExhausted",
  "RebalanceBlocked",
  "RebalanceNotApplicable",
  "PacingBounded",
];

/** A condition to set: `status` plus the reason of the table and a sentence. */
export interface ConditionUpdate {
  readonly type: ConditionType;
  readonly status: Condition["status"];
  readonly reason: string;
  readonly message: string;
}

const conditionOrder: readonly ConditionType[] = ["Bound", "Active", "MetricsReady", "Blocked"];

/** Applies updates to the previous conditions; untouched conditions stay as they were. */
export function setConditions(
  previous: readonly Condition[] | undefined,
  updates: readonly ConditionUpdate[],
  generation: number | undefined,
  nowMs: number,
): Condition[] {
  const byType = new Map((previous ?? []).map((c) => [c.type, c] as const));
  const now = new Date(nowMs).toISOString();
  for (const update of updates) {
    const old = byType.get(update.type);
    // A TargetReplaced condition needs no generation of its own: it is reported again only while the
    // generation has not moved, since a higher one acknowledges it (src/core/binding/binding.ts).
    byType.set(update.type, {
      type: update.type,
      status: update.status,
      reason: update.reason,
      message: update.message,
      ...(generation === undefined ? {} : { observedGeneration: generation }),
      lastTransitionTime: old !== undefined && old.status === update.status ? old.lastTransitionTime : now,
    });
  }
  return conditionOrder.flatMap((type) => {
    const c = byType.get(type);
    return c === undefined ? [] : [c];
  });
}

/** The Blocked condition for a set of reasons that applied this pass (empty: `Ready`). */
export function blockedCondition(reasons: ReadonlyMap<BlockedReason, string>): ConditionUpdate {
  for (const reason of blockedReasonPrecedence) {
    const message = reasons.get(reason);
    if (message !== undefined) return { type: "Blocked", status: "True", reason, message };
  }
  return { type: "Blocked", status: "False", reason: "Ready", message: "no constraint holds the recommendation" };
}
