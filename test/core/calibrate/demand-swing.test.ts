import { describe, expect, it } from "vitest";
import {
  demandSwing,
  fleetStep,
  keepFleetAboveSwing,
  minSwingWindows,
  precedingMinutes,
  stepReplacesFleet,
} from "../../../src/core/calibrate/demand-swing.js";
import { calibrationMinutes as minutes } from "../../support/calibration-minutes.js";

describe("demandSwing: the largest minute's demand over the mean of the three before it", () => {
  it("reads the largest ratio, the minute it ended and the windows it was measured over", () => {
    // Windows end at the 4th to 8th minutes: 1000/1000, 1000/1000, 1500/1000, 1000/1166.7, 1000/1166.7.
    const got = demandSwing(minutes([1000, 1000, 1000, 1000, 1000, 1500, 1000, 1000]));
    expect(got).toEqual({ largestRatio: 1.5, endSeconds: 60 + 5 * 60, windows: 5 });
  });

  it("reads demand as throughput per ready replica × ready replicas, whatever the fleet", () => {
    const steady = minutes([4800, 4800, 4800, 4800, 4800, 4800, 4800], 60, 4); // 1200 tok/s per replica on 4
    // The same 1200 tok/s per replica on 6 replicas: 7200 tok/s against 4800.
    const risen = { endSeconds: 480, readyReplicas: 6, tokensPerSecondPerReplica: 1200 };
    expect(demandSwing([...steady, risen])?.largestRatio).toBe(1.5);
  });

  it("starts a new window after a gap or at another run's minutes, never measuring across them", () => {
    const first = minutes([1000, 1000, 1000, 1000]);
    // A second run starts over at 60 s: its 3000 follows 1000s of the first run, but not adjacently.
    const second = minutes([3000, 3000, 3000, 3000, 3000, 3000, 3000]);
    const got = demandSwing([...first, ...second]);
    expect(got).toEqual({ largestRatio: 1, endSeconds: 60 + 3 * 60, windows: 1 + 4 });
    // After a gap the 5000 starts a window of its own: never compared with the 1000s before the gap.
    const gap = [...minutes([1000, 1000, 1000]), ...minutes([5000, 1000, 1000, 1000, 1000, 1000, 1000, 1000], 600)];
    expect(demandSwing(gap)?.largestRatio).toBe(1);
  });

  it(`measures nothing from fewer than ${minSwingWindows} windows of ${precedingMinutes + 1} adjacent minutes`, () => {
    expect(demandSwing(minutes([1000, 1000, 1000, 2000, 1000, 1000, 1000]))).toBeUndefined();
    expect(demandSwing(minutes([1000, 1000, 1000, 2000, 1000, 1000, 1000, 1000]))?.largestRatio).toBe(2);
    expect(demandSwing([])).toBeUndefined();
  });

  it("rounds to three significant figures", () => {
    expect(demandSwing(minutes([900, 1000, 1100, 1234.5, 1000, 1000, 1000, 1000]))?.largestRatio).toBe(1.23);
  });
});

describe("fleetStep: the docs' step on the day before's swing", () => {
  it.each([
    ["a swing at the limit replaces the fleet", keepFleetAboveSwing, "replace"],
    ["a calm day replaces it", 1.2, "replace"],
    ["a swing just above the limit keeps it", 1.66, "keep the fleet"],
  ] as const)("%s", (_case, largestRatio, kind) => {
    expect(fleetStep({ largestRatio, endSeconds: 600, windows: 12 }).kind).toBe(kind);
  });

  it("keeps the fleet where no swing was measured, and says why", () => {
    expect(stepReplacesFleet(undefined)).toBe(false);
    const step = fleetStep(undefined);
    expect(step).toEqual({ kind: "keep the fleet", why: expect.stringContaining("no demand swing measured") });
  });
});
