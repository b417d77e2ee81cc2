/**
 * The figures the benchmark's calibrated rows are given come from the training
 * slice alone: the replay they are judged on is disjoint from it, and changing
 * that replay leaves the figures, and those the matrix runs its calibrated rows
 * with, equal. On the Azure conversation trace the
 * load test breaks the targets, so calibrate gives a figure.
 */
import { describe, expect, it } from "vitest";
import { defaultLatencyGuardReading } from "../../../src/core/algorithms/ttft-reading.js";
import { calibratedLabel, loadTestFilledVariant, runMatrix } from "../../../src/sim/quality/matrix.js";
import { replicaPresets, defaultPresetName } from "../../../src/sim/quality/presets.js";
import { loadTrace, overlay, type Trace } from "../../../src/sim/quality/traces.js";
import { staticPolicy } from "../../../src/sim/quality/policies/static.js";
import { runPolicy } from "../../../src/sim/quality/run.js";
import {
  calibrateOnTraining,
  fillFleets,
  splitTraining,
  trainingFleet,
  runLoadTest,
  trainingFleetAttainment,
  trainingSeconds,
  type CalibratedFigures,
} from "../../../src/sim/quality/user-figures.js";
import { tracesDir } from "./fixtures.js";

const capacity = replicaPresets[defaultPresetName].capacity;
// The training slice and ten minutes of replay after it keep the test short.
const conv = ((t: Trace): Trace => ({
  ...t,
  requests: t.requests.filter((r) => r.arrivalSeconds < trainingSeconds + 600),
  spanSeconds: trainingSeconds + 600,
}))(loadTrace("azure-conv", { tracesDir }));

/** The same trace with its replay after the training slice replaced: every request there doubled in prompt, three copies. */
function changedAfterTraining(trace: Trace): Trace {
  const before = trace.requests.filter((r) => r.arrivalSeconds < trainingSeconds);
  const after = trace.requests
    .filter((r) => r.arrivalSeconds >= trainingSeconds)
    .flatMap((r) =>
      [0, 0.1, 0.2].map((d) => ({ ...r, arrivalSeconds: r.arrivalSeconds + d, promptTokens: 2 * r.promptTokens })),
    );
  return { ...trace, requests: [...before, ...after].sort((a, b) => a.arrivalSeconds - b.arrivalSeconds) };
}

const figuresOf = (trace: Trace): CalibratedFigures =>
  calibrateOnTraining(splitTraining(trace).training, capacity, { seed: 1 }, defaultLatencyGuardReading);

describe("the benchmark's user figures", () => {
  it("splits the trace into a training slice and a replay that shares no request with it", () => {
    const { training, evaluated } = splitTraining(conv);
    expect(training.spanSeconds).toBe(trainingSeconds);
    expect(training.requests.every((r) => r.arrivalSeconds < trainingSeconds)).toBe(true);
    expect(evaluated.spanSeconds).toBe(conv.spanSeconds - trainingSeconds);
    expect(training.requests.length + evaluated.requests.length).toBe(conv.requests.length);
    // The replay is the rest of the trace, shifted to start at zero.
    const firstAfter = conv.requests.find((r) => r.arrivalSeconds >= trainingSeconds);
    expect(evaluated.requests[0]).toEqual({
      ...firstAfter,
      arrivalSeconds: (firstAfter?.arrivalSeconds ?? 0) - trainingSeconds,
    });
    expect(() => splitTraining({ ...conv, spanSeconds: trainingSeconds })).toThrow(/nothing from second 900 on/);
  });

  it("come from calibrate on the training slice, and a changed replay leaves them equal", () => {
    const figures = figuresOf(conv);
    expect(figures.calibration.answer.kind).toBe("calibrated");
    expect(figures.tokensPerSecondPerReplica).toBeGreaterThan(0);
    // Below what one replica pushes at full speed: the figure leaves headroom.
    expect(figures.tokensPerSecondPerReplica).toBeLessThan(
      capacity.prefillTokensPerSecond + capacity.decodeTokensPerSecond,
    );
    // The load test went down from a fleet that held the targets until one that broke them.
    expect(figures.loadTestReplicas.length).toBeGreaterThan(1);
    expect([...figures.loadTestReplicas].sort((a, b) => b - a)).toEqual(figures.loadTestReplicas);
    expect(figures.calibration.bands.some((b) => b.verdict === "broke")).toBe(true);
    // The SLO's targets: 1 s plus the training slice's p95 prompt at full prefill speed; 50 ms ITL.
    expect(figures.ttftTargetMilliseconds).toBeGreaterThan(1000);
    expect(figures.itlTargetMilliseconds).toBe(50);

    const changed = changedAfterTraining(conv);
    expect(splitTraining(changed).evaluated.requests.length).toBe(3 * splitTraining(conv).evaluated.requests.length);
    expect(figuresOf(changed)).toEqual(figures);
  }, 120_000);

  it("load-tests larger fleets first where even the first breaks the targets in its lowest band", () => {
    // A request a second, and each minute a burst of 30 prompts at once: twice the 60 s peak need is one
    // replica, on which every burst queues past half the TTFT target.
    const requests = [
      ...Array.from({ length: 900 }, (_, t) => ({ arrivalSeconds: t + 0.5, promptTokens: 500, outputTokens: 100 })),
      ...Array.from({ length: 15 * 30 }, (_, i) => ({
        arrivalSeconds: Math.floor(i / 30) * 60 + 30 + (i % 30) * 0.01,
        promptTokens: 1000,
        outputTokens: 100,
      })),
    ].sort((a, b) => a.arrivalSeconds - b.arrivalSeconds);
    const slice: Trace = { name: "bursts", requests, spanSeconds: 900, notes: [] };
    const test = runLoadTest(
      slice,
      capacity,
      { seed: 1, fleet: { capacity } },
      { ttftMilliseconds: 1500, itlMilliseconds: 50 },
      "queueing",
    );
    // One replica, then two, never held; three held, so the band below the bursts' breach is the figure.
    expect(test.loadTestReplicas).toEqual([1, 2, 3]);
    expect(test.calibration.answer.kind).toBe("calibrated");
  }, 120_000);

  it("fills at most three fleets between the last two sizes, evenly spaced, largest first", () => {
    expect(fillFleets(4, 2)).toEqual([3]);
    expect(fillFleets(2, 1)).toEqual([]);
    expect(fillFleets(6, 9)).toEqual([8, 7]);
    expect(fillFleets(60, 40)).toEqual([55, 50, 45]);
  });

  it("with fill, serves the fleets the last step passed over once there is an answer, and pools their minutes", () => {
    const slice = splitTraining(overlay(conv, 5, 1)).training;
    const args = [
      slice,
      capacity,
      { seed: 1, fleet: { capacity } },
      { ttftMilliseconds: 1500, itlMilliseconds: 50 },
      "queueing",
    ] as const;
    const plain = runLoadTest(...args);
    const filled = runLoadTest(...args, true);
    expect(plain.calibration.answer.kind).toBe("calibrated");
    const [before, last] = plain.loadTestReplicas.slice(-2) as [number, number];
    // The five copies need more than one replica's step, so there is a fleet between the last two.
    expect(fillFleets(before, last).length).toBeGreaterThan(0);
    expect(filled.loadTestReplicas).toEqual([...plain.loadTestReplicas, ...fillFleets(before, last)]);
    expect(filled.minutes.length).toBeGreaterThan(plain.minutes.length);
    expect(filled.minutes.slice(0, plain.minutes.length)).toEqual(plain.minutes);
  }, 120_000);

  it("size the training fleet as the smallest static fleet keeping 99 % of the training slice alone", () => {
    const { training } = splitTraining(conv);
    const options = { seed: 1, fleet: { capacity } };
    const n = trainingFleet(training, options);
    const attainment = (replicas: number): number =>
      runPolicy(training, staticPolicy(replicas), options).attainment.both;
    expect(attainment(n)).toBeGreaterThanOrEqual(trainingFleetAttainment);
    // The conversation slice needs more than one replica: one fewer breaks the SLO.
    expect(n).toBeGreaterThan(1);
    expect(attainment(n - 1)).toBeLessThan(trainingFleetAttainment);
    // The figures carry it, and the replay does not move it (the equality above covers the changed replay).
    expect(figuresOf(conv).trainingFleetReplicas).toBe(n);
  }, 120_000);

  it("are what the matrix's calibrated rows run with, whatever replay it judges them on", () => {
    const { training, evaluated } = splitTraining(conv);
    const figures = figuresOf(conv);
    for (const replay of [evaluated, splitTraining(changedAfterTraining(conv)).evaluated]) {
      const result = runMatrix(replay, { seed: 1, sweepPoints: 3, training });
      expect(result.calibrated).toEqual([figures]);
      // The "load test filled" rows' figures come from the same slice (fleets 2 and 1: nothing to fill here).
      expect(result.filled).toEqual([
        calibrateOnTraining(training, capacity, { seed: 1 }, defaultLatencyGuardReading, true),
      ]);
      expect(result.filled?.[0]?.loadTestReplicas).toEqual(figures.loadTestReplicas);
      expect(result.rows.map((r) => r.policy)).toEqual(
        expect.arrayContaining([
          calibratedLabel("TokenThroughput"),
          calibratedLabel("Predictive"),
          calibratedLabel("TokenThroughput").replace(/\)$/, "; capped at the training fleet)"),
          calibratedLabel("TokenThroughput").replace(/\)$/, `; ${loadTestFilledVariant})`),
        ]),
      );
    }
    // Without a training slice the matrix runs no calibrated row.
    const without = runMatrix(evaluated, { seed: 1, sweepPoints: 3 });
    expect(without.calibrated).toBeUndefined();
    expect(without.rows.some((r) => r.policy.includes("calibrated"))).toBe(false);
  }, 600_000);
});
