/** Warnings that need the target: admitted either way, and `kubectl apply` says what the target makes of the spec. */
import { describe, expect, it } from "vitest";
import { checkBounds } from "../../../src/core/planner/bounds.js";
import { defaultScaler } from "../../../src/core/api/defaulting.js";
import { formatProblem } from "../../../src/core/api/problem.js";
import type { ScalerSpec } from "../../../src/core/api/scaler.js";
import { targetWarnings } from "../../../src/core/api/target-warnings.js";
import { validateScaler } from "../../../src/core/api/validation.js";
import { baseScaler, targetWith, type Json, type LooseSpec } from "./helpers.js";

/** One Server role `server` of target `llm`, TokenThroughput; `edit` changes the spec. */
function serverScaler(edit: (spec: LooseSpec) => void = () => undefined): Json {
  const spec: LooseSpec = {
    targetRef: { name: "llm" },
    roles: [{ name: "server", minReplicas: 2, maxReplicas: 8 }],
    algorithm: { type: "TokenThroughput", tokenThroughput: { serverTargetTokensPerSecond: "5000" } },
  };
  edit(spec);
  return { ...baseScaler(), spec };
}

const serverTarget = (replicas: number) => targetWith("llm", [["server", "Server", { replicas }]]);

function warningsOf(scaler: Json, target = serverTarget(4)) {
  const result = validateScaler(scaler, { target });
  expect(result.ok, JSON.stringify(result.ok ? [] : result.problems)).toBe(true);
  return result.warnings;
}

describe("target-bounds-current", () => {
  it("warns at minReplicas when the target runs fewer replicas, naming the count, the bounds and the conflict", () => {
    const warnings = warningsOf(serverScaler(), serverTarget(1));
    expect(warnings.map((w) => [w.rule, w.path, w.value])).toEqual([
      ["target-bounds-current", "spec.roles[0].minReplicas", 2],
    ]);
    const line = formatProblem(warnings[0] as (typeof warnings)[number]);
    expect(line).toContain("the 1 replicas role server runs now");
    expect(line).toContain("BoundsConflict");
    expect(line).toContain("[2, 8]");
  });

  it("warns at maxReplicas when the target runs more", () => {
    const warnings = warningsOf(serverScaler(), serverTarget(9));
    expect(warnings.map((w) => [w.rule, w.path, w.value])).toEqual([
      ["target-bounds-current", "spec.roles[0].maxReplicas", 8],
    ]);
  });

  it("says nothing at either bound or between them", () => {
    for (const replicas of [2, 5, 8]) expect(warningsOf(serverScaler(), serverTarget(replicas))).toEqual([]);
  });

  it("warns exactly where the planner's gate stops a pass with BoundsConflict", () => {
    for (const replicas of [0, 1, 2, 3, 8, 9, 20]) {
      const t = serverTarget(replicas);
      const defaulted = defaultScaler(serverScaler());
      if (!defaulted.ok) throw new Error("the scaler is valid");
      const gate = checkBounds(defaulted.value.spec as ScalerSpec, t.spec.roles);
      const warned = warningsOf(serverScaler(), t).some((w) => w.rule === "target-bounds-current");
      expect(warned, `${replicas} replicas`).toBe(!gate.ok);
    }
  });

  it("stays within the 256 ASCII characters Kubernetes shows", () => {
    const warnings = warningsOf(
      serverScaler(
        (s) => (s.roles[0] = { name: "a-rather-long-role-name-for-a-server", minReplicas: 100, maxReplicas: 1000 }),
      ),
      targetWith("llm", [["a-rather-long-role-name-for-a-server", "Server", { replicas: 1 }]]),
    );
    const line = formatProblem(warnings[0] as (typeof warnings)[number]);
    expect(line.length).toBeLessThanOrEqual(256);
    expect(/^[\x20-\x7e]*$/.test(line)).toBe(true);
  });
});

describe("target-queue-time-judged", () => {
  const prefillDecode = () =>
    targetWith("llm", [
      ["prefill", "Prefill", { replicas: 2 }],
      ["decode", "Decode", { replicas: 2 }],
    ]);
  const decodeOnly = () => targetWith("llm", [["decode", "Decode", { replicas: 2 }]]);
  /** A Decode role with a queue-time target, in TokenThroughput's block. */
  const decodeWithQueueTarget = () =>
    serverScaler((s) => {
      s.roles = [{ name: "decode", minReplicas: 1, maxReplicas: 8 }];
      s.algorithm = {
        type: "TokenThroughput",
        tokenThroughput: { decodeTargetTokensPerSecond: "800", queueTimeTargetMilliseconds: "1000" },
      };
    });

  it("warns where no scaled role waits for a first token, at the field, with the scaled kinds", () => {
    const scaler = decodeWithQueueTarget();
    const warnings = warningsOf(scaler, decodeOnly());
    expect(warnings.map((w) => [w.rule, w.path, w.value])).toEqual([
      ["target-queue-time-judged", "spec.algorithm.tokenThroughput.queueTimeTargetMilliseconds", "1000"],
    ]);
    expect(warnings[0]?.reason).toContain("scaled: Decode");
  });

  it("finds the target in Predictive's fallback block", () => {
    const scaler = serverScaler((s) => {
      s.roles = [{ name: "decode", minReplicas: 1, maxReplicas: 8 }];
      s.algorithm = {
        predictive: {
          tokenThroughput: { decodeTargetTokensPerSecond: "800", queueTimeTargetMilliseconds: "1000" },
          decodeTokenCapacityPerReplica: "800",
        },
      };
    });
    expect(warningsOf(scaler, decodeOnly()).map((w) => w.path)).toEqual([
      "spec.algorithm.predictive.tokenThroughput.queueTimeTargetMilliseconds",
    ]);
  });

  it("says nothing where a Server or Prefill role is scaled, or where no target is written", () => {
    const server = serverScaler((s) => {
      s.algorithm = {
        type: "TokenThroughput",
        tokenThroughput: { serverTargetTokensPerSecond: "5000", queueTimeTargetMilliseconds: "1000" },
      };
    });
    expect(warningsOf(server)).toEqual([]);
    const split = serverScaler((s) => {
      s.roles = [
        { name: "prefill", minReplicas: 1, maxReplicas: 8 },
        { name: "decode", minReplicas: 1, maxReplicas: 8 },
      ];
      s.algorithm = {
        type: "TokenThroughput",
        tokenThroughput: {
          prefillTargetTokensPerSecond: "2000",
          decodeTargetTokensPerSecond: "800",
          queueTimeTargetMilliseconds: "1000",
        },
      };
    });
    expect(warningsOf(split, prefillDecode())).toEqual([]);
    expect(warningsOf(serverScaler())).toEqual([]);
  });

  it("is not run without a target, and never refuses", () => {
    const scaler = decodeWithQueueTarget();
    const without = validateScaler(scaler);
    expect(without.ok && without.warnings).toEqual([]);
  });
});

describe("targetWarnings", () => {
  it("lists each warning once, in the order reported", () => {
    expect(targetWarnings.map((w) => w.id)).toEqual(["target-bounds-current", "target-queue-time-judged"]);
  });
});
