/**
 * How fast a role's demand rose, measured from calibrate's minutes: the largest ratio of one minute's demand
 * to the mean of the three minutes before it. TokenThroughput sizes a role on its stable window (180 s by the
 * specification's default), and a new replica takes a minute or more to start, so a minute carrying R × the
 * three before it is served by replicas sized for the three before it. On the ServeGen days the benchmark
 * replayed (docs/quality.md, eighteenth run; the swing of the trace's arrivals, which calibrate's minutes
 * follow where the fleet keeps up), every replay whose largest swing was at most 1.63 kept 99 % with the
 * scaler capped at the fleet it replaced, and most replays that swung 1.88 or more missed it; the swing of the
 * 15-minute slice calibrate reads did not tell the replay's. So it changes no figure: the
 * docs' steps read it over the same hours of the day before, served by the fleet being replaced, and keep that
 * fleet where it was above 1.65 (docs/calibrate.md, "The demand swing"; the nineteenth run).
 */
import { threeFigures } from "./demand-noise.js";
import { adjacentMinutes, minuteDemandTokensPerSecond, type CalibrationMinute } from "./minute.js";

/** The minutes a swing is measured against: the specification's default stable window, 180 s. */
export const precedingMinutes = 3;
/** Fewer windows of adjacent minutes than this measure nothing. */
export const minSwingWindows = 5;
/**
 * The docs' step for replacing a fixed fleet (docs/calibrate.md, "The demand swing"): keep the fleet where the same
 * hours of the day before, served by it, swung above this. Read from the 36 scales of the sixteenth to eighteenth
 * runs, where every capped replay at or below 1.63 kept 99 % and 13 of 18 above 1.65 missed; kept by the
 * nineteenth run on fresh days, and by the twentieth, which missed on one day whose day before swung less
 * (3 misses of 24 scales, against 10 always replacing; docs/quality.md). Where the step replaces the fleet, the
 * scaler is calibrated with headroom for a jump of this swing (`--swing-headroom`, swing-headroom.ts; the
 * twenty-fourth run).
 */
export const keepFleetAboveSwing = 1.65;

export interface DemandSwing {
  /** The largest ratio of a minute's demand to the mean of the `precedingMinutes` before it, three significant figures. */
  readonly largestRatio: number;
  /** The end of the minute it was measured at (Unix seconds, or simulated seconds for a simulator run). */
  readonly endSeconds: number;
  /** The windows of `precedingMinutes` + 1 adjacent minutes it was measured over. */
  readonly windows: number;
}

/**
 * The largest swing over every window of adjacent minutes, in the order given (a run, or a period from
 * Prometheus; minutes of another run, or after a skipped one, start a new window). Undefined below
 * `minSwingWindows` windows. calibrate skips minutes without traffic, so its windows always have demand before
 * the minute; a window without any is left out rather than read as an infinite rise.
 *
 * Example: demands 1000, 1000, 1000, 1500, 1000 tok/s a minute apart: two windows, 1500 ÷ 1000 = 1.5 and
 * 1000 ÷ 1166.7 = 0.857, so 1.5 (with at least `minSwingWindows` windows).
 */
export function demandSwing(minutes: readonly CalibrationMinute[]): DemandSwing | undefined {
  let windows = 0;
  let largest: { ratio: number; endSeconds: number } | undefined;
  let run = 1;
  for (let i = 1; i < minutes.length; i++) {
    const after = minutes[i] as CalibrationMinute;
    run = adjacentMinutes(minutes[i - 1] as CalibrationMinute, after) ? run + 1 : 1;
    if (run <= precedingMinutes) continue;
    const before = minutes.slice(i - precedingMinutes, i).map(minuteDemandTokensPerSecond);
    const meanBefore = before.reduce((total, demand) => total + demand, 0) / precedingMinutes;
    if (!(meanBefore > 0)) continue;
    windows++;
    const ratio = minuteDemandTokensPerSecond(after) / meanBefore;
    if (largest === undefined || ratio > largest.ratio) largest = { ratio, endSeconds: after.endSeconds };
  }
  if (windows < minSwingWindows || largest === undefined) return undefined;
  return { largestRatio: threeFigures(largest.ratio), endSeconds: largest.endSeconds, windows };
}

/**
 * The docs' step (docs/calibrate.md, "The demand swing"): whether it replaces the fleet, given the largest swing of
 * the same hours of the day before, served by that fleet. A swing not measured (undefined) is not a small one.
 */
export function stepReplacesFleet(largestRatio: number | undefined): boolean {
  return largestRatio !== undefined && largestRatio <= keepFleetAboveSwing;
}

/** What the docs' step does with a fleet, given the swing of the same hours of the day before, served by it. */
export type FleetStep =
  { readonly kind: "replace"; readonly why: string } | { readonly kind: "keep the fleet"; readonly why: string };

/**
 * The docs' step (docs/calibrate.md, "The demand swing"): replace the fleet with the scaler capped at its size
 * where the day before swung at most `keepFleetAboveSwing`; keep it where it swung more, and where no swing was
 * measured (too few adjacent minutes): a swing not measured is not a small one.
 *
 * Example: 1.4 → replace; 2.1 → keep the fleet; undefined → keep the fleet.
 */
export function fleetStep(swing: DemandSwing | undefined): FleetStep {
  if (swing === undefined)
    return {
      kind: "keep the fleet",
      why: `no demand swing measured (fewer than ${minSwingWindows} windows of ${precedingMinutes + 1} adjacent minutes)`,
    };
  return stepReplacesFleet(swing.largestRatio)
    ? { kind: "replace", why: `the demand swung at most ${swing.largestRatio} ×, at most ${keepFleetAboveSwing}` }
    : { kind: "keep the fleet", why: `the demand swung ${swing.largestRatio} ×, above ${keepFleetAboveSwing}` };
}
