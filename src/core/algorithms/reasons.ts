/**
 * The reasons an algorithm gives for a role's raw recommendation or for
 * holding its scale-down. They appear in `status.roles[].reason` unless a
 * planner constraint replaces them.
 */
export const algorithmReasons = {
  /** Base reasons: the algorithm's own arithmetic decided. */
  proportional: "Proportional",
  tokenThroughput: "TokenThroughput",
  predictive: "Predictive",
  /** Proportional: the load is inside the tolerance deadband, so the count holds. */
  withinTolerance: "WithinTolerance",
  /** No ready replica to measure capacity against: hold the count. */
  noReadyReplicas: "NoReadyReplicas",
  /** The panic window reached panicThreshold × ready capacity: larger recommendation, no scale-down. */
  panic: "Panic",
  /** Latency above its target, or missing: no scale-down. */
  latencyGuardHold: "LatencyGuardHold",
  /** Latency above 1.2 × its target: at least one more replica. */
  latencyGuardScaleUp: "LatencyGuardScaleUp",
  /** Predictive with fewer than minPoints observations: the TokenThroughput result. */
  predictorWarmingUp: "PredictorWarmingUp",
  /** Predictive: removing a replica would load the others above 80% of capacity. */
  predictiveConsolidationHold: "PredictiveConsolidationHold",
  /** The role follows its ratio to a driven role (an Encode role, or a role with no own target). */
  ratioCoupled: "RatioCoupled",
  /** The role's signal is Missing or Stale, or the metric the algorithm reads is absent: hold the count. */
  waitingForMetrics: "WaitingForMetrics",
  /** Neither a target nor a usable ratio: the algorithm does not drive the role (admission prevents this). */
  noTarget: "NoTarget",
} as const;

export type AlgorithmReason = (typeof algorithmReasons)[keyof typeof algorithmReasons];
