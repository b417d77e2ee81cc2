/**
 * Each cross-field rule on its own, at its edges: entries without names are
 * other rules' business, and every problem's path, value and text are pinned.
 */
import { describe, expect, it } from "vitest";
import { additivePatch } from "../../../src/core/api/defaulting-patch.js";
import { defaultScalerSpec } from "../../../src/core/api/defaulting.js";
import { ModelDeploymentSchema } from "../../../src/core/api/model-deployment.js";
import { PredictiveSchema } from "../../../src/core/api/scaler.js";
import { checkAgainstTarget } from "../../../src/core/api/target-checks.js";
import { parameterBlock, proportionalCoverage } from "../../../src/core/api/rules/algorithm.js";
import { boundsOrder, floorWithinBounds } from "../../../src/core/api/rules/bounds.js";
import { targetRefImmutable } from "../../../src/core/api/rules/immutability.js";
import { ratioBand, ratioDistinctRoles } from "../../../src/core/api/rules/ratios.js";
import { priorityScaled, ratioRolesScaled, roleTargetsScaled } from "../../../src/core/api/rules/references.js";
import type { Rule } from "../../../src/core/api/rules/rule.js";
import {
  uniquePriorityNames,
  uniqueRatioPairs,
  uniqueRoleNames,
  uniqueRoleTargets,
} from "../../../src/core/api/rules/uniqueness.js";
import { readSpecView } from "../../../src/core/api/rules/view.js";

function check(rule: Rule, spec: unknown, old?: unknown) {
  return rule.check(
    old === undefined ? { spec: readSpecView(spec) } : { spec: readSpecView(spec), old: readSpecView(old) },
  );
}

const proportional = (roleTargets: readonly unknown[]) => ({ proportional: { metric: "QueueDepth", roleTargets } });

describe("parameter-block", () => {
  it("says whether the type was declared or inferred", () => {
    const inferred = check(parameterBlock, { algorithm: { proportional: { metric: "QueueDepth" }, predictive: {} } });
    expect(inferred.map((p) => p.reason)).toEqual([
      "is not allowed: the type inferred from the blocks is Proportional, so only algorithm.proportional may be set",
    ]);
    const declared = check(parameterBlock, { algorithm: { type: "TokenThroughput", predictive: {} } });
    expect(declared.map((p) => p.reason)).toEqual([
      "is not allowed: algorithm.type is TokenThroughput, so only algorithm.tokenThroughput may be set",
    ]);
  });
});

describe("proportional-coverage", () => {
  const roles = ["a", "b", "c", "d", "e"].map((name) => ({ name, maxReplicas: 4 }));

  it("a role is covered by its own target or a direct ratio, on either side, to a targeted role", () => {
    const problems = check(proportionalCoverage, {
      roles: [...roles, { maxReplicas: 4 }],
      ratios: [
        { numeratorRole: "b", denominatorRole: "a" },
        { numeratorRole: "a", denominatorRole: "c" },
        { numeratorRole: "d", denominatorRole: "e" },
        { numeratorRole: "e" },
      ],
      algorithm: proportional([{ name: "a", target: "1" }, { target: "1" }]),
    });
    expect(problems).toEqual([
      {
        rule: "proportional-coverage",
        path: "spec.roles[3].name",
        value: "d",
        reason: "has no entry in algorithm.proportional.roleTargets and no ratio to a role that has one",
      },
      expect.objectContaining({ path: "spec.roles[4].name", value: "e" }),
    ]);
  });

  it("is silent for other algorithms and for a Proportional spec without its block", () => {
    expect(check(proportionalCoverage, { roles, algorithm: { type: "Proportional" } })).toEqual([]);
    expect(check(proportionalCoverage, { roles, algorithm: { type: "TokenThroughput", ...proportional([]) } })).toEqual(
      [],
    );
  });
});

describe("single-field rules", () => {
  it("bounds-order names the maximum", () => {
    expect(check(boundsOrder, { roles: [{ name: "a", minReplicas: 3, maxReplicas: 2 }] })).toEqual([
      { rule: "bounds-order", path: "spec.roles[0].minReplicas", value: 3, reason: "must be at most maxReplicas (2)" },
    ]);
  });

  it("target-ref-immutable names the old target, and leaves a removed targetRef to the schema", () => {
    const old = { targetRef: { name: "a" } };
    expect(check(targetRefImmutable, { targetRef: { name: "b" } }, old)).toEqual([
      {
        rule: "target-ref-immutable",
        path: "spec.targetRef.name",
        value: "b",
        reason: 'is immutable (was "a"); create a new scaler to retarget',
      },
    ]);
    expect(check(targetRefImmutable, {}, old)).toEqual([]);
  });

  it("ratio-distinct-roles needs a named role on both sides", () => {
    expect(check(ratioDistinctRoles, { ratios: [{ min: "1" }] })).toEqual([]);
    expect(check(ratioDistinctRoles, { ratios: [{ numeratorRole: "a", denominatorRole: "a" }] })).toEqual([
      {
        rule: "ratio-distinct-roles",
        path: "spec.ratios[0].denominatorRole",
        value: "a",
        reason: "must differ from numeratorRole",
      },
    ]);
  });

  it("ratio-band reads quantities only from strings and numbers", () => {
    expect(check(ratioBand, { ratios: [{ numeratorRole: "a", denominatorRole: "b", min: ["3"], max: "2" }] })).toEqual(
      [],
    );
  });

  it("floor-within-bounds names the hour and the ceiling, and leaves refused counts to the schema", () => {
    const floors = Array.from({ length: 24 }, (_, h) => (h === 14 ? 9 : h === 3 ? "x" : 2));
    expect(
      check(floorWithinBounds, { roles: [{ name: "a", maxReplicas: 8, floorReplicasByUtcHour: floors }] }),
    ).toEqual([
      {
        rule: "floor-within-bounds",
        path: "spec.roles[0].floorReplicasByUtcHour[14]",
        value: 9,
        reason: "the floor of 14:00 UTC must be at most maxReplicas (8)",
      },
    ]);
    expect(check(floorWithinBounds, { roles: [{ name: "a", maxReplicas: 8 }] })).toEqual([]);
    expect(check(floorWithinBounds, { roles: [{ name: "a", floorReplicasByUtcHour: floors }] })).toEqual([]);
  });

  it("bounds-order leaves a missing bound to the schema", () => {
    expect(check(boundsOrder, { roles: [{ name: "a", minReplicas: 3 }] })).toEqual([]);
  });

  it("ratio-band names the maximum an inverted band breaks", () => {
    expect(check(ratioBand, { ratios: [{ numeratorRole: "a", denominatorRole: "b", min: "3", max: 2 }] })).toEqual([
      { rule: "ratio-band", path: "spec.ratios[0].min", value: "3", reason: "must be at most max (2)" },
    ]);
  });
});

describe("references and uniqueness leave unnamed entries to the schema", () => {
  const spec = {
    roles: [{ name: "a", maxReplicas: 2 }, { maxReplicas: 2 }, { maxReplicas: 2 }],
    ratios: [{ denominatorRole: "a" }, { denominatorRole: "a" }, { numeratorRole: "a" }, { numeratorRole: "a" }],
    algorithm: proportional([{ target: "1" }, { target: "1" }]),
    rebalance: { policy: "Priority", priority: [{}, {}] },
  };

  it.each([
    ["role-targets-scaled", roleTargetsScaled],
    ["ratio-roles-scaled", ratioRolesScaled],
    ["priority-scaled", priorityScaled],
    ["unique-role-names", uniqueRoleNames],
    ["unique-role-targets", uniqueRoleTargets],
    ["unique-ratio-pairs", uniqueRatioPairs],
    ["unique-priority-names", uniquePriorityNames],
  ] as const)("%s", (_id, rule) => {
    expect(check(rule, spec)).toEqual([]);
  });

  it("duplicates name the first entry", () => {
    const twice = {
      roles: [
        { name: "a", maxReplicas: 2 },
        { name: "b", maxReplicas: 2 },
        { name: "a", maxReplicas: 2 },
      ],
      ratios: [
        { numeratorRole: "a", denominatorRole: "b" },
        { numeratorRole: "a", denominatorRole: "b" },
      ],
      algorithm: proportional([
        { name: "a", target: "1" },
        { name: "a", target: "1" },
      ]),
      rebalance: { policy: "Priority", priority: ["a", "a"] },
    };
    expect(check(uniqueRoleNames, twice)).toEqual([
      { rule: "unique-role-names", path: "spec.roles[2].name", value: "a", reason: "duplicates spec.roles[0].name" },
    ]);
    expect(check(uniqueRoleTargets, twice).map((p) => p.reason)).toEqual([
      "duplicates spec.algorithm.proportional.roleTargets[0].name",
    ]);
    expect(check(uniqueRatioPairs, twice)).toEqual([
      {
        rule: "unique-ratio-pairs",
        path: "spec.ratios[1]",
        value: { numeratorRole: "a", denominatorRole: "b" },
        reason: "repeats the numeratorRole and denominatorRole of spec.ratios[0]",
      },
    ]);
    expect(check(uniquePriorityNames, twice).map((p) => p.reason)).toEqual(["duplicates spec.rebalance.priority[0]"]);
  });
});

describe("defaulting", () => {
  it("a declared Predictive type without its block gets the block's defaults", () => {
    const result = defaultScalerSpec({
      targetRef: { name: "llm" },
      roles: [{ name: "server", maxReplicas: 4 }],
      algorithm: { type: "Predictive" },
    });
    expect(result.ok && result.value.algorithm.predictive).toEqual(PredictiveSchema.parse({}));
  });
});

describe("target checks", () => {
  const target = ModelDeploymentSchema.parse({
    apiVersion: "worker.gpustack.ai/v1",
    kind: "ModelDeployment",
    metadata: { name: "llm" },
    spec: {
      roles: [
        { name: "a", kind: "Server", replicas: 1 },
        { name: "tool", kind: "Server", replicas: 1, command: ["serve"] },
      ],
    },
  });

  it("an unmanaged target role the scaler does not list is reported at targetRef, naming the target", () => {
    const problems = checkAgainstTarget(
      readSpecView({ targetRef: { name: "llm" }, roles: [{ name: "a" }], algorithm: proportional([]) }),
      target,
    );
    expect(problems.filter((p) => p.rule === "target-unmanaged-roles")).toEqual([
      {
        rule: "target-unmanaged-roles",
        path: "spec.targetRef.name",
        value: "llm",
        reason: 'target role "tool" has a custom command, so its serving signals are unmanaged; the scaler refuses it',
      },
    ]);
    // A role without maxReplicas has no longest name to check.
    expect(problems.map((p) => p.rule)).toEqual(["target-roles-bounded", "target-unmanaged-roles"]);
  });
});

describe("more edges", () => {
  it("a non-positive noise setting stores its default; a positive one stays", () => {
    expect(PredictiveSchema.parse({ qLevel: "0", qTrend: "-1", measurementNoise: "3" })).toMatchObject({
      qLevel: "1",
      qTrend: "0.1",
      measurementNoise: "3",
    });
  });

  it("a quantity written as text that is not one is named as such", () => {
    const parsed = PredictiveSchema.safeParse({ qLevel: "abc" });
    expect(parsed.success ? [] : parsed.error.issues.map((i) => i.message)).toEqual([
      'is not a Kubernetes quantity (for example "0.5", "500m" or "2k")',
    ]);
  });

  it("a targetRef name that is not a string is the schema's to report", () => {
    expect(check(targetRefImmutable, { targetRef: { name: 5 } }, { targetRef: { name: "a" } })).toEqual([]);
  });

  it("an unmanaged role the scaler lists is reported at its entry", () => {
    const target = ModelDeploymentSchema.parse({
      apiVersion: "worker.gpustack.ai/v1",
      kind: "ModelDeployment",
      metadata: { name: "llm" },
      spec: {
        roles: [
          { name: "a", kind: "Server", replicas: 1 },
          { name: "wide", kind: "Server", replicas: 1, elasticEp: { width: 2 } },
          { name: "enc", kind: "Encode", replicas: 1 },
        ],
      },
    });
    const roles = [{ name: "a" }, { name: "wide" }, { name: "enc" }, { name: "a" }, { maxReplicas: 2 }];
    const problems = checkAgainstTarget(readSpecView({ roles, algorithm: proportional([]) }), target);
    expect(problems).toEqual([
      {
        rule: "target-unmanaged-roles",
        path: "spec.roles[1].name",
        value: "wide",
        reason:
          'target role "wide" uses elasticEp, whose width grows one collective rather than adding replicas; the scaler refuses it',
      },
    ]);
  });
});

describe("additivePatch shapes", () => {
  it("a string is not a list of its characters", () => {
    expect(additivePatch("ab", ["a", "b"], "/x")).toEqual([{ op: "replace", path: "/x", value: ["a", "b"] }]);
  });
});
