/** The retry back-off, with the draw pinned. */
import { describe, expect, it } from "vitest";
import { backoffDelayMs } from "../../../src/adapters/retry/backoff.js";

const policy = { initialMs: 1_000, maxMs: 30_000 };

describe("backoffDelayMs", () => {
  it("doubles per consecutive failure up to the cap", () => {
    // The top of the jitter range is the step itself.
    const tops = [1, 2, 3, 4, 5, 6, 7, 50].map((n) => backoffDelayMs(n, 1, policy));
    expect(tops).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000]);
  });

  it("draws from the upper half of the step, so replicas failing together spread out", () => {
    expect(backoffDelayMs(3, 0, policy)).toBe(2_000);
    expect(backoffDelayMs(3, 0.5, policy)).toBe(3_000);
    expect(backoffDelayMs(3, 0.999, policy)).toBe(3_998);
    const draws = new Set([0.1, 0.3, 0.7, 0.9].map((r) => backoffDelayMs(4, r, policy)));
    expect(draws.size).toBe(4);
  });

  it("stays within [step/2, step] for any draw and any count", () => {
    for (const n of [0, 1, 2, 10, 1_000]) {
      for (const r of [-1, 0, 0.25, 0.75, 1, 2]) {
        const step = Math.min(policy.maxMs, policy.initialMs * 2 ** Math.max(0, Math.min(n - 1, 30)));
        const delay = backoffDelayMs(n, r, policy);
        expect(delay).toBeGreaterThanOrEqual(step / 2);
        expect(delay).toBeLessThanOrEqual(step);
      }
    }
  });
});
