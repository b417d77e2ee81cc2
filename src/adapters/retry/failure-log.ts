/**
 * What a retried operation says while it keeps failing: one line when it
 * starts, one when it recovers. The wait between retries is `backoff.ts`'s.
 */
import type { Logger } from "../telemetry/logger.js";

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
