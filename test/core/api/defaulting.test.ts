import { describe, expect, it } from "vitest";
import { defaultScaler, defaultScalerSpec } from "../../../src/core/api/defaulting.js";
import { baseScaler } from "./helpers.js";

const minimal = { targetRef: { name: "llm" }, roles: [{ name: "server", maxReplicas: 4 }] };

function defaulted(spec: unknown) {
  const result = defaultScalerSpec(spec);
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result.value;
}

describe("defaultScalerSpec", () => {
  it("stores every default of a minimal spec", () => {
    expect(defaulted(minimal)).toEqual({
      targetRef: { name: "llm" },
      mode: "Shadow",
      suspend: false,
      sampling: { intervalSeconds: 15, pendingTimeoutSeconds: 300 },
      roles: [{ name: "server", minReplicas: 1, maxReplicas: 4 }],
      algorithm: {
        type: "TokenThroughput",
        tokenThroughput: {
          stableWindowSeconds: 180,
          panicWindowSeconds: 60,
          panicThreshold: "2",
          ttftTargetMilliseconds: "500",
          itlTargetMilliseconds: "50",
        },
      },
      behavior: {
        scaleUp: { stabilizationWindowSeconds: 0, maxStepReplicas: 4, maxStepPercent: 100 },
        scaleDown: {
          stabilizationWindowSeconds: 300,
          cooldownAfterAbortSeconds: 300,
          decodePostScaleUpGraceSeconds: 120,
        },
      },
      rebalance: { policy: "Opposing" },
    });
  });

  it.each([
    [
      "a proportional block",
      { proportional: { metric: "QueueDepth", roleTargets: [{ name: "server", target: "8" }] } },
      "Proportional",
    ],
    ["a predictive block", { predictive: {} }, "Predictive"],
    ["a tokenThroughput block", { tokenThroughput: {} }, "TokenThroughput"],
    ["no block", {}, "TokenThroughput"],
  ])("infers the type from %s", (_, algorithm, type) => {
    expect(defaulted({ ...minimal, algorithm }).algorithm.type).toBe(type);
  });

  it("keeps an explicit type", () => {
    expect(defaulted({ ...minimal, algorithm: { type: "Predictive" } }).algorithm.type).toBe("Predictive");
  });

  it("stores defaults for zero where zero means default, and keeps zero where it is meaningful", () => {
    const spec = defaulted({
      ...minimal,
      behavior: {
        scaleUp: { stabilizationWindowSeconds: 0, maxStepReplicas: 0, maxStepPercent: 0 },
        scaleDown: {
          stabilizationWindowSeconds: 0,
          cooldownAfterAbortSeconds: 0,
          decodePostScaleUpGraceSeconds: 0,
          stepPolicy: { type: "Pods", value: 0 },
        },
      },
    });
    expect(spec.behavior).toEqual({
      scaleUp: { stabilizationWindowSeconds: 0, maxStepReplicas: 4, maxStepPercent: 100 },
      scaleDown: {
        stabilizationWindowSeconds: 300,
        cooldownAfterAbortSeconds: 300,
        decodePostScaleUpGraceSeconds: 120,
        stepPolicy: { type: "Pods", value: 0 },
      },
    });
  });

  it("replaces non-positive filter noises and fills the predictive block", () => {
    const spec = defaulted({
      ...minimal,
      algorithm: { predictive: { qLevel: "-1", qTrend: 0, measurementNoise: "0m", horizonSeconds: 120 } },
    });
    expect(spec.algorithm.predictive).toMatchObject({
      qLevel: "1",
      qTrend: "0.1",
      measurementNoise: "10",
      horizonSeconds: 120,
      minPoints: 6,
    });
    expect(spec.algorithm.predictive?.tokenThroughput).toMatchObject({
      stableWindowSeconds: 180,
      panicWindowSeconds: 60,
    });
  });

  it("stores quantities as written, integers as their decimal string", () => {
    const spec = defaulted({
      ...minimal,
      algorithm: { tokenThroughput: { serverTargetTokensPerSecond: 2000, panicThreshold: "1500m" } },
    });
    expect(spec.algorithm.tokenThroughput).toMatchObject({
      serverTargetTokensPerSecond: "2000",
      panicThreshold: "1500m",
      ttftTargetMilliseconds: "500",
    });
  });

  it("returns problems, not an exception, for invalid input", () => {
    expect(defaultScalerSpec({ roles: "none" })).toEqual({
      ok: false,
      problems: [
        { rule: "schema", path: "spec.targetRef", value: undefined, reason: "is required" },
        { rule: "schema", path: "spec.roles", value: "none", reason: "must be a list" },
      ],
    });
  });
});

describe("defaultScaler", () => {
  it("defaults the spec and keeps metadata and unknown top-level fields", () => {
    const result = defaultScaler({ ...baseScaler(), metadata: { name: "s", labels: { team: "a" } }, extra: true });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.value.metadata).toEqual({ name: "s", labels: { team: "a" } });
    expect((result.value as Record<string, unknown>).extra).toBe(true);
    expect(result.value.spec.mode).toBe("Shadow");
  });

  it("requires apiVersion and kind of the scaler", () => {
    const result = defaultScaler({ ...baseScaler(), kind: "ModelDeployment" });
    expect(result.ok ? [] : result.problems.map((p) => p.path)).toEqual(["kind"]);
  });
});
