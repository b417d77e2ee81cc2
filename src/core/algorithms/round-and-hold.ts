/**
 * Shared arithmetic of every algorithm: rounding demand to replicas, holding
 * scale-down, and the rule that an unknown signal never shrinks a role.
 */
import type { RoleObservation } from "../signals/types.js";
import { algorithmReasons, type AlgorithmReason } from "./reasons.js";

/** A raw recommendation in the making: a count, why, and a scale-down hold when shrinking is forbidden. */
export interface Decision {
  readonly replicas: number;
  readonly reason: AlgorithmReason;
  readonly holdReason?: AlgorithmReason;
}

/**
 * A sanity ceiling on raw recommendations: far above the 1024 `maxReplicas`
 * limit, it only keeps a wild rate (or a tiny target) from producing a number
 * that is not a safe integer. The planner's bounds apply afterwards.
 */
export const maxRawReplicas = 1 << 20;

/**
 * The replicas needed to carry `units` at one unit per replica: the ceiling,
 * at least 1. A relative slack of 1e-9 absorbs float noise, so 0.1 × 30
 * (3.0000000000000004) needs 3 replicas, not 4.
 */
export function ceilReplicas(units: number): number {
  if (Number.isNaN(units)) return 1;
  const slack = 1e-9 * Math.max(1, Math.abs(units));
  return Math.min(maxRawReplicas, Math.max(1, Math.ceil(units - slack)));
}

/**
 * Forbids shrinking: the count is at least the current one and the hold is
 * recorded. An earlier hold keeps its reason (the first guard that held is the
 * one reported). When the count had to be raised, `reason` explains it.
 */
export function holdScaleDown(decision: Decision, currentReplicas: number, reason: AlgorithmReason): Decision {
  const raised = decision.replicas < currentReplicas;
  return {
    replicas: Math.max(decision.replicas, currentReplicas),
    reason: raised ? reason : decision.reason,
    holdReason: decision.holdReason ?? reason,
  };
}

/** Missing or Stale: nothing current is known about the role as a whole. */
export function isSignalUnknown(observation: RoleObservation): boolean {
  return observation.signalState === "Missing" || observation.signalState === "Stale";
}

/**
 * Unknown is not zero: a Missing or Stale role never recommends below its
 * current count. Partial readings may still justify growth, which keeps its
 * reason; anything else holds the count as `WaitingForMetrics`.
 */
export function guardUnknownSignal(
  decision: Decision,
  observation: RoleObservation,
  currentReplicas: number,
): Decision {
  if (!isSignalUnknown(observation)) return decision;
  if (decision.replicas > currentReplicas)
    return { ...decision, holdReason: decision.holdReason ?? algorithmReasons.waitingForMetrics };
  return waitForMetrics(currentReplicas);
}

/** Holds a role that has no readings its algorithm can use. */
export function waitForMetrics(currentReplicas: number): Decision {
  return {
    replicas: Math.max(1, currentReplicas),
    reason: algorithmReasons.waitingForMetrics,
    holdReason: algorithmReasons.waitingForMetrics,
  };
}

/** Holds a role with no ready replica: there is no capacity to measure load against. */
export function noReadyReplicas(currentReplicas: number): Decision {
  return {
    replicas: Math.max(1, currentReplicas),
    reason: algorithmReasons.noReadyReplicas,
    holdReason: algorithmReasons.noReadyReplicas,
  };
}
