/**
 * A raw read's window kept from pass to pass (`raw-counters` plan): the first pass reads the whole window, each
 * later one only the samples since the last pass, and an overlap before it, merged into what was kept.
 *
 * Why it is exact: the pass at `T` after one at `T0` reads `(T - r, T]` with `r ≥ T - T0 + overlap`; the kept
 * samples of `(T - w, T - r]` were all read at `T0` (that read held `(T0 - w, T0]`, and `T - r ≤ T0 - overlap`).
 * A scrape is stamped when it starts and stored when it ends, so a sample stored after the read at `T0` but
 * stamped more than the overlap before it would be missed until it leaves the window: the overlap is longer than
 * any scrape may take (Prometheus' scrape timeout is at most its interval). Samples the store takes in later
 * (remote write, backfill, out-of-order ingestion) are not seen until a whole read.
 *
 * A read is whole when nothing was kept for the same selector, when the pass is not after the last one, or
 * when the window has passed since it; each distinct selector (a pass over another set of scalers) keeps its
 * own window, and one not read for a whole window is let go.
 */
import type { RawSeries } from "./client.js";
import type { FloatSample } from "./promql-window.js";

/** What to read: the selector (braces and all), evaluated at `evalMs`, for a window of `windowSeconds`. */
export interface RawWindowRead {
  readonly selector: string;
  readonly evalMs: number;
  readonly windowSeconds: number;
}

interface Kept {
  readonly evalMs: number;
  readonly windowSeconds: number;
  /** By the series' labels, its metric name included. */
  readonly series: Map<string, { readonly name: string; readonly labels: RawSeries["labels"]; samples: FloatSample[] }>;
}

export class RawWindows {
  private readonly kept = new Map<string, Kept>();

  constructor(private readonly overlapSeconds: number) {}

  /** The range to read for this pass, in whole seconds: the window, or what is new since the last pass. */
  rangeSeconds({ selector, evalMs, windowSeconds }: RawWindowRead): number {
    const kept = this.kept.get(selector);
    if (kept === undefined || kept.windowSeconds !== windowSeconds || evalMs <= kept.evalMs) return windowSeconds;
    return Math.min(windowSeconds, Math.ceil((evalMs - kept.evalMs) / 1000) + this.overlapSeconds);
  }

  /**
   * The window's series at `evalMs`: the read of `rangeSeconds` (as `rangeSeconds` said) merged into what was
   * kept, which becomes what is kept.
   */
  merge(at: RawWindowRead, rangeSeconds: number, read: readonly RawSeries[]): RawSeries[] {
    const { selector, evalMs, windowSeconds } = at;
    for (const [other, kept] of this.kept)
      if (evalMs - kept.evalMs >= kept.windowSeconds * 1000) this.kept.delete(other);
    const previous = this.kept.get(selector);
    const whole = rangeSeconds >= windowSeconds;
    const series: Kept["series"] = new Map();
    const cutMs = evalMs - rangeSeconds * 1000;
    if (!whole) {
      // Only a read reaching the overlap behind the last pass can be merged with what it kept.
      if (previous === undefined || previous.evalMs >= evalMs || cutMs > previous.evalMs - this.overlapSeconds * 1000) {
        this.kept.delete(selector);
        throw new Error(
          `raw read of ${rangeSeconds}s at ${evalMs} ms does not reach ${this.overlapSeconds}s behind the last pass read (${previous?.evalMs ?? "none"}): read whole next time`,
        );
      }
      // Kept: the samples of the window older than the read's range; the read has the rest.
      const startMs = evalMs - windowSeconds * 1000;
      for (const [key, s] of previous.series) {
        const samples = s.samples.filter((p) => p.tMs > startMs && p.tMs <= cutMs);
        if (samples.length > 0) series.set(key, { name: s.name, labels: s.labels, samples });
      }
    }
    for (const s of read) {
      const key = seriesKey(s);
      // Prometheus 2 keeps a sample exactly at the range's start, which the kept samples already hold.
      const samples = whole ? s.samples.slice() : s.samples.filter((p) => p.tMs > cutMs);
      const old = series.get(key);
      if (old !== undefined) old.samples.push(...samples);
      else if (samples.length > 0) series.set(key, { name: s.name, labels: s.labels, samples });
    }
    this.kept.set(selector, { evalMs, windowSeconds, series });
    return [...series.values()];
  }

  /** Forgets a selector's window: its next read is whole. */
  forget(selector: string): void {
    this.kept.delete(selector);
  }
}

/** A series' identity: its metric name and labels, in the order the answer gives them (sorted by name). */
function seriesKey(s: RawSeries): string {
  let key = s.name;
  for (const name in s.labels) key += `\u0000${name}\u0000${s.labels[name]}`;
  return key;
}
