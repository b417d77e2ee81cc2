/**
 * A floor by the hour of the day, read from the day before (docs/quality.md, "Two leads measured after the
 * thirtieth run"): a measurement for `bench:hourly-floor`, not a rule of the product. Over whole days the
 * capped scaler loses the SLO in the rises, when the replicas a rise needs are still starting; a floor kept
 * through the hours whose busiest minute yesterday asked for them has them ready.
 *
 * At each hour h of the day (the trace's second 0 is 00:00), the floor is the replicas the per-replica target
 * gives the busiest minute of yesterday's trace in [h − margin, h + 1 h + margin), counting each request's
 * prompt and output tokens in the minute it arrived, at most `maxReplicas`.
 * Example: target 5000 tok/s, busiest minute 12,600 tok/s around hour 14 → floor[14] = 3.
 */
import type { Trace } from "./traces.js";

const hoursPerDay = 24;
/** How far either side of the hour yesterday's minutes are read: a rise that came early or late by this much is still covered. */
export const defaultFloorMarginSeconds = 1800;

/** Tokens per second of each minute of the day the trace covers (its first 24 hours). */
export function tokensPerSecondByMinute(trace: Trace): number[] {
  const minutes = new Array<number>(hoursPerDay * 60).fill(0);
  for (const r of trace.requests) {
    const m = Math.floor(r.arrivalSeconds / 60);
    if (m >= 0 && m < minutes.length) minutes[m] = (minutes[m] ?? 0) + r.promptTokens + r.outputTokens;
  }
  return minutes.map((tokens) => tokens / 60);
}

/** The 24 floors of a day read from `yesterday`, in replicas, each at least 1 and at most `maxReplicas`. */
export function hourlyFloors(
  yesterday: Trace,
  tokensPerSecondPerReplica: number,
  maxReplicas: number,
  marginSeconds = defaultFloorMarginSeconds,
): number[] {
  if (!(tokensPerSecondPerReplica > 0))
    throw new Error(`tokensPerSecondPerReplica: ${tokensPerSecondPerReplica} is not a positive number`);
  const demand = tokensPerSecondByMinute(yesterday);
  const margin = Math.round(marginSeconds / 60);
  return Array.from({ length: hoursPerDay }, (_, h) => {
    const from = Math.max(0, h * 60 - margin);
    const to = Math.min(demand.length, (h + 1) * 60 + margin);
    const busiest = Math.max(0, ...demand.slice(from, to));
    return Math.min(maxReplicas, Math.max(1, Math.ceil(busiest / tokensPerSecondPerReplica)));
  });
}

/** The floor of the hour `secondOfDay` seconds after 00:00 falls in, the next days' hours read as the same day's. */
export function floorAtSecondOfDay(floors: readonly number[], secondOfDay: number): number {
  return floors[Math.floor(secondOfDay / 3600) % hoursPerDay] ?? 1;
}
