/**
 * PromQL's range functions and aggregations over raw float samples, as
 * Prometheus 3.5 computes them (promql/functions.go and engine.go of
 * v0.305.0), for the `raw-counters` plan, which reads a counter's samples and
 * computes here what the other plans ask Prometheus to compute.
 *
 * - A window of `w` seconds evaluated at `T` holds the samples with
 *   `T - w < t <= T` (Prometheus 3 cuts ranges left-open; Prometheus 2 also
 *   kept a sample exactly at `T - w`).
 * - `rate()` and `increase()` extrapolate as `extrapolatedRate` does,
 *   operation for operation, so a series' rate is the same double.
 * - `sum` adds with Kahan-Neumaier compensation in the order it is given;
 *   Prometheus adds in the order its storage lists the series (sorted by
 *   labels across blocks, by creation in the head alone), so a sum of three or
 *   more series may differ from Prometheus' in its last bits.
 */

/** One float sample: its time in milliseconds, as the TSDB keeps it. */
export interface FloatSample {
  readonly tMs: number;
  readonly value: number;
}

/**
 * The samples of a window of `windowSeconds` ending at `endMs`, out of a series' samples in time order read
 * over a window at least as long and ending at the same time.
 */
export function windowOf(
  samples: readonly FloatSample[],
  endMs: number,
  windowSeconds: number,
): readonly FloatSample[] {
  const startMs = endMs - windowSeconds * 1000;
  let first = 0;
  while (first < samples.length && (samples[first]?.tMs ?? Infinity) <= startMs) first++;
  let last = samples.length;
  while (last > first && (samples[last - 1]?.tMs ?? -Infinity) > endMs) last--;
  // The longest window is usually the whole read: the same samples, not a copy.
  return first === 0 && last === samples.length ? samples : samples.slice(first, last);
}

/**
 * `rate(x[w])` (or, with `perSecond: false`, `increase(x[w])`) of one counter's samples in the window ending at
 * `endMs`; undefined where Prometheus gives no value (fewer than two samples).
 */
export function extrapolatedRate(
  samples: readonly FloatSample[],
  endMs: number,
  windowSeconds: number,
  perSecond = true,
): number | undefined {
  const n = samples.length;
  const first = samples[0];
  const last = samples[n - 1];
  if (n < 2 || first === undefined || last === undefined) return undefined;
  const rangeStartMs = endMs - windowSeconds * 1000;
  let result = last.value - first.value;
  // A drop is a counter reset: the value before it was all counted.
  let prev = first.value;
  for (let i = 1; i < n; i++) {
    const v = (samples[i] as FloatSample).value;
    if (v < prev) result += prev;
    prev = v;
  }
  let durationToStart = (first.tMs - rangeStartMs) / 1000;
  let durationToEnd = (endMs - last.tMs) / 1000;
  const sampledInterval = (last.tMs - first.tMs) / 1000;
  const averageDurationBetweenSamples = sampledInterval / (n - 1);
  // Samples near a bound are extrapolated to it; farther than 1.1 average intervals, by half an interval only.
  const extrapolationThreshold = averageDurationBetweenSamples * 1.1;
  let extrapolateToInterval = sampledInterval;
  if (durationToStart >= extrapolationThreshold) durationToStart = averageDurationBetweenSamples / 2;
  if (result > 0 && first.value >= 0) {
    // A counter is never negative: not extrapolated back past the time it would have been zero.
    const durationToZero = sampledInterval * (first.value / result);
    if (durationToZero < durationToStart) durationToStart = durationToZero;
  }
  extrapolateToInterval += durationToStart;
  if (durationToEnd >= extrapolationThreshold) durationToEnd = averageDurationBetweenSamples / 2;
  extrapolateToInterval += durationToEnd;
  let factor = extrapolateToInterval / sampledInterval;
  if (perSecond) factor /= windowSeconds;
  return result * factor;
}

/** `resets(x[w])` of one series' float samples: the drops; undefined for no sample. */
export function resets(samples: readonly FloatSample[]): number | undefined {
  const first = samples[0];
  if (first === undefined) return undefined;
  let count = 0;
  let prev = first.value;
  for (let i = 1; i < samples.length; i++) {
    const v = (samples[i] as FloatSample).value;
    if (v < prev) count++;
    prev = v;
  }
  return count;
}

/** A group's `sum`: the first value as it is, the next ones added with Kahan-Neumaier compensation. */
export class KahanSum {
  private sum = 0;
  private c = 0;
  private seen = false;

  add(value: number): void {
    if (!this.seen) {
      this.sum = value;
      this.seen = true;
      return;
    }
    const t = this.sum + value;
    if (!Number.isFinite(t) && !Number.isNaN(t)) this.c = 0;
    else if (Math.abs(this.sum) >= Math.abs(value)) this.c += this.sum - t + value;
    else this.c += value - t + this.sum;
    this.sum = t;
  }

  get value(): number {
    return this.sum + this.c;
  }
}

/** A group's `max` (`min` with `"min"`): the first value, then any larger (smaller) one, and any after a NaN. */
export function extreme(current: number | undefined, value: number, which: "max" | "min"): number {
  if (current === undefined || Number.isNaN(current)) return value;
  return (which === "max" ? current < value : current > value) ? value : current;
}
