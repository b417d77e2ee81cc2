/**
 * Yesterday's demand by the minute as a trace gives it, for the floors by the hour (`hourlyFloors` in
 * `src/core/calibrate/hourly-floors.ts`, the rule `calibrate --hourly-floors-from` writes) where a benchmark reads
 * them from the day before's trace instead of a run of it (`bench:hourly-floor`).
 *
 * Each request's prompt and output tokens count in the minute it arrived, over the trace's first 24 hours (its
 * second 0 is 00:00). Example: 600 requests of 50 tokens arriving in 14:00–14:01 → that minute 500 tok/s.
 */
import type { DemandMinute } from "../../core/calibrate/hourly-floors.js";
import type { Trace } from "./traces.js";

const minutesPerDay = 24 * 60;

/** Tokens per second of each minute of the day the trace covers, as minutes ending at 60, 120, … seconds. */
export function arrivalMinutes(trace: Trace): DemandMinute[] {
  const tokens = new Array<number>(minutesPerDay).fill(0);
  for (const r of trace.requests) {
    const m = Math.floor(r.arrivalSeconds / 60);
    if (m >= 0 && m < tokens.length) tokens[m] = (tokens[m] ?? 0) + r.promptTokens + r.outputTokens;
  }
  return tokens.map((t, m) => ({ endSeconds: (m + 1) * 60, tokensPerSecond: t / 60 }));
}
