/**
 * How long to wait before retrying something that keeps failing, and when to
 * say so. Pure: the failure count, the random draw and the time are passed in,
 * so tests pin them.
 */
import type { Logger } from "../telemetry/logger.js";

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

/**
 * Logs a retried operation once per change of state: a warning when it starts
 * failing, an info line when it works again (with how many attempts failed and
 * for how long), nothing on the retries between.
 */
export class FailureLog {
  private failures = 0;
  private sinceMs = 0;

  constructor(
    private readonly what: string,
    private readonly logger: Logger,
  ) {}

  /** Consecutive failures so far; 0 while it works. */
  get consecutiveFailures(): number {
    return this.failures;
  }

  /** Records a failure; returns the new count of consecutive failures. */
  failed(error: unknown, nowMs: number): number {
    this.failures += 1;
    if (this.failures === 1) {
      this.sinceMs = nowMs;
      this.logger.warn(`${this.what} failing; retrying with back-off, logged again when it recovers`, { error });
    }
    return this.failures;
  }

  /** Records a success; logs the recovery if it was failing. */
  succeeded(nowMs: number): void {
    if (this.failures === 0) return;
    this.logger.info(`${this.what} recovered`, { failedAttempts: this.failures, failingMs: nowMs - this.sinceMs });
    this.failures = 0;
  }
}
