import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  forecastTrend,
  initialTrendState,
  predictTrend,
  updateTrend,
  type NoiseModel,
  type TrendFilterState,
} from "../../../src/core/algorithms/kalman.js";

const noise: NoiseModel = { qLevel: 1, qTrend: 0.1, measurementNoise: 10 };

type M = [[number, number], [number, number]];
const mul = (a: M, b: M): M => [
  [a[0][0] * b[0][0] + a[0][1] * b[1][0], a[0][0] * b[0][1] + a[0][1] * b[1][1]],
  [a[1][0] * b[0][0] + a[1][1] * b[1][0], a[1][0] * b[0][1] + a[1][1] * b[1][1]],
];
const add = (a: M, b: M): M => [
  [a[0][0] + b[0][0], a[0][1] + b[0][1]],
  [a[1][0] + b[1][0], a[1][1] + b[1][1]],
];
const transpose = (a: M): M => [
  [a[0][0], a[1][0]],
  [a[0][1], a[1][1]],
];

/** The textbook matrix form, written independently of the closed forms in kalman.ts. */
function referenceStep(state: TrendFilterState, z: number, dt: number, n: NoiseModel): { x: [number, number]; p: M } {
  const f: M = [
    [1, dt],
    [0, 1],
  ];
  const q: M = [
    [n.qLevel * dt + (n.qTrend * dt ** 3) / 3, (n.qTrend * dt ** 2) / 2],
    [(n.qTrend * dt ** 2) / 2, n.qTrend * dt],
  ];
  const p0: M = [
    [state.p00, state.p01],
    [state.p10, state.p11],
  ];
  const pPrior = add(mul(mul(f, p0), transpose(f)), q);
  const xPrior: [number, number] = [state.level + dt * state.trend, state.trend];
  const s = pPrior[0][0] + n.measurementNoise;
  const k: [number, number] = [pPrior[0][0] / s, pPrior[1][0] / s];
  const y = z - xPrior[0];
  const iMinusKH: M = [
    [1 - k[0], 0],
    [-k[1], 1],
  ];
  return { x: [xPrior[0] + k[0] * y, xPrior[1] + k[1] * y], p: mul(iMinusKH, pPrior) };
}

describe("local-linear-trend Kalman filter", () => {
  it("starts at the first observation with no trend and P = diag(R, R)", () => {
    expect(initialTrendState(2400, 1000, noise)).toEqual({
      level: 2400,
      trend: 0,
      p00: 10,
      p01: 0,
      p10: 0,
      p11: 10,
      sampleCount: 1,
      updatedAtMs: 1000,
    });
  });

  it("adds the integrated process noise over Δt (the worked example: Δt = 15 s)", () => {
    const zero: TrendFilterState = {
      level: 100,
      trend: 2,
      p00: 0,
      p01: 0,
      p10: 0,
      p11: 0,
      sampleCount: 1,
      updatedAtMs: 0,
    };
    const prior = predictTrend(zero, 15, noise);
    expect(prior.level).toBe(130);
    expect(prior.p00).toBeCloseTo(127.5, 10);
    expect(prior.p01).toBeCloseTo(11.25, 10);
    expect(prior.p10).toBeCloseTo(11.25, 10);
    expect(prior.p11).toBeCloseTo(1.5, 10);
  });

  it("two 15 s predictions equal one 30 s prediction: elapsed time, not pass count, drives uncertainty", () => {
    const state: TrendFilterState = {
      level: 500,
      trend: 3,
      p00: 7,
      p01: 1.5,
      p10: 1.5,
      p11: 0.4,
      sampleCount: 5,
      updatedAtMs: 0,
    };
    const twice = predictTrend(predictTrend(state, 15, noise), 15, noise);
    const once = predictTrend(state, 30, noise);
    for (const key of ["level", "trend", "p00", "p01", "p10", "p11"] as const)
      expect(twice[key]).toBeCloseTo(once[key], 8);
  });

  it("matches the textbook matrix equations on random states and observations", () => {
    fc.assert(
      fc.property(
        fc.record({
          level: fc.double({ min: 0, max: 1e5, noNaN: true }),
          trend: fc.double({ min: -100, max: 100, noNaN: true }),
          p00: fc.double({ min: 0.01, max: 1e4, noNaN: true }),
          p11: fc.double({ min: 0.001, max: 100, noNaN: true }),
          correlation: fc.double({ min: -0.9, max: 0.9, noNaN: true }),
          z: fc.double({ min: 0, max: 1e5, noNaN: true }),
          dt: fc.double({ min: 1, max: 600, noNaN: true }),
        }),
        ({ level, trend, p00, p11, correlation, z, dt }) => {
          const p01 = correlation * Math.sqrt(p00 * p11);
          const state: TrendFilterState = { level, trend, p00, p01, p10: p01, p11, sampleCount: 3, updatedAtMs: 0 };
          const got = updateTrend(state, z, dt * 1000, noise);
          const want = referenceStep(state, z, dt, noise);
          const close = (a: number, b: number) => Math.abs(a - b) <= 1e-7 * Math.max(1, Math.abs(b));
          expect(close(got.level, want.x[0]) && close(got.trend, want.x[1])).toBe(true);
          expect(
            close(got.p00, want.p[0][0]) &&
              close(got.p01, want.p[0][1]) &&
              close(got.p10, want.p[1][0]) &&
              close(got.p11, want.p[1][1]),
          ).toBe(true);
          expect(got.sampleCount).toBe(4);
          expect(got.updatedAtMs).toBe(dt * 1000);
        },
      ),
    );
  });

  it("keeps the covariance symmetric and positive definite over long noisy runs", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.double({ min: 0, max: 1e4, noNaN: true }), fc.integer({ min: 1, max: 300 })), {
          minLength: 1,
          maxLength: 200,
        }),
        (steps) => {
          let state = initialTrendState(1000, 0, noise);
          let atMs = 0;
          for (const [z, dtSeconds] of steps) {
            atMs += dtSeconds * 1000;
            state = updateTrend(state, z, atMs, noise);
          }
          expect(state.p01).toBe(state.p10);
          expect(state.p00).toBeGreaterThan(0);
          expect(state.p00 * state.p11 - state.p01 * state.p10).toBeGreaterThan(0);
        },
      ),
    );
  });

  it("ignores a pass at or before the last update", () => {
    const state = updateTrend(initialTrendState(1000, 0, noise), 1100, 15_000, noise);
    expect(updateTrend(state, 99999, 15_000, noise)).toBe(state);
    expect(updateTrend(state, 99999, 10_000, noise)).toBe(state);
  });

  it("forecasts level + trend × horizon", () => {
    const state: TrendFilterState = {
      level: 2400,
      trend: 10,
      p00: 1,
      p01: 0,
      p10: 0,
      p11: 1,
      sampleCount: 6,
      updatedAtMs: 0,
    };
    expect(forecastTrend(state, 300)).toBe(5400);
  });
});
