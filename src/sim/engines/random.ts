/**
 * A small seeded generator (mulberry32) so a simulated fleet replays the same
 * arrivals and lengths for the same seed.
 */
export class SeededRandom {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Uniform integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** Exponential with the given mean. */
  exponential(mean: number): number {
    return -Math.log(1 - this.next()) * mean;
  }
}

/** A token-length distribution. */
export type LengthDistribution =
  | { readonly kind: "fixed"; readonly tokens: number }
  | { readonly kind: "uniform"; readonly minTokens: number; readonly maxTokens: number };

export function drawLength(dist: LengthDistribution, rng: SeededRandom): number {
  switch (dist.kind) {
    case "fixed":
      return dist.tokens;
    case "uniform":
      return rng.int(dist.minTokens, dist.maxTokens);
  }
}
