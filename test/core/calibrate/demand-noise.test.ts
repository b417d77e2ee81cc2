import { describe, expect, it } from "vitest";
import { demandNoise, minAdjacentPairs } from "../../../src/core/calibrate/demand-noise.js";
import { calibrationMinutes as minutes } from "../../support/calibration-minutes.js";

describe("demandNoise: the variance of one minute's demand reading, from adjacent minutes", () => {
  it("is half the mean squared difference of adjacent demands (the docs' example)", () => {
    const got = demandNoise(minutes([1000, 1100, 1000, 1100, 1000, 1100]));
    expect(got).toEqual({ varianceTokensPerSecondSquared: 5000, pairs: 5 });
  });

  it("reads demand as throughput per replica × ready replicas, whatever the fleet", () => {
    const mixed = minutes([1000, 1100, 1000, 1100, 1000, 1100]).map((m, i) => ({
      ...m,
      readyReplicas: i + 1,
      tokensPerSecondPerReplica: (m.tokensPerSecondPerReplica * 2) / (i + 1),
    }));
    expect(demandNoise(mixed)?.varianceTokensPerSecondSquared).toBe(5000);
  });

  it("pairs only minutes one minute apart: a second run starting over, or a gap, is no pair", () => {
    const twoRuns = [...minutes([1000, 1100, 1000, 1100]), ...minutes([5000, 5100, 5000, 5100])];
    // Three pairs in each run; the jump from the first run's last minute to the second's first is not one.
    expect(demandNoise(twoRuns)).toEqual({ varianceTokensPerSecondSquared: 5000, pairs: 6 });
    const gap = [...minutes([1000, 1100, 1000]), ...minutes([9000, 9100, 9000, 9100], 360)];
    expect(demandNoise(gap)?.pairs).toBe(5);
  });

  it(`measures nothing from fewer than ${minAdjacentPairs} adjacent pairs`, () => {
    expect(demandNoise(minutes([1000, 1100, 1000, 1100, 1000]))).toBeUndefined();
    expect(demandNoise([])).toBeUndefined();
  });

  it("rounds to three significant figures", () => {
    expect(demandNoise(minutes([0, 123.4, 0, 123.4, 0, 123.4]))?.varianceTokensPerSecondSquared).toBe(7610);
  });
});
