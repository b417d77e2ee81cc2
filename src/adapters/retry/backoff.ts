/**
 * How long to wait before retrying something that keeps failing (when to say
 * so is `failure-log.ts`'s). Pure: the failure count and the random draw are
 * passed in, so tests pin them.
 */
export interface BackoffPolicy {
  /** Wait after the first failure, before jitter. */
  readonly initialMs: number;
  /** Cap of the doubling, before jitter. */
  readonly maxMs: number;
}

/**
 * Doubles per consecutive failure up to the cap, then draws uniformly from the
 * upper half: replicas that failed together do not retry together, and the
 * wait never drops below half the step. `random` is in [0, 1).
 */
export function backoffDelayMs(consecutiveFailures: number, random: number, policy: BackoffPolicy): number {
  const exponent = Math.max(0, Math.min(consecutiveFailures - 1, 30));
  const stepMs = Math.min(policy.maxMs, policy.initialMs * 2 ** exponent);
  const draw = Math.min(Math.max(random, 0), 1);
  return Math.round(stepMs / 2 + (draw * stepMs) / 2);
}
