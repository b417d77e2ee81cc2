/**
 * Which scalers a sampling pass reads: a scaler is due once its
 * `sampling.intervalSeconds` has passed since it was last sampled, so no
 * scaler is sampled more often than its interval however often passes run.
 */

export interface ScheduledScaler {
  readonly key: string;
  readonly intervalSeconds: number;
}

/** Scalers due at `nowUnixMs` given when each was last sampled. Pure. */
export function dueScalers<T extends ScheduledScaler>(
  scalers: readonly T[],
  lastSampledUnixMs: ReadonlyMap<string, number>,
  nowUnixMs: number,
): T[] {
  return scalers.filter((s) => {
    const last = lastSampledUnixMs.get(s.key);
    return last === undefined || nowUnixMs - last >= s.intervalSeconds * 1000;
  });
}

/** The earliest time any of the scalers becomes due (for a loop's next wake-up). */
export function nextDueUnixMs(
  scalers: readonly ScheduledScaler[],
  lastSampledUnixMs: ReadonlyMap<string, number>,
): number | undefined {
  let next: number | undefined;
  for (const s of scalers) {
    const last = lastSampledUnixMs.get(s.key);
    const due = last === undefined ? -Infinity : last + s.intervalSeconds * 1000;
    if (next === undefined || due < next) next = due;
  }
  return next;
}
