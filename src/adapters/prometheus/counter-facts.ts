/**
 * One series that carries what a pod's `resets()` parts carry, one part per
 * counter (the `roles` plan's counter family; docs/prometheus-signals.md,
 * "Cost"): the resets of all its counters summed, and which counters have a
 * sample in the window.
 *
 * Counter `i` of an engine's list (`resetCounters`) adds
 * `resets × 2^n + 2^i` to the pod's value, where `n` is the list's length, so
 * the value is `2^n × (resets of all counters) + (one bit per counter with a
 * sample)`. A counter has at most one term per pod (each is summed by pod
 * before the terms are added), so the low `n` bits are exactly the counters
 * whose own part would have answered, and the rest is the sum those parts'
 * values add up to. Every term is a whole number (`resets()` counts), so the
 * value is exact in a float64 while the resets stay below 2^(53 − n).
 */

/** What a pod's window holds of an engine's counters. */
export interface CounterFacts {
  /** The resets of every counter with a sample, summed. */
  readonly resets: number;
  /** The counters with a sample in the window, by name. */
  readonly present: readonly string[];
}

/** The weight of the counter at `index` of a list of `counters` counters: its presence bit, and the resets' factor. */
export function presenceBit(index: number): number {
  return 2 ** index;
}

export function resetsFactor(counters: readonly string[]): number {
  return 2 ** counters.length;
}

/** Reads a pod's value back; undefined for a value no sum of such terms gives (not whole, negative, too large). */
export function decodeCounterFacts(value: number, counters: readonly string[]): CounterFacts | undefined {
  if (!Number.isSafeInteger(value) || value < 0) return undefined;
  const factor = resetsFactor(counters);
  const bits = value % factor;
  const present = counters.filter((_, i) => Math.floor(bits / presenceBit(i)) % 2 === 1);
  // A counter's term always sets its bit: resets with no counter present cannot be a sum of terms.
  if (present.length === 0) return undefined;
  return { resets: (value - bits) / factor, present };
}
