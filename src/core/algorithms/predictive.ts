/**
 * Predictive (spec: Algorithms › Predictive): a local-linear-trend Kalman
 * filter per role forecasts token demand `horizonSeconds` ahead, so replicas
 * start loading weights before the peak arrives. Never below the
 * TokenThroughput result; after the Dynamo planner's load predictor.
 */
import { quantityValue } from "../api/quantity.js";
import { PredictiveSchema, type PredictiveParams, type PredictorStatus } from "../api/scaler.js";
import { forecastCapacityPerReplica, roleDemandTokensPerSecond, tokenTargetPerReplica } from "./capacity.js";
import { withCoupledRoles } from "./coupling.js";
import { ceilReplicas, type Decision } from "./round-and-hold.js";
import { forecastTrend, initialTrendState, updateTrend, type NoiseModel, type TrendFilterState } from "./kalman.js";
import { formatTimestamp, parseTimestampMs } from "../time/timestamp.js";
import { decodeNumber, encodeNumber, nextHistory, type DemandSample } from "./predictor-state.js";
import { algorithmReasons } from "./reasons.js";
import {
  demandFigures,
  tokenThroughputOutcome,
  toRecommendation,
  type TokenThroughputOutcome,
} from "./token-throughput.js";
import type { Algorithm, AlgorithmInput, AlgorithmResult, AlgorithmRoleInput, RoleRecommendation } from "./types.js";

/** Consolidation leaves the remaining replicas at most this fraction of their capacity. */
export const consolidationLoadFraction = 0.8;

/**
 * When the filter last updated: `lastUpdateTime`, an extension of the specification (docs/reference.md,
 * Extensions). Without it, the newest demand sample's time: every update records one at its own time.
 */
export function filterUpdatedAtMs(entry: PredictorStatus): number | undefined {
  if (entry.lastUpdateTime !== undefined) return parseTimestampMs(entry.lastUpdateTime);
  const stamps = (entry.history ?? []).map((sample) => parseTimestampMs(sample.timestamp) ?? -Infinity);
  const newestMs = Math.max(-Infinity, ...stamps);
  return newestMs === -Infinity ? undefined : newestMs;
}

/** The filter state stored in a predictor entry, or undefined when it holds none (or is corrupt). */
export function readTrendState(entry: PredictorStatus | undefined): TrendFilterState | undefined {
  if (entry === undefined || entry.sampleCount < 1) return undefined;
  const values = [
    entry.level,
    entry.trend,
    entry.covariance.p00,
    entry.covariance.p01,
    entry.covariance.p10,
    entry.covariance.p11,
  ].map(decodeNumber);
  const updatedAtMs = filterUpdatedAtMs(entry);
  const [level, trend, p00, p01, p10, p11] = values;
  if (
    level === undefined ||
    trend === undefined ||
    p00 === undefined ||
    p01 === undefined ||
    p10 === undefined ||
    p11 === undefined
  )
    return undefined;
  if (updatedAtMs === undefined || !(p00 > 0) || p11 < 0) return undefined;
  return { level, trend, p00, p01, p10, p11, sampleCount: entry.sampleCount, updatedAtMs };
}

/** A predictor entry holding the filter state, losslessly (see predictor-state.ts). */
export function writeTrendState(
  name: string,
  state: TrendFilterState,
  history: readonly DemandSample[],
): PredictorStatus {
  return {
    name,
    level: encodeNumber(state.level),
    trend: encodeNumber(state.trend),
    covariance: {
      p00: encodeNumber(state.p00),
      p01: encodeNumber(state.p01),
      p10: encodeNumber(state.p10),
      p11: encodeNumber(state.p11),
    },
    sampleCount: state.sampleCount,
    lastUpdateTime: formatTimestamp(state.updatedAtMs),
    ...(history.length === 0 ? {} : { history: [...history] }),
  };
}

function noiseModel(params: PredictiveParams): NoiseModel {
  return {
    qLevel: quantityValue(params.qLevel),
    qTrend: quantityValue(params.qTrend),
    measurementNoise: quantityValue(params.measurementNoise),
  };
}

/**
 * The demand the filter observes this pass: the panic window's, falling back
 * to the stable one. A window average of a ramp lags it by half the window, so
 * the short window (60 s by default: 30 s of lag, against 90 s) keeps the level
 * closer to now. Only Fresh and Idle roles are observed: unknown is not zero.
 */
function filterDemand(role: AlgorithmRoleInput): number | undefined {
  const { observation, kind } = role;
  if (observation.signalState !== "Fresh" && observation.signalState !== "Idle") return undefined;
  if (observation.readyReplicas <= 0) return undefined;
  return (
    roleDemandTokensPerSecond(kind, observation, "panic") ?? roleDemandTokensPerSecond(kind, observation, "stable")
  );
}

interface ForecastInput {
  readonly role: AlgorithmRoleInput;
  readonly fallback: TokenThroughputOutcome;
  readonly forecastTokensPerSecond: number;
  readonly capacityPerReplica: number;
}

/**
 * The recommendation once warm: the larger of the forecast count and the
 * TokenThroughput result; panic or a latency breach above 1.2 × target adds at
 * least one replica; shrinking only when one replica fewer would carry the
 * demand at no more than 80% of capacity.
 *
 * Example (consolidation): current 4, capacity 2000 tok/s, demand 4500 tok/s,
 * forecast count 3. Three replicas at 80% carry 4800 ≥ 4500: shrinking is
 * allowed. At 5000 tok/s it is not: the count holds at 4 with
 * `PredictiveConsolidationHold`.
 */
export function forecastDecision({
  role,
  fallback,
  forecastTokensPerSecond,
  capacityPerReplica,
}: ForecastInput): Decision {
  const { currentReplicas } = role;
  const forecastReplicas = ceilReplicas(forecastTokensPerSecond / capacityPerReplica);
  const base = fallback.decision;
  const forecastLeads = forecastReplicas > base.replicas || base.reason === algorithmReasons.tokenThroughput;
  let decision: Decision = {
    replicas: Math.max(forecastReplicas, base.replicas),
    reason: forecastLeads ? algorithmReasons.predictive : base.reason,
    ...(base.holdReason === undefined ? {} : { holdReason: base.holdReason }),
  };
  if (fallback.panic || fallback.latencyScaleUp) {
    const reason = fallback.panic ? algorithmReasons.panic : algorithmReasons.latencyGuardScaleUp;
    const replicas = Math.max(decision.replicas, currentReplicas + 1);
    decision = {
      replicas,
      reason: replicas > decision.replicas || fallback.panic ? reason : decision.reason,
      holdReason: decision.holdReason ?? reason,
    };
  }
  if (decision.replicas < currentReplicas && decision.holdReason === undefined) {
    const load = Math.max(
      forecastTokensPerSecond,
      fallback.stableTokensPerSecond ?? 0,
      fallback.panicTokensPerSecond ?? 0,
    );
    const remaining = currentReplicas - 1;
    if (!(remaining >= 1 && load <= consolidationLoadFraction * remaining * capacityPerReplica)) {
      const hold = algorithmReasons.predictiveConsolidationHold;
      decision = { replicas: currentReplicas, reason: hold, holdReason: hold };
    }
  }
  return decision;
}

interface RoleForecast {
  readonly recommendation: RoleRecommendation;
  readonly predictor?: PredictorStatus;
}

function forecastRole(
  params: PredictiveParams,
  input: AlgorithmInput,
  role: AlgorithmRoleInput,
  targetPerReplica: number,
): RoleForecast {
  const fallback = tokenThroughputOutcome(params.tokenThroughput, role, targetPerReplica, input.latencyGuardReading);
  const capacityPerReplica = forecastCapacityPerReplica(role.kind, params) ?? targetPerReplica;
  const previous = input.predictors.find((entry) => entry.name === role.name);
  const noise = noiseModel(params);
  const demand = filterDemand(role);
  const prior = readTrendState(previous);
  const state =
    demand === undefined
      ? prior
      : prior === undefined
        ? initialTrendState(demand, input.nowMs, noise)
        : updateTrend(prior, demand, input.nowMs, noise);
  const history = nextHistory(previous?.history, input.nowMs, params.tokenThroughput.stableWindowSeconds, demand);
  const predictor = state === undefined ? undefined : writeTrendState(role.name, state, history);
  const result = (decision: Decision, forecast?: number): RoleForecast => ({
    recommendation: toRecommendation(
      role.name,
      decision,
      fallback.panic,
      demandFigures(fallback, forecast),
      fallback.latencyGuard,
    ),
    ...(predictor === undefined ? {} : { predictor }),
  });

  if (state === undefined || state.sampleCount < params.minPoints) {
    return result({ ...fallback.decision, reason: algorithmReasons.predictorWarmingUp });
  }
  // Forecast only from an estimate that is current: without this pass's demand the fallback holds.
  if (demand === undefined) return result(fallback.decision);
  const forecastTokensPerSecond = Math.max(0, forecastTrend(state, params.horizonSeconds));
  return result(
    forecastDecision({ role, fallback, forecastTokensPerSecond, capacityPerReplica }),
    forecastTokensPerSecond,
  );
}

function recommend(input: AlgorithmInput): AlgorithmResult {
  const params = input.spec.algorithm.predictive ?? PredictiveSchema.parse({});
  const driven = new Map<string, RoleRecommendation>();
  const predictors: PredictorStatus[] = [];
  for (const role of input.roles) {
    const targetPerReplica = tokenTargetPerReplica(role.kind, params.tokenThroughput);
    if (targetPerReplica === undefined) continue;
    const { recommendation, predictor } = forecastRole(params, input, role, targetPerReplica);
    driven.set(role.name, recommendation);
    if (predictor !== undefined) predictors.push(predictor);
  }
  return { roles: withCoupledRoles(input.roles, input.spec.ratios ?? [], driven), predictors };
}

export const predictive: Algorithm = { type: "Predictive", recommend };
