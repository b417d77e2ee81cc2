import { describe, expect, it } from "vitest";
import {
  extrapolatedRate,
  extreme,
  KahanSum,
  resets,
  windowOf,
  type FloatSample,
} from "../../../src/adapters/prometheus/promql-window.js";

/** Samples at these seconds with these values. */
const at = (points: readonly (readonly [number, number])[]): FloatSample[] =>
  points.map(([s, value]) => ({ tMs: s * 1000, value }));

describe("PromQL's window functions over raw samples", () => {
  it("cuts a window left-open, as Prometheus 3 does: a sample at T - w is out, one at T in", () => {
    const samples = at([
      [40, 1],
      [40.001, 2],
      [100, 3],
      [100.001, 4],
    ]);
    expect(windowOf(samples, 100_000, 60).map((s) => s.value)).toEqual([2, 3]);
  });

  it("extrapolates a rate to both bounds when the samples are near them", () => {
    // Every 15 s from 45 s to 90 s, the window (40 s, 100 s]: 5 s and 10 s to the bounds, under 1.1 intervals.
    const samples = at([
      [45, 100],
      [60, 115],
      [75, 130],
      [90, 145],
    ]);
    expect(extrapolatedRate(samples, 100_000, 60, false)).toBeCloseTo(60, 12);
    expect(extrapolatedRate(samples, 100_000, 60)).toBeCloseTo(1, 12);
  });

  it("adds the value before a drop (a counter reset)", () => {
    const samples = at([
      [45, 100],
      [60, 115],
      [75, 5],
      [90, 20],
    ]);
    // 20 - 100 + 115 = 35 over 45 s, extrapolated to 60 s.
    expect(extrapolatedRate(samples, 100_000, 60, false)).toBeCloseTo((35 * 60) / 45, 12);
  });

  it("extrapolates back no further than the time the counter would have been zero", () => {
    const samples = at([
      [45, 0.5],
      [60, 15.5],
      [75, 30.5],
      [90, 45.5],
    ]);
    // Zero 0.5 s before the first sample, nearer than the window's start (5 s): 45 + 0.5 + 10.
    expect(extrapolatedRate(samples, 100_000, 60, false)).toBeCloseTo(55.5, 12);
  });

  it("extrapolates by half an interval where the series starts well inside the window", () => {
    const samples = at([
      [70, 10],
      [85, 25],
      [100, 40],
    ]);
    // 30 s to the start is over 1.1 intervals: 7.5 s instead; none to the end.
    expect(extrapolatedRate(samples, 100_000, 60, false)).toBeCloseTo(37.5, 12);
  });

  it("gives no rate for fewer than two samples", () => {
    expect(extrapolatedRate(at([[90, 5]]), 100_000, 60)).toBeUndefined();
    expect(extrapolatedRate([], 100_000, 60)).toBeUndefined();
  });

  it("counts the drops as resets, none for one sample and no value for none", () => {
    expect(
      resets(
        at([
          [1, 5],
          [2, 3],
          [3, 4],
          [4, 1],
        ]),
      ),
    ).toBe(2);
    expect(resets(at([[1, 7]]))).toBe(0);
    expect(resets([])).toBeUndefined();
  });

  it("sums with compensation: what plain addition loses, Kahan-Neumaier keeps", () => {
    const sum = new KahanSum();
    for (const v of [1e16, 1, -1e16]) sum.add(v);
    expect(1e16 + 1 - 1e16).toBe(0);
    expect(sum.value).toBe(1);
    const one = new KahanSum();
    one.add(0.1);
    expect(one.value).toBe(0.1);
  });

  it("keeps the max or min as the aggregation does, a NaN replaced by the next value", () => {
    expect(extreme(extreme(undefined, NaN, "max"), 3, "max")).toBe(3);
    expect(extreme(extreme(undefined, 2, "max"), 5, "max")).toBe(5);
    expect(extreme(extreme(undefined, 2, "min"), 5, "min")).toBe(2);
  });
});
