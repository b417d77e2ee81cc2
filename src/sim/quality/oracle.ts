/**
 * The clairvoyant oracle (docs/quality.md, Definitions): per 60 s interval the
 * fluid replica need from the tokens that arrive in it and the next, times a
 * headroom h; replicas start exactly their cold-start draw before the interval
 * that needs them and retire (drain) at the start of the first interval that
 * does not. The oracle is the cheapest schedule reaching 99 % attainment among
 * the headroom family and the static fleets.
 */
import type { EngineCapacity } from "../engines/model.js";
import type { QualityFleet } from "./cluster.js";
import type { Policy, PolicyContext } from "./policy.js";
import type { Trace } from "./traces.js";

export const oracleIntervalSeconds = 60;

/** Fluid replicas per interval: max(prompt tokens / prefill capacity, output tokens / decode capacity). */
export function fluidNeed(trace: Trace, capacity: EngineCapacity, intervalSeconds = oracleIntervalSeconds): number[] {
  const count = Math.ceil(trace.spanSeconds / intervalSeconds);
  const prompt = new Array<number>(count).fill(0);
  const output = new Array<number>(count).fill(0);
  for (const r of trace.requests) {
    const i = Math.min(count - 1, Math.floor(r.arrivalSeconds / intervalSeconds));
    prompt[i] = (prompt[i] ?? 0) + r.promptTokens;
    output[i] = (output[i] ?? 0) + r.outputTokens;
  }
  return prompt.map((p, i) =>
    Math.max(
      p / (intervalSeconds * capacity.prefillTokensPerSecond),
      (output[i] ?? 0) / (intervalSeconds * capacity.decodeTokensPerSecond),
    ),
  );
}

/**
 * Ready replicas per interval for headroom h and rounding slack θ:
 * max(1, ceil(h · max(f_i, f_{i+1}) − θ)). θ > 0 lets an interval whose need
 * barely exceeds a whole replica round down, which spends the 1 % of
 * attainment the goal allows where it is cheapest.
 */
export function oracleSchedule(need: readonly number[], headroom: number, slack = 0): number[] {
  const raw = need.map((f, i) => Math.max(1, Math.ceil(headroom * Math.max(f, need[i + 1] ?? 0) - slack - 1e-9)));
  return keepThroughDips(raw);
}

/**
 * Intervals within which a retired replica would be started again are bridged:
 * keeping it costs less than a fresh cold start (60–180 s at the default).
 */
export const bridgeIntervals = 3;

export function keepThroughDips(schedule: readonly number[]): number[] {
  return schedule.map((n, i) => {
    const before = Math.max(0, ...schedule.slice(Math.max(0, i - bridgeIntervals), i));
    const after = Math.max(0, ...schedule.slice(i + 1, i + 1 + bridgeIntervals));
    return Math.max(n, Math.min(before, after));
  });
}

/** Intervals at the edge of a plateau: lowering one starts a replica later or retires it earlier. */
export function plateauEdges(schedule: readonly number[]): number[] {
  return schedule.flatMap((n, i) =>
    n > 1 && (n > (schedule[i - 1] ?? 0) || n > (schedule[i + 1] ?? Infinity)) ? [i] : [],
  );
}

/** Replays a ready-count schedule with clairvoyant starts. */
export function schedulePolicy(schedule: readonly number[], label: string, family = "oracle"): Policy {
  const first = schedule[0] ?? 1;
  return {
    name: label,
    family,
    intervalSeconds: oracleIntervalSeconds,
    initialReplicas: first,
    start(fleet: QualityFleet) {
      for (let i = 1; i < schedule.length; i++) {
        const grow = (schedule[i] ?? 0) - (schedule[i - 1] ?? 0);
        for (let k = 0; k < grow; k++) fleet.addScheduled(i * oracleIntervalSeconds);
      }
    },
    decide(ctx: PolicyContext) {
      const i = Math.round(ctx.nowSeconds / oracleIntervalSeconds);
      const shrink = (schedule[i - 1] ?? 0) - (schedule[i] ?? schedule[i - 1] ?? 0);
      for (let k = 0; k < shrink; k++) ctx.fleet.retireOne();
    },
  };
}
