/**
 * Every field the project writes beyond the ModelDeploymentScaler
 * specification, with why it exists and what happens without it. Each one is
 * optional: a status or target written by another implementation of the
 * specification, by an earlier version, or restored from a backup plans as the
 * specification's rules say (test/core/planner/spec-shaped.test.ts). This table
 * is the single source of the conformance table in docs/reference.md
 * (`npm run generate`) and of the "extension" mark on the status rows there.
 */

export interface Extension {
  /** The field: a status path as in the reference tables, or an annotation or label on the target. */
  readonly field: string;
  readonly why: string;
  readonly without: string;
}

export const extensions: readonly Extension[] = [
  {
    field: "status.lastPassTime",
    why:
      "The gap rule: after a pause between planning passes longer than max(3 x intervalSeconds, 60 s) the " +
      "recommendation history starts over. Every pass stamps it, also a pass that holds for signals and records no sample.",
    without:
      "The newest `stabilizationHistory` sample at or before now, in any role, stands for the last pass; with no " +
      "sample the history starts over. Passes that only held for signals can then read as a gap: the windows hold " +
      "longer, never shorter.",
  },
  {
    field: "status.predictors[].lastUpdateTime",
    why: "Predictive's filter transition uses the time elapsed since its last update.",
    without:
      "The newest `history[]` sample's time, which every filter update records. With no history either, the " +
      "filter starts again: `PredictorWarmingUp` with the TokenThroughput result for `minPoints` passes.",
  },
  {
    field: "status.roles[].queueTimeMilliseconds",
    why:
      "The p95 time requests waited in the engines' queues before they were scheduled, over the same pods and " +
      "window as TTFT: the reading the latency guard on queueing compares (docs/prometheus-signals.md, Queue time).",
    without: "Nothing reads it back: each pass observes it again. A status without it shows no queue time.",
  },
  {
    field: "spec.algorithm.tokenThroughput.queueTimeTargetMilliseconds",
    why:
      "The waiting budget of a TTFT SLO: the latency guard holds above it and grows above 1.2 times it, beside " +
      "TTFT and ITL, for the kinds that wait for a first token (docs/algorithms.md, The queue-time target). " +
      "Predictive's fallback block carries it too.",
    without: "The guard judges TTFT and ITL only, as the specification says.",
  },
  {
    field: "spec.roles[].floorReplicasByUtcHour",
    why:
      "Over whole days a scaler capped at the fleet it replaces lost the SLO in the day's rises while new replicas " +
      "started; 24 counts, one per UTC hour, raise the role's recommendation before the bounds clamp it, so the " +
      "replicas yesterday's busiest minutes of the hour asked for are ready (docs/planner.md, The floor by the hour; " +
      "`calibrate --hourly-floors-from` writes them).",
    without: "The recommendation is the algorithm's alone, clamped to the bounds, as the specification says.",
  },
  {
    field: "annotation `worker.gpustack.ai/floors-calibrated-at` (on the scaler)",
    why:
      "As of when the floors by the hour stand (the end of the day `calibrate` read them from), which are yesterday's " +
      "hours refreshed daily: " +
      "the controller exports it, so `MdsScalerFloorsStale` names a scaler whose refresh stopped " +
      "(src/core/api/floors-calibrated.ts).",
    without: "The floors act as written; their age is not exported and the alert does not fire for the scaler.",
  },
  {
    field: "status.roles[].latencyGuard",
    why: "Says how the latency guard read TTFT this pass, literally or on queueing (`--latency-guard-reading`), and why.",
    without: "Nothing reads it back: each pass writes it again. A status without it says nothing about the reading.",
  },
  {
    field: "annotation `scaler-decision`: `leader`",
    why:
      "Fences the replica counts against a deposed controller replica: admission refuses a commit from a " +
      "leadership older than the one that wrote the stored decision (docs/controller.md, Leadership).",
    without: "The stored decision counts as the oldest leadership: any commit may replace it.",
  },
  {
    field: "annotation `scaler-decision`: `baselineVector`, `timestamp`, `targetGeneration`, `reason`",
    why:
      "The commit record: a new leader rebuilds `lastCommit`, `pendingCohort` and `lastScaleDown` that a lost " +
      "status write never stored (docs/controller.md).",
    without:
      "Without `baselineVector`, `timestamp` or `reason` nothing is rebuilt: the status as stored is the only " +
      "record, so a commit whose status write was lost is neither rolled back after an admission timeout nor " +
      "restored after an aborted retirement. Without `targetGeneration` alone the rebuilt `lastCommit` keeps the " +
      "stored one's generation (0 when there is none).",
  },
  {
    field: "label `modeldeployment.gpustack.ai/scaler-bound`",
    why: "Sends only bound targets to the fence webhook, so an outage of the scaler blocks nothing unbound (docs/webhooks.md).",
    without:
      "The controller adds it with its next binding or commit write. Until then the chart's admission policy " +
      "refuses any write that keeps the binding without adding the label (which sends that write to the fence), " +
      "and only the controller may remove the binding.",
  },
];
