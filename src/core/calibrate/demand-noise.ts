/**
 * The observation noise of a role's demand, measured from calibrate's minutes:
 * what Predictive's Kalman filter needs as `measurementNoise` (docs/calibrate.md,
 * "Predictive's measurement noise"). The specification's default (10, in
 * (tokens/s)²) says one demand reading is good to about 3 tokens/s, so the
 * filter follows every wobble of a 60 s rate and its trend, multiplied by a
 * 300 s horizon, forecasts swings that the scale-down window then holds. The
 * noise a demand series actually carries is measured instead, from minutes
 * next to each other in time: for two adjacent minutes of an unchanged demand,
 * half the mean square of their difference is the variance of one reading
 * (a real change between them adds to it, so the estimate errs towards a
 * smoother filter, which never goes below the TokenThroughput result).
 */
import { adjacentMinutes, minuteDemandTokensPerSecond, type CalibrationMinute } from "./minute.js";

/** Fewer adjacent pairs than this measure nothing. */
export const minAdjacentPairs = 5;

export interface DemandNoise {
  /** Variance of one minute's demand reading, (tokens/s)², three significant figures. */
  readonly varianceTokensPerSecondSquared: number;
  /** The adjacent pairs of minutes it comes from. */
  readonly pairs: number;
}

/** Three significant figures, to the nearest: how calibrate reports a measured demand figure (noise, swing). */
export function threeFigures(value: number): number {
  return Number(value.toPrecision(3));
}

/**
 * Half the mean squared difference of the demand of adjacent minutes, in the
 * order given (a run, or a period from Prometheus; minutes of another run start
 * over and are not adjacent to the last one). Undefined below `minAdjacentPairs`.
 *
 * Example: demands 1000, 1100, 1000, 1100, 1000, 1100 tok/s a minute apart: five
 * pairs each differing by 100, so ½ × 100² = 5000 (tokens/s)².
 */
export function demandNoise(minutes: readonly CalibrationMinute[]): DemandNoise | undefined {
  let pairs = 0;
  let sumOfSquares = 0;
  for (let i = 1; i < minutes.length; i++) {
    const before = minutes[i - 1] as CalibrationMinute;
    const after = minutes[i] as CalibrationMinute;
    if (!adjacentMinutes(before, after)) continue;
    const difference = minuteDemandTokensPerSecond(after) - minuteDemandTokensPerSecond(before);
    sumOfSquares += difference * difference;
    pairs++;
  }
  if (pairs < minAdjacentPairs) return undefined;
  return { varianceTokensPerSecondSquared: threeFigures(sumOfSquares / pairs / 2), pairs };
}
