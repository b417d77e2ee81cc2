/**
 * TokenThroughput (spec: Algorithms › Token throughput): cache-adjusted token
 * demand over a stable and a panic window divided by a per-replica capacity,
 * a panic mode, and a latency guard. After the Knative and AIBrix KPA windows
 * and HeteroScale's per-stage throughput with a latency guard.
 */
import type { RoleKind } from "../api/model-deployment.js";
import { quantityValue } from "../api/quantity.js";
import { TokenThroughputSchema, type PredictorStatus, type TokenThroughputParams } from "../api/scaler.js";
import type { LatencyBracket, RoleObservation } from "../signals/types.js";
import { roleDemandTokensPerSecond, tokenTargetPerReplica } from "./capacity.js";
import { withCoupledRoles } from "./coupling.js";
import {
  ceilReplicas,
  guardUnknownSignal,
  holdScaleDown,
  noReadyReplicas,
  waitForMetrics,
  type Decision,
} from "./round-and-hold.js";
import { nextHistory } from "./predictor-state.js";
import { guardedQueueTime, queueTimeWords } from "./queue-time-target.js";
import { algorithmReasons } from "./reasons.js";
import { defaultLatencyGuardReading, ttftReading, type LatencyGuardReading, type TtftReading } from "./ttft-reading.js";
import type {
  Algorithm,
  AlgorithmInput,
  AlgorithmResult,
  AlgorithmRoleInput,
  DemandFigures,
  RoleRecommendation,
} from "./types.js";

/** Latency above this multiple of its target asks for at least one more replica. */
export const latencyScaleUpFactor = 1.2;

/** The TokenThroughput parameters of a spec, defaulted when the block is absent. */
export function tokenThroughputParams(params: TokenThroughputParams | undefined): TokenThroughputParams {
  return params ?? TokenThroughputSchema.parse({});
}

export interface LatencyReading {
  /** The largest latency / target among the latencies the kind is guarded on, measured and counted. */
  readonly relativeBreach?: number;
  /** A guarded latency is absent while the role has work. */
  readonly missing: boolean;
  /** How TTFT was read, for a kind guarded on it with a measured TTFT (`ttft-reading.ts`). */
  readonly ttft?: TtftReading;
  /** The role's `latencyGuard` status: how TTFT was read, and the queue time against its target when one is written. */
  readonly message?: string;
}

/**
 * The p95 the guard compares with its target. A p95 known from buckets lies
 * somewhere in (lower, upper]; the guard uses its estimate inside that bucket
 * (linear interpolation), so a bucket wholly within the target never holds,
 * one wholly above it always does, and one that straddles the target (or 1.2 ×
 * the target) is decided by where the counts place the percentile. Without
 * buckets it is the mean, as reported. docs/prometheus-signals.md, "Latency and bucket resolution".
 * Example: SGLang TTFT buckets 0.4 → 94, 0.6 → 99 of 100: reported 600 ms, compared as 440 ms.
 */
export function guardedMilliseconds(
  reported: number | undefined,
  bracket: LatencyBracket | undefined,
): number | undefined {
  if (reported === undefined) return undefined;
  return bracket?.estimateMilliseconds ?? reported;
}

/**
 * The latency guard's reading: TTFT for Prefill, ITL for Decode, both for a
 * Server role (the larger relative breach counts). An Idle role finishes no
 * requests, so its absent latency is not a missing signal. TTFT is read as
 * `ttftReading` says: on queueing (selectable) a measured TTFT whose breach is
 * compute, not waiting, neither holds nor grows. With a queue-time target the
 * known p95 queue time of a Prefill or Server role counts too (`queue-time-target.ts`).
 * Example (Server): TTFT 600 ms / 500 ms = 1.2 and ITL 40 ms / 50 ms = 0.8 → 1.2.
 */
export function latencyReading(
  kind: RoleKind,
  observation: RoleObservation,
  params: TokenThroughputParams,
  guardReading: LatencyGuardReading = defaultLatencyGuardReading,
): LatencyReading {
  const guarded: { value: number | undefined; target: number }[] = [];
  let ttft: TtftReading | undefined;
  if (kind === "Prefill" || kind === "Server") {
    const target = quantityValue(params.ttftTargetMilliseconds);
    const value = guardedMilliseconds(observation.ttftMilliseconds, observation.ttftBracket);
    if (value !== undefined) ttft = ttftReading(observation, target, guardReading);
    // A TTFT that does not count is measured, so not missing, and breaches nothing.
    guarded.push({ value: ttft?.counts === false ? 0 : value, target });
  }
  if (kind === "Decode" || kind === "Server") {
    guarded.push({
      value: guardedMilliseconds(observation.itlMilliseconds, observation.itlBracket),
      target: quantityValue(params.itlTargetMilliseconds),
    });
  }
  const ratios = guarded.flatMap(({ value, target }) => (value === undefined ? [] : [value / target]));
  const missing = observation.signalState !== "Idle" && ratios.length < guarded.length;
  // Never missing, so not in `guarded`: unknown waiting is still guarded through a literal TTFT reading.
  const queue = guardedQueueTime(kind, observation, params);
  const breaches = queue === undefined ? ratios : [...ratios, queue.milliseconds / queue.targetMilliseconds];
  const message = [ttft?.message, queue === undefined ? undefined : queueTimeWords(queue)].filter(
    (m) => m !== undefined,
  );
  return {
    ...(breaches.length === 0 ? {} : { relativeBreach: Math.max(...breaches) }),
    missing,
    ...(ttft === undefined ? {} : { ttft }),
    ...(message.length === 0 ? {} : { message: message.join("; ") }),
  };
}

/** Everything TokenThroughput concluded about one role; Predictive builds on it. */
export interface TokenThroughputOutcome {
  readonly decision: Decision;
  readonly panic: boolean;
  /** Latency above 1.2 × target. */
  readonly latencyScaleUp: boolean;
  /** Which reading of TTFT the guard applied and why (`ttft-reading.ts`), when TTFT was measured. */
  readonly latencyGuard?: string;
  readonly stableTokensPerSecond?: number;
  readonly panicTokensPerSecond?: number;
  readonly capacityPerReplicaTokensPerSecond: number;
}

function outcomeDemand(stable: number | undefined, panic: number | undefined) {
  return {
    ...(stable === undefined ? {} : { stableTokensPerSecond: stable }),
    ...(panic === undefined ? {} : { panicTokensPerSecond: panic }),
  };
}

/**
 * Applies the latency guard to a throughput decision: above 1.2 × target at
 * least current + 1 (`LatencyGuardScaleUp`); above target, or missing, no
 * scale-down (`LatencyGuardHold`). Throughput-driven growth passes through.
 */
function applyLatencyGuard(decision: Decision, latency: LatencyReading, currentReplicas: number): Decision {
  const breach = latency.relativeBreach ?? 0;
  if (breach > latencyScaleUpFactor) {
    const raised = decision.replicas < currentReplicas + 1;
    return {
      replicas: Math.max(decision.replicas, currentReplicas + 1),
      reason: raised ? algorithmReasons.latencyGuardScaleUp : decision.reason,
      holdReason: decision.holdReason ?? algorithmReasons.latencyGuardScaleUp,
    };
  }
  if (breach > 1 || latency.missing) return holdScaleDown(decision, currentReplicas, algorithmReasons.latencyGuardHold);
  return decision;
}

/**
 * One role against a capacity of `capacityPerReplica` tokens/s.
 *
 * stable = ceil(stable demand / capacity), panic = ceil(panic demand / capacity).
 * Panic starts when the panic demand reaches panicThreshold × ready × capacity;
 * the result is then the larger of both, never below the current count.
 * Example: capacity 2000, ready 2, threshold 2: panic demand 8000 ≥ 8000 →
 * panic, ceil(8000 / 2000) = 4 against a stable 2400 → 2: the result is 4.
 */
export function tokenThroughputOutcome(
  params: TokenThroughputParams,
  role: AlgorithmRoleInput,
  capacityPerReplica: number,
  guardReading: LatencyGuardReading = defaultLatencyGuardReading,
): TokenThroughputOutcome {
  const { observation, currentReplicas, kind } = role;
  const stable = roleDemandTokensPerSecond(kind, observation, "stable");
  const panicDemand = roleDemandTokensPerSecond(kind, observation, "panic");
  const base = { capacityPerReplicaTokensPerSecond: capacityPerReplica, ...outcomeDemand(stable, panicDemand) };
  const held = (decision: Decision): TokenThroughputOutcome => ({
    decision,
    panic: false,
    latencyScaleUp: false,
    ...base,
  });
  if (observation.readyReplicas <= 0) return held(noReadyReplicas(currentReplicas));
  const stableReplicas = stable === undefined ? undefined : ceilReplicas(stable / capacityPerReplica);
  const panicReplicas = panicDemand === undefined ? undefined : ceilReplicas(panicDemand / capacityPerReplica);
  const throughputReplicas = stableReplicas ?? panicReplicas;
  if (throughputReplicas === undefined) return held(waitForMetrics(currentReplicas));

  const panicThreshold = quantityValue(params.panicThreshold);
  const panic =
    panicDemand !== undefined && panicDemand >= panicThreshold * observation.readyReplicas * capacityPerReplica;
  let decision: Decision = panic
    ? {
        replicas: Math.max(currentReplicas, stableReplicas ?? 0, panicReplicas ?? 0),
        reason: algorithmReasons.panic,
        holdReason: algorithmReasons.panic,
      }
    : { replicas: throughputReplicas, reason: algorithmReasons.tokenThroughput };
  const latency = latencyReading(kind, observation, params, guardReading);
  decision = applyLatencyGuard(decision, latency, currentReplicas);
  decision = guardUnknownSignal(decision, observation, currentReplicas);
  return {
    decision,
    panic,
    latencyScaleUp: (latency.relativeBreach ?? 0) > latencyScaleUpFactor,
    ...(latency.message === undefined ? {} : { latencyGuard: latency.message }),
    ...base,
  };
}

/** The demand figures a recommendation reports. */
export function demandFigures(outcome: TokenThroughputOutcome, forecastTokensPerSecond?: number): DemandFigures {
  return {
    ...(outcome.stableTokensPerSecond === undefined ? {} : { stableTokensPerSecond: outcome.stableTokensPerSecond }),
    ...(outcome.panicTokensPerSecond === undefined ? {} : { panicTokensPerSecond: outcome.panicTokensPerSecond }),
    ...(forecastTokensPerSecond === undefined ? {} : { forecastTokensPerSecond }),
    capacityPerReplicaTokensPerSecond: outcome.capacityPerReplicaTokensPerSecond,
  };
}

/** A decision as the planner reads it. */
export function toRecommendation(
  role: string,
  decision: Decision,
  panic: boolean,
  demand: DemandFigures,
  latencyGuard?: string,
): RoleRecommendation {
  return {
    role,
    scaled: true,
    replicas: decision.replicas,
    reason: decision.reason,
    ...(decision.holdReason === undefined ? {} : { scaleDownHold: { reason: decision.holdReason } }),
    panic,
    demand,
    ...(latencyGuard === undefined ? {} : { latencyGuard }),
  };
}

/**
 * TokenThroughput keeps no filter: its predictor entry carries the stable-window
 * demand history (for people and dashboards; the windows themselves come from
 * Prometheus), `level` = the newest sample, `trend` and covariance 0, and
 * `sampleCount` 0 because no filter processed anything. Predictive therefore
 * starts a fresh filter if the algorithm is switched.
 */
function historyEntry(
  name: string,
  previous: PredictorStatus | undefined,
  nowMs: number,
  windowSeconds: number,
  tokensPerSecond: number | undefined,
): PredictorStatus | undefined {
  const history = nextHistory(previous?.history, nowMs, windowSeconds, tokensPerSecond);
  const newest = history.at(-1);
  if (newest === undefined) return undefined;
  return {
    name,
    level: newest.tokensPerSecond,
    trend: "0",
    covariance: { p00: "0", p01: "0", p10: "0", p11: "0" },
    sampleCount: 0,
    lastUpdateTime: newest.timestamp,
    history,
  };
}

function recommend(input: AlgorithmInput): AlgorithmResult {
  const params = tokenThroughputParams(input.spec.algorithm.tokenThroughput);
  const driven = new Map<string, RoleRecommendation>();
  const predictors: PredictorStatus[] = [];
  for (const role of input.roles) {
    const capacity = tokenTargetPerReplica(role.kind, params);
    if (capacity === undefined) continue;
    const outcome = tokenThroughputOutcome(params, role, capacity, input.latencyGuardReading);
    driven.set(
      role.name,
      toRecommendation(role.name, outcome.decision, outcome.panic, demandFigures(outcome), outcome.latencyGuard),
    );
    const usable = role.observation.signalState === "Fresh" || role.observation.signalState === "Idle";
    const previous = input.predictors.find((entry) => entry.name === role.name);
    const entry = historyEntry(
      role.name,
      previous,
      input.nowMs,
      params.stableWindowSeconds,
      usable ? outcome.stableTokensPerSecond : undefined,
    );
    if (entry !== undefined) predictors.push(entry);
  }
  return { roles: withCoupledRoles(input.roles, input.spec.ratios ?? [], driven), predictors };
}

export const tokenThroughput: Algorithm = { type: "TokenThroughput", recommend };
