/**
 * `calibrate --trace`'s check of its own figure on the slice it load-tested (docs/calibrate.md, "The
 * slice check"): the scaler with the figure written in replays the slice from `maxReplicas` ready
 * replicas, the fixed fleet a user's steps replace, and so does that fleet. A minute the scaler breaks
 * and the fleet keeps is the figure's doing: the figure is lowered by `sliceCheckStep` at a time, at
 * most `sliceCheckSteps` times, to the first that breaks none. A minute the fleet breaks too belongs to
 * the slice, not to the figure. Minutes are judged as calibrate judges its bands (`brokenTargets`).
 *
 * Why: the load test measures a load per replica, not the demand's swings. Where demand rises faster
 * than a replica starts, a figure every minute of the load test kept can still leave the scaler short
 * while its next replicas start; the slice shows it when its own swings do (issue 27, thirteenth run).
 */
import type { LatencyGuardReading } from "../../core/algorithms/ttft-reading.js";
import type { RoleKind } from "../../core/api/model-deployment.js";
import type { ScalerSpec } from "../../core/api/scaler.js";
import { brokenTargets, roundDownFigure, type LatencyTargets } from "../../core/calibrate/bands.js";
import { mdsPolicy } from "../../sim/quality/policies/mds.js";
import { staticPolicy } from "../../sim/quality/policies/static.js";
import { runPolicy, type RunOptions, type RunResult } from "../../sim/quality/run.js";
import type { Trace } from "../../sim/quality/traces.js";

/** Each lowered figure is this share of the one before (then rounded down to three significant figures). */
export const sliceCheckStep = 0.9;
/** At most this many lowered figures are tried: the last is about two thirds of calibrate's. */
export const sliceCheckSteps = 4;

export interface SliceCheckInput {
  readonly slice: Trace;
  readonly runOptions: RunOptions;
  readonly reading: LatencyGuardReading;
  readonly targets: LatencyTargets;
  readonly role: { readonly name: string; readonly kind: RoleKind };
  /** The role's `maxReplicas`: the fleet replaced, the replay's first fleet and the scaler's cap. */
  readonly fleetReplicas: number;
  /** calibrate's figure for the role, tokens per second per ready replica. */
  readonly figure: number;
  /** The scaler with `figure` written in, as `-o scaler` would write it. */
  readonly specWithFigure: (figure: number) => ScalerSpec;
}

export interface SliceCheckTry {
  readonly figure: number;
  /** The minutes (their end, seconds into the slice) the scaler broke and the fleet kept. */
  readonly brokenMinutesEndSeconds: readonly number[];
}

export interface SliceCheck {
  readonly fleetReplicas: number;
  /** The minutes the fleet of `fleetReplicas` broke itself: the slice's, not the figure's. */
  readonly fleetBrokenMinutesEndSeconds: readonly number[];
  readonly tries: readonly SliceCheckTry[];
  /** `held`: calibrate's figure broke no minute; `lowered`: a lower one broke none; `still short`: the last tried broke one too. */
  readonly outcome: "held" | "lowered" | "still short";
  /** The figure to write: calibrate's, the first lowered one that held, or the last tried. */
  readonly figure: number;
}

function brokenMinutes(run: RunResult, input: SliceCheckInput): number[] {
  const minutes = run.minutes.find((m) => m.role === input.role.name)?.minutes ?? [];
  return minutes
    .filter((m) => brokenTargets(input.role.kind, m, input.targets, input.reading).length > 0)
    .map((m) => m.endSeconds);
}

/** The figures tried in order: calibrate's, then each `sliceCheckStep` of the one before. */
export function sliceCheckFigures(figure: number): number[] {
  const figures = [figure];
  for (let i = 0; i < sliceCheckSteps; i++) figures.push(roundDownFigure((figures.at(-1) as number) * sliceCheckStep));
  return figures;
}

export function checkOnSlice(input: SliceCheckInput): SliceCheck {
  const fleetRun = runPolicy(input.slice, staticPolicy(input.fleetReplicas, "slice check fleet"), input.runOptions);
  const fleetBroken = brokenMinutes(fleetRun, input);
  const tries: SliceCheckTry[] = [];
  for (const figure of sliceCheckFigures(input.figure)) {
    const policy = mdsPolicy({
      spec: input.specWithFigure(figure),
      initialReplicas: input.fleetReplicas,
      latencyGuardReading: input.reading,
      label: "slice check",
    });
    const broken = brokenMinutes(runPolicy(input.slice, policy, input.runOptions), input).filter(
      (end) => !fleetBroken.includes(end),
    );
    tries.push({ figure, brokenMinutesEndSeconds: broken });
    if (broken.length === 0) break;
  }
  const last = tries.at(-1) as SliceCheckTry;
  const outcome = last.brokenMinutesEndSeconds.length > 0 ? "still short" : tries.length === 1 ? "held" : "lowered";
  return {
    fleetReplicas: input.fleetReplicas,
    fleetBrokenMinutesEndSeconds: fleetBroken,
    tries,
    outcome,
    figure: last.figure,
  };
}

const minuteList = (ends: readonly number[]): string => ends.map((end) => String(Math.round(end / 60))).join(", ");

/** The check in words: the table's line under the role, and the scaler file's header. */
export function describeSliceCheck(check: SliceCheck): string {
  const start = `the scaler replayed the slice from ${check.fleetReplicas} ready replicas, capped there`;
  const fleet =
    check.fleetBrokenMinutesEndSeconds.length === 0
      ? `the fixed fleet of ${check.fleetReplicas} kept every minute`
      : `the fixed fleet of ${check.fleetReplicas} broke minute(s) ${minuteList(check.fleetBrokenMinutesEndSeconds)} itself`;
  const tried = check.tries
    .map((t) =>
      t.brokenMinutesEndSeconds.length === 0
        ? `${t.figure} broke none`
        : `${t.figure} broke minute(s) ${minuteList(t.brokenMinutesEndSeconds)}`,
    )
    .join("; ");
  const verdict =
    check.outcome === "held"
      ? "the figure stands"
      : check.outcome === "lowered"
        ? `the figure is lowered to ${check.figure}`
        : `even ${check.figure} broke a minute the fleet kept: the demand swings faster than replicas start; keep the fixed fleet (minReplicas at its size) or expect misses`;
  return `slice check: ${start}; ${fleet}; ${tried}: ${verdict}`;
}
