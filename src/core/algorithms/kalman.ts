/**
 * A causal local-linear-trend Kalman filter over one role's token demand
 * (spec: Algorithms › Predictive). Pure and deterministic: the state is plain
 * numbers, time enters as the elapsed seconds between updates.
 *
 * State x = [level, trend]: demand in tokens/s and its change in tokens/s per s.
 *
 * Transition over Δt seconds (the time since the previous update):
 *
 *     F = | 1  Δt |        x⁻ = F x            (level⁻ = level + Δt·trend)
 *         | 0   1 |        P⁻ = F P Fᵀ + Q(Δt)
 *
 * Process noise: level and trend each receive white noise of intensity qLevel
 * and qTrend per second; integrating the continuous model over Δt gives
 *
 *     Q(Δt) = | qLevel·Δt + qTrend·Δt³/3   qTrend·Δt²/2 |
 *             | qTrend·Δt²/2               qTrend·Δt    |
 *
 * so uncertainty grows with elapsed time: a pass delayed by a missed sample, or
 * a restart after an outage, trusts the old estimate less, and two 15 s steps
 * predict the same as one 30 s step. Example with the defaults (qLevel 1,
 * qTrend 0.1) and Δt = 15 s: Q = [[15 + 112.5, 11.25], [11.25, 1.5]].
 *
 * Measurement z = H x + v with H = [1 0] and Var(v) = R (`measurementNoise`):
 *
 *     y = z − level⁻           S = P⁻₀₀ + R
 *     K = [P⁻₀₀ / S, P⁻₁₀ / S]  x = x⁻ + K·y
 *     P = (I − K H) P⁻, i.e. P₀₀ = P⁻₀₀·R/S, P₀₁ = P⁻₀₁·R/S,
 *                            P₁₀ = P⁻₁₀·R/S, P₁₁ = P⁻₁₁ − P⁻₁₀·P⁻₀₁/S
 *
 * Forecast h seconds ahead: level + trend·h.
 *
 * The first observation sets level = z and trend = 0 with P = diag(R, R): the
 * level is as certain as one measurement, and the trend prior is weak enough
 * that the second observation sets most of the slope (with Δt = 15 s its
 * variance contributes Δt²·R = 225·R to the level prediction, against R).
 */

export interface NoiseModel {
  /** Process noise intensity of the level, (tokens/s)² per second. */
  readonly qLevel: number;
  /** Process noise intensity of the trend, (tokens/s²)² per second. */
  readonly qTrend: number;
  /** Variance of one demand observation, (tokens/s)². */
  readonly measurementNoise: number;
}

export interface TrendFilterState {
  readonly level: number;
  readonly trend: number;
  readonly p00: number;
  readonly p01: number;
  readonly p10: number;
  readonly p11: number;
  /** Observations processed. */
  readonly sampleCount: number;
  /** Time of the last update, Unix milliseconds. */
  readonly updatedAtMs: number;
}

/** The state after the first observation. */
export function initialTrendState(demand: number, nowMs: number, noise: NoiseModel): TrendFilterState {
  const r = noise.measurementNoise;
  return { level: demand, trend: 0, p00: r, p01: 0, p10: 0, p11: r, sampleCount: 1, updatedAtMs: nowMs };
}

/** The prediction step over `dtSeconds`: x⁻ = F x, P⁻ = F P Fᵀ + Q(Δt). */
export function predictTrend(state: TrendFilterState, dtSeconds: number, noise: NoiseModel): TrendFilterState {
  const dt = dtSeconds;
  const { p00, p01, p10, p11 } = state;
  const qCross = (noise.qTrend * dt * dt) / 2;
  return {
    ...state,
    level: state.level + dt * state.trend,
    p00: p00 + dt * (p01 + p10) + dt * dt * p11 + noise.qLevel * dt + (noise.qTrend * dt * dt * dt) / 3,
    p01: p01 + dt * p11 + qCross,
    p10: p10 + dt * p11 + qCross,
    p11: p11 + noise.qTrend * dt,
  };
}

/**
 * One filter pass: predict over the seconds since the previous update, then
 * correct with this pass's demand. A pass at or before the previous update
 * (a replay of the same instant, a clock step back) leaves the state as it is.
 */
export function updateTrend(
  state: TrendFilterState,
  demand: number,
  nowMs: number,
  noise: NoiseModel,
): TrendFilterState {
  const dtSeconds = (nowMs - state.updatedAtMs) / 1000;
  if (!(dtSeconds > 0)) return state;
  const prior = predictTrend(state, dtSeconds, noise);
  const r = noise.measurementNoise;
  const innovation = demand - prior.level;
  const s = prior.p00 + r;
  const gainLevel = prior.p00 / s;
  const gainTrend = prior.p10 / s;
  return {
    level: prior.level + gainLevel * innovation,
    trend: prior.trend + gainTrend * innovation,
    p00: (prior.p00 * r) / s,
    p01: (prior.p01 * r) / s,
    p10: (prior.p10 * r) / s,
    p11: prior.p11 - (prior.p10 * prior.p01) / s,
    sampleCount: state.sampleCount + 1,
    updatedAtMs: nowMs,
  };
}

/** The demand expected `horizonSeconds` after the last update: level + trend·h. */
export function forecastTrend(state: TrendFilterState, horizonSeconds: number): number {
  return state.level + state.trend * horizonSeconds;
}
