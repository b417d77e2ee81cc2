/**
 * The floors by the hour `calibrate --hourly-floors-from` writes (`spec.roles[].floorReplicasByUtcHour`, applied
 * by `src/core/planner/hourly-floor.ts`): at each UTC hour h, the replicas the role's per-replica target gives the
 * busiest minute of the day before in [h − 30 min, h + 1 h + 30 min), at least 1 and at most `maxReplicas`. The
 * margin covers a rise that comes half an hour earlier or later than yesterday's (docs/quality.md, thirty-first
 * run: the rule as that run judged it, untouched).
 *
 * An hour with no minute read (nothing served, or every minute partial) has no evidence: its floor is 1, the
 * floor that raises nothing, never a guess.
 * Example: target 5000 tok/s, busiest minute 12,600 tok/s between 13:30 and 15:30 → floors[14] = 3.
 */

const hoursPerDay = 24;
/** One day: the floors read the day before, and a minute's time of day is its seconds modulo this. */
export const secondsPerDay = 86_400;
/** How far either side of the hour yesterday's minutes are read. */
export const floorMarginSeconds = 1800;

export interface DemandMinute {
  /** Seconds at the minute's end: Unix seconds (UTC), or a simulator run's seconds with its second 0 at 00:00. */
  readonly endSeconds: number;
  /** The role's demand over the minute, in the tokens per second its per-replica target counts. */
  readonly tokensPerSecond: number;
}

/** The 24 floors read from the minutes of the day before, in replicas. */
export function hourlyFloors(
  minutes: readonly DemandMinute[],
  targetTokensPerSecondPerReplica: number,
  maxReplicas: number,
  marginSeconds = floorMarginSeconds,
): number[] {
  if (!(targetTokensPerSecondPerReplica > 0))
    throw new Error(
      `targetTokensPerSecondPerReplica: ${targetTokensPerSecondPerReplica} is not a number of tokens per second above 0`,
    );
  if (!(Number.isInteger(maxReplicas) && maxReplicas >= 1))
    throw new Error(`maxReplicas: ${maxReplicas} is not a whole number of replicas ≥ 1`);
  const busiest = new Array<number>(hoursPerDay).fill(0);
  for (const m of minutes) {
    // The minute's start, as a second of the (UTC) day; the minute counts for every hour whose span it starts in.
    const start = (((m.endSeconds - 60) % secondsPerDay) + secondsPerDay) % secondsPerDay;
    for (let h = 0; h < hoursPerDay; h++) {
      if (withinHour(start, h, marginSeconds)) busiest[h] = Math.max(busiest[h] ?? 0, m.tokensPerSecond);
    }
  }
  return busiest.map((tokens) =>
    Math.min(maxReplicas, Math.max(1, Math.ceil(tokens / targetTokensPerSecondPerReplica))),
  );
}

/** Whether a second of the day lies in [h − margin, h + 1 h + margin), the day's ends not wrapping round. */
function withinHour(secondOfDay: number, hour: number, marginSeconds: number): boolean {
  return secondOfDay >= hour * 3600 - marginSeconds && secondOfDay < (hour + 1) * 3600 + marginSeconds;
}
