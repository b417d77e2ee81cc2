/**
 * Predictor state as `status.predictors[]` stores it (spec: Status › Predictor
 * state). The status is the only memory: the scaler keeps the same entries in
 * memory between passes and reads them back after a restart, so both paths run
 * the same code on the same strings and a restart continues exactly.
 *
 * Numbers are written with JavaScript's shortest round-trip form
 * (`String(x)`, for example "2400.123456789" or "1.5e-7"), not rounded to
 * three decimals: a rounded covariance would make a restarted filter drift
 * from one that kept running. Every string written is a valid Kubernetes
 * quantity, and `Number(text)` gives back the identical double.
 */
import type { PredictorStatus } from "../api/scaler.js";
import { formatTimestamp, parseTimestampMs } from "../time/timestamp.js";

/** The most demand samples one role keeps, as the schema allows. */
export const maxHistorySamples = 256;

export type DemandSample = NonNullable<PredictorStatus["history"]>[number];

/**
 * A magnitude below this is written as 0: Kubernetes quantities refuse
 * exponents beyond ±64, and nothing a filter over token rates holds is that small.
 */
export const smallestStoredMagnitude = 1e-30;

/** Writes a finite number losslessly (magnitudes under 1e-30 become 0). */
export function encodeNumber(value: number): string {
  if (!Number.isFinite(value)) throw new Error(`predictor state must be finite, got ${value}`);
  return Math.abs(value) < smallestStoredMagnitude ? "0" : String(value);
}

/** Reads a number written by `encodeNumber`; undefined for anything else. */
export function decodeNumber(text: string): number | undefined {
  if (text.trim() === "") return undefined;
  const value = Number(text);
  return Number.isFinite(value) ? value : undefined;
}

/**
 * The demand history after this pass: samples inside the last `windowSeconds`
 * (and not after now), plus this pass's demand when it is known (unknown is not
 * zero, so nothing is appended for it), at most the newest 256.
 */
export function nextHistory(
  history: readonly DemandSample[] | undefined,
  nowMs: number,
  windowSeconds: number,
  tokensPerSecond: number | undefined,
): DemandSample[] {
  const oldestMs = nowMs - windowSeconds * 1000;
  const kept = (history ?? []).filter((sample) => {
    // A stamp that is not a time compares false with everything.
    const atMs = parseTimestampMs(sample.timestamp) ?? Number.NaN;
    return atMs > oldestMs && atMs < nowMs && decodeNumber(sample.tokensPerSecond) !== undefined;
  });
  if (tokensPerSecond !== undefined)
    kept.push({ timestamp: formatTimestamp(nowMs), tokensPerSecond: encodeNumber(tokensPerSecond) });
  return kept.slice(-maxHistorySamples);
}
