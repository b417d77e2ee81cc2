/**
 * A measurement, not a rule of the product: how much a scaler could save by
 * spending the SLO's error budget (the 1 % of requests the goal lets miss)
 * instead of keeping every minute within its targets, as calibrate's figure
 * does. The per-replica target is multiplied by a factor that grows while
 * the requests settled so far have spent little of the budget, and returns to
 * 1 as soon as they have spent most of it.
 *
 * It reads each request's outcome against the benchmark's own SLO, which no
 * engine series gives a controller exactly: the figure it produces is an upper
 * bound on what a budget read from the engines' histograms could save
 * (docs/quality.md, "Amendments for spending the error budget", twelfth run).
 */
import type { RequestRecord } from "../cluster.js";
import { meetsItl, meetsTtft, type SloTargets } from "../run.js";

export interface ErrorBudgetOptions {
  readonly slo: SloTargets;
  readonly prefillTokensPerSecond: number;
  /** The share of requests the goal asks within the SLO (0.99). */
  readonly goal: number;
  /** The factor never exceeds this. */
  readonly maxFactor: number;
  /** Growth per pass while little of the budget is spent (multiplied). */
  readonly stepFactor: number;
  /** Below this share of the budget spent, the factor grows. */
  readonly growBelowSpent: number;
  /** At or above this share of the budget spent, the factor returns to 1. */
  readonly resetAtSpent: number;
  /** No change before this many requests have settled. */
  readonly minSettledRequests: number;
}

/** The twelfth run's law, fixed before the run (docs/quality.md). */
export const twelfthRunBudget: Omit<ErrorBudgetOptions, "slo" | "prefillTokensPerSecond" | "goal"> = {
  maxFactor: 1.1,
  stepFactor: 1.01,
  growBelowSpent: 0.25,
  resetAtSpent: 0.5,
  minSettledRequests: 1000,
};

export interface ErrorBudget {
  /** The factor for this pass, after reading the requests that ended since the last one (`records` in arrival order, growing). */
  factorAt(records: readonly RequestRecord[]): number;
  /** The factor's mean over passes, its largest value and the times it returned to 1. */
  notes(): string;
}

export function errorBudget(options: ErrorBudgetOptions): ErrorBudget {
  const budget = 1 - options.goal;
  let factor = 1;
  let seen = 0;
  let pending: RequestRecord[] = [];
  let settled = 0;
  let missed = 0;
  let passes = 0;
  let factorSum = 0;
  let largest = 1;
  let resets = 0;

  // A request settles when it ends: the fleet writes its first token with its end, so an unfinished one is
  // not yet known to be late.
  const settle = (r: RequestRecord): boolean => {
    if (r.endSeconds === undefined) return false;
    settled++;
    if (!meetsTtft(r, options.slo, options.prefillTokensPerSecond) || !meetsItl(r, options.slo)) missed++;
    return true;
  };

  return {
    factorAt(records) {
      for (; seen < records.length; seen++) pending.push(records[seen] as RequestRecord);
      pending = pending.filter((r) => !settle(r));
      if (settled >= options.minSettledRequests) {
        const spent = missed / settled / budget;
        if (spent >= options.resetAtSpent) {
          if (factor > 1) resets++;
          factor = 1;
        } else if (spent < options.growBelowSpent) factor = Math.min(options.maxFactor, factor * options.stepFactor);
      }
      passes++;
      factorSum += factor;
      largest = Math.max(largest, factor);
      return factor;
    },
    notes() {
      const mean = passes === 0 ? 1 : factorSum / passes;
      return `budget factor mean ${mean.toFixed(2)}, max ${largest.toFixed(2)}, ${resets} resets`;
    },
  };
}
