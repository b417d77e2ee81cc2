/**
 * Proportional (spec: Algorithms › Proportional): one live metric over a fixed
 * per-replica target with a tolerance deadband, after the Kubernetes HPA.
 */
import { quantityValue } from "../api/quantity.js";
import type { ProportionalMetric, ProportionalParams } from "../api/scaler.js";
import type { RoleObservation } from "../signals/types.js";
import { withCoupledRoles } from "./coupling.js";
import { ceilReplicas, guardUnknownSignal, noReadyReplicas, waitForMetrics, type Decision } from "./round-and-hold.js";
import { algorithmReasons } from "./reasons.js";
import type { Algorithm, AlgorithmInput, AlgorithmResult, AlgorithmRoleInput, RoleRecommendation } from "./types.js";

interface RatePair {
  readonly prompt: number | undefined;
  readonly generation: number | undefined;
}

/** The panic window's rates when it reported any, else the stable window's. */
function shortWindowRates(observation: RoleObservation): RatePair {
  const panic = {
    prompt: observation.panicPromptTokensPerSecond,
    generation: observation.panicGenerationTokensPerSecond,
  };
  if (panic.prompt !== undefined || panic.generation !== undefined) return panic;
  return { prompt: observation.promptTokensPerSecond, generation: observation.generationTokensPerSecond };
}

/**
 * The role total of the metric, or undefined when any part of it is missing.
 * Request metrics are the instantaneous gauges; rate metrics read the short
 * window (the panic window's rates), falling back to the stable window when
 * the short one is not established.
 */
export function proportionalMetricTotal(metric: ProportionalMetric, observation: RoleObservation): number | undefined {
  const { runningRequests: running, waitingRequests: waiting } = observation;
  switch (metric) {
    case "QueueDepth":
      return running === undefined || waiting === undefined ? undefined : running + waiting;
    case "RunningRequests":
      return running;
    case "WaitingRequests":
      return waiting;
    case "PromptTokensPerSecond":
      return shortWindowRates(observation).prompt;
    case "GenerationTokensPerSecond":
      return shortWindowRates(observation).generation;
    case "TotalTokensPerSecond": {
      const { prompt, generation } = shortWindowRates(observation);
      return prompt === undefined || generation === undefined ? undefined : prompt + generation;
    }
  }
}

/**
 * One role: load = total / ready replicas, compared with the target.
 *
 * Inside `|load / target − 1| ≤ tolerance` the count holds (`WithinTolerance`).
 * Outside, `ceil(total / target)`, at least 1. The deadband is centred on the
 * current count: above it the result is never below the current count and
 * below it never above. That only matters while ready ≠ current; example:
 * current 10, ready 5, target 1, total 6 → load 1.2, and ceil(6) = 6 would undo
 * the five replicas still starting although the ready ones are over target, so
 * the result is 10. It also keeps the result monotone in the load.
 */
export function proportionalDecision(
  role: AlgorithmRoleInput,
  targetPerReplica: number,
  tolerance: number,
  metric: ProportionalMetric,
): Decision {
  const { observation, currentReplicas } = role;
  if (observation.readyReplicas <= 0) return noReadyReplicas(currentReplicas);
  const total = proportionalMetricTotal(metric, observation);
  if (total === undefined) return waitForMetrics(currentReplicas);
  const loadRatio = total / observation.readyReplicas / targetPerReplica;
  let decision: Decision;
  // The slack keeps an exact boundary inside: 22 / 2 / 10 = 1.1 computes as 1.1000000000000001.
  // Stryker disable next-line EqualityOperator: `<` differs only at exactly tolerance + 1e-9, the slack's own edge
  if (Math.abs(loadRatio - 1) <= tolerance + 1e-9) {
    decision = { replicas: Math.max(1, currentReplicas), reason: algorithmReasons.withinTolerance };
  } else {
    const needed = ceilReplicas(total / targetPerReplica);
    // Stryker disable next-line EqualityOperator: a load ratio of exactly 1 is inside the deadband, never here
    const replicas = loadRatio > 1 ? Math.max(needed, currentReplicas) : Math.max(1, Math.min(needed, currentReplicas));
    decision = { replicas, reason: algorithmReasons.proportional };
  }
  return guardUnknownSignal(decision, observation, currentReplicas);
}

function toRecommendation(role: AlgorithmRoleInput, decision: Decision): RoleRecommendation {
  return {
    role: role.name,
    scaled: true,
    replicas: decision.replicas,
    reason: decision.reason,
    ...(decision.holdReason === undefined ? {} : { scaleDownHold: { reason: decision.holdReason } }),
  };
}

function recommend(input: AlgorithmInput): AlgorithmResult {
  const params: ProportionalParams | undefined = input.spec.algorithm.proportional;
  const driven = new Map<string, RoleRecommendation>();
  if (params !== undefined) {
    const tolerance = quantityValue(params.tolerance);
    for (const role of input.roles) {
      const target = params.roleTargets.find((entry) => entry.name === role.name);
      if (target === undefined) continue;
      driven.set(
        role.name,
        toRecommendation(role, proportionalDecision(role, quantityValue(target.target), tolerance, params.metric)),
      );
    }
  }
  // Stryker disable next-line ArrayDeclaration: a stray ratio entry has no bound, so it couples nothing
  return { roles: withCoupledRoles(input.roles, input.spec.ratios ?? [], driven), predictors: [] };
}

export const proportional: Algorithm = { type: "Proportional", recommend };
