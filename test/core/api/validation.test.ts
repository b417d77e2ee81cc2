/**
 * Table-driven admission tests: for every rule, a case it refuses (with the
 * rule id and field path it must report) and a case it admits.
 */
import { describe, expect, it } from "vitest";
import { formatProblem } from "../../../src/core/api/problem.js";
import { validateScaler } from "../../../src/core/api/validation.js";
import { baseScaler, withSpec, type LooseSpec } from "./helpers.js";

interface Refused {
  readonly name: string;
  readonly rule: string;
  readonly path: string;
  readonly edit: (spec: LooseSpec) => void;
  /** A fragment the reason must contain. */
  readonly reason?: string;
}

const refused: readonly Refused[] = [
  // schema: ranges, enums, required and unknown fields
  {
    name: "maxReplicas above 1024",
    rule: "schema",
    path: "spec.roles[1].maxReplicas",
    reason: "at most 1024",
    edit: (s) => (s.roles[1].maxReplicas = 2000),
  },
  {
    name: "minReplicas of zero (no scale to zero)",
    rule: "schema",
    path: "spec.roles[0].minReplicas",
    reason: "at least 1",
    edit: (s) => (s.roles[0].minReplicas = 0),
  },
  {
    name: "maxReplicas missing",
    rule: "schema",
    path: "spec.roles[1].maxReplicas",
    reason: "required",
    edit: (s) => delete s.roles[1].maxReplicas,
  },
  {
    name: "fractional replicas",
    rule: "schema",
    path: "spec.roles[1].maxReplicas",
    reason: "integer",
    edit: (s) => (s.roles[1].maxReplicas = 2.5),
  },
  { name: "no roles", rule: "schema", path: "spec.roles", reason: "at least 1 entry", edit: (s) => (s.roles = []) },
  {
    name: "role name not a DNS label",
    rule: "schema",
    path: "spec.roles[0].name",
    reason: "DNS label",
    edit: (s) => (s.roles[0].name = "Prefill"),
  },
  {
    name: "targetRef missing",
    rule: "schema",
    path: "spec.targetRef",
    reason: "required",
    edit: (s) => delete s.targetRef,
  },
  {
    name: "unknown mode",
    rule: "schema",
    path: "spec.mode",
    reason: "Shadow, Active",
    edit: (s) => (s.mode = "Passive"),
  },
  {
    name: "suspend not a boolean",
    rule: "schema",
    path: "spec.suspend",
    reason: "true or false",
    edit: (s) => (s.suspend = "yes"),
  },
  {
    name: "unknown spec field",
    rule: "schema",
    path: "spec.replicas",
    reason: "not a field",
    edit: (s) => (s.replicas = 3),
  },
  {
    name: "interval below 5 s",
    rule: "schema",
    path: "spec.sampling.intervalSeconds",
    edit: (s) => (s.sampling = { intervalSeconds: 4 }),
  },
  {
    name: "interval above 300 s",
    rule: "schema",
    path: "spec.sampling.intervalSeconds",
    edit: (s) => (s.sampling = { intervalSeconds: 301 }),
  },
  {
    name: "pending timeout below 60 s",
    rule: "schema",
    path: "spec.sampling.pendingTimeoutSeconds",
    edit: (s) => (s.sampling = { pendingTimeoutSeconds: 59 }),
  },
  {
    name: "pending timeout above 1200 s",
    rule: "schema",
    path: "spec.sampling.pendingTimeoutSeconds",
    edit: (s) => (s.sampling = { pendingTimeoutSeconds: 1201 }),
  },
  {
    name: "unknown metric",
    rule: "schema",
    path: "spec.algorithm.proportional.metric",
    edit: (s) => (s.algorithm.proportional.metric = "GpuUtilization"),
  },
  {
    name: "tolerance above 1",
    rule: "schema",
    path: "spec.algorithm.proportional.tolerance",
    reason: "at most 1",
    edit: (s) => (s.algorithm.proportional.tolerance = "1.5"),
  },
  {
    name: "tolerance of zero",
    rule: "schema",
    path: "spec.algorithm.proportional.tolerance",
    reason: "positive",
    edit: (s) => (s.algorithm.proportional.tolerance = "0"),
  },
  {
    name: "empty roleTargets",
    rule: "schema",
    path: "spec.algorithm.proportional.roleTargets",
    edit: (s) => (s.algorithm.proportional.roleTargets = []),
  },
  {
    name: "stable window below 30 s",
    rule: "schema",
    path: "spec.algorithm.tokenThroughput.stableWindowSeconds",
    edit: (s) => (s.algorithm = { tokenThroughput: { stableWindowSeconds: 29 } }),
  },
  {
    name: "panic window above 300 s",
    rule: "schema",
    path: "spec.algorithm.tokenThroughput.panicWindowSeconds",
    edit: (s) => (s.algorithm = { tokenThroughput: { panicWindowSeconds: 301 } }),
  },
  {
    name: "panic threshold negative",
    rule: "schema",
    path: "spec.algorithm.tokenThroughput.panicThreshold",
    edit: (s) => (s.algorithm = { tokenThroughput: { panicThreshold: "-2" } }),
  },
  {
    name: "horizon above 600 s",
    rule: "schema",
    path: "spec.algorithm.predictive.horizonSeconds",
    edit: (s) => (s.algorithm = { predictive: { horizonSeconds: 601 } }),
  },
  {
    name: "minPoints of zero",
    rule: "schema",
    path: "spec.algorithm.predictive.minPoints",
    edit: (s) => (s.algorithm = { predictive: { minPoints: 0 } }),
  },
  {
    name: "minPoints above 64",
    rule: "schema",
    path: "spec.algorithm.predictive.minPoints",
    edit: (s) => (s.algorithm = { predictive: { minPoints: 65 } }),
  },
  {
    name: "unknown algorithm type",
    rule: "schema",
    path: "spec.algorithm.type",
    edit: (s) => (s.algorithm.type = "Reactive"),
  },
  {
    name: "scale-up window above 600 s",
    rule: "schema",
    path: "spec.behavior.scaleUp.stabilizationWindowSeconds",
    edit: (s) => (s.behavior.scaleUp.stabilizationWindowSeconds = 601),
  },
  {
    name: "maxStepPercent above 1000",
    rule: "schema",
    path: "spec.behavior.scaleUp.maxStepPercent",
    edit: (s) => (s.behavior.scaleUp.maxStepPercent = 1001),
  },
  {
    name: "maxStepReplicas negative",
    rule: "schema",
    path: "spec.behavior.scaleUp.maxStepReplicas",
    edit: (s) => (s.behavior.scaleUp.maxStepReplicas = -1),
  },
  {
    name: "scale-down window above 1800 s",
    rule: "schema",
    path: "spec.behavior.scaleDown.stabilizationWindowSeconds",
    edit: (s) => (s.behavior.scaleDown.stabilizationWindowSeconds = 1801),
  },
  {
    name: "abort cooldown above 3600 s",
    rule: "schema",
    path: "spec.behavior.scaleDown.cooldownAfterAbortSeconds",
    edit: (s) => (s.behavior.scaleDown.cooldownAfterAbortSeconds = 3601),
  },
  {
    name: "decode grace above 3600 s",
    rule: "schema",
    path: "spec.behavior.scaleDown.decodePostScaleUpGraceSeconds",
    edit: (s) => (s.behavior.scaleDown.decodePostScaleUpGraceSeconds = 3601),
  },
  {
    name: "unknown rebalance policy",
    rule: "schema",
    path: "spec.rebalance.policy",
    edit: (s) => (s.rebalance.policy = "Random"),
  },
  // schema: quantities
  {
    name: "quantity garbage",
    rule: "schema",
    path: "spec.ratios[0].target",
    reason: "not a Kubernetes quantity",
    edit: (s) => (s.ratios[0].target = "fast"),
  },
  {
    name: "quantity with unknown suffix",
    rule: "schema",
    path: "spec.ratios[0].max",
    reason: "not a Kubernetes quantity",
    edit: (s) => (s.ratios[0].max = "2x"),
  },
  {
    name: "quantity with whitespace",
    rule: "schema",
    path: "spec.ratios[0].max",
    reason: "not a Kubernetes quantity",
    edit: (s) => (s.ratios[0].max = " 2"),
  },
  {
    name: "unquoted fractional quantity",
    rule: "schema",
    path: "spec.ratios[0].min",
    reason: 'quoted quantity such as "0.5"',
    edit: (s) => (s.ratios[0].min = 0.5),
  },
  {
    name: "negative quantity",
    rule: "schema",
    path: "spec.algorithm.proportional.roleTargets[0].target",
    reason: "positive",
    edit: (s) => (s.algorithm.proportional.roleTargets[0].target = "-1"),
  },
  {
    name: "zero millis quantity",
    rule: "schema",
    path: "spec.algorithm.proportional.roleTargets[0].target",
    reason: "positive",
    edit: (s) => (s.algorithm.proportional.roleTargets[0].target = "0m"),
  },
  {
    name: "quantity above 2^63-1",
    rule: "schema",
    path: "spec.ratios[0].max",
    reason: "out of range",
    edit: (s) => (s.ratios[0].max = "10E"),
  },
  {
    name: "quantity of the wrong type",
    rule: "schema",
    path: "spec.ratios[0].max",
    reason: "must be a quantity",
    edit: (s) => (s.ratios[0].max = true),
  },
  // schema: stepPolicy
  {
    name: "stepPolicy without type",
    rule: "schema",
    path: "spec.behavior.scaleUp.stepPolicy.type",
    reason: "required",
    edit: (s) => delete s.behavior.scaleUp.stepPolicy.type,
  },
  {
    name: "stepPolicy with an unknown type",
    rule: "schema",
    path: "spec.behavior.scaleDown.stepPolicy.type",
    reason: "Pods, Percent",
    edit: (s) => (s.behavior.scaleDown.stepPolicy.type = "Replicas"),
  },
  {
    name: "stepPolicy with a negative value",
    rule: "schema",
    path: "spec.behavior.scaleDown.stepPolicy.value",
    reason: "at least 0",
    edit: (s) => (s.behavior.scaleDown.stepPolicy.value = -1),
  },
  {
    name: "stepPolicy without value",
    rule: "schema",
    path: "spec.behavior.scaleUp.stepPolicy.value",
    reason: "required",
    edit: (s) => delete s.behavior.scaleUp.stepPolicy.value,
  },
  // cross-field rules
  {
    name: "minReplicas above maxReplicas",
    rule: "bounds-order",
    path: "spec.roles[0].minReplicas",
    edit: (s) => (s.roles[0].minReplicas = 9),
  },
  {
    name: "default minReplicas 1 is fine, explicit 9 over 8 is not",
    rule: "bounds-order",
    path: "spec.roles[1].minReplicas",
    edit: (s) => (s.roles[1].minReplicas = 9),
  },
  {
    name: "a block of another type",
    rule: "parameter-block",
    path: "spec.algorithm.tokenThroughput",
    edit: (s) => (s.algorithm.tokenThroughput = {}),
  },
  {
    name: "Proportional without its block",
    rule: "parameter-block",
    path: "spec.algorithm.proportional",
    reason: "required",
    edit: (s) => delete s.algorithm.proportional,
  },
  {
    name: "two blocks and no type",
    rule: "parameter-block",
    path: "spec.algorithm.predictive",
    reason: "inferred",
    edit: (s) => {
      delete s.algorithm.type;
      s.algorithm.predictive = {};
    },
  },
  {
    name: "duplicate role names",
    rule: "unique-role-names",
    path: "spec.roles[1].name",
    edit: (s) => (s.roles[1].name = "prefill"),
  },
  {
    name: "duplicate roleTargets",
    rule: "unique-role-targets",
    path: "spec.algorithm.proportional.roleTargets[1].name",
    edit: (s) => (s.algorithm.proportional.roleTargets[1].name = "prefill"),
  },
  {
    name: "duplicate ordered ratio pair",
    rule: "unique-ratio-pairs",
    path: "spec.ratios[1]",
    edit: (s) => s.ratios.push({ numeratorRole: "prefill", denominatorRole: "decode" }),
  },
  {
    name: "duplicate priority names",
    rule: "unique-priority-names",
    path: "spec.rebalance.priority[2]",
    edit: (s) => s.rebalance.priority.push("decode"),
  },
  {
    name: "roleTarget for an unscaled role",
    rule: "role-targets-scaled",
    path: "spec.algorithm.proportional.roleTargets[2].name",
    edit: (s) => s.algorithm.proportional.roleTargets.push({ name: "encode", target: "1" }),
  },
  {
    name: "ratio to an unscaled role",
    rule: "ratio-roles-scaled",
    path: "spec.ratios[0].denominatorRole",
    edit: (s) => (s.ratios[0].denominatorRole = "encode"),
  },
  {
    name: "priority names an unscaled role",
    rule: "priority-scaled",
    path: "spec.rebalance.priority[0]",
    edit: (s) => (s.rebalance.priority[0] = "encode"),
  },
  {
    name: "scaled role without target or ratio",
    rule: "proportional-coverage",
    path: "spec.roles[1].name",
    edit: (s) => {
      s.algorithm.proportional.roleTargets.pop();
      delete s.ratios;
    },
  },
  {
    name: "coupling through an untargeted role does not count",
    rule: "proportional-coverage",
    path: "spec.roles[2].name",
    edit: (s) => {
      s.roles.push({ name: "encode", maxReplicas: 4 });
      s.algorithm.proportional.roleTargets.pop();
      s.ratios.push({ numeratorRole: "encode", denominatorRole: "decode", target: "1" });
    },
  },
  {
    name: "ratio of a role to itself",
    rule: "ratio-distinct-roles",
    path: "spec.ratios[0].denominatorRole",
    edit: (s) => (s.ratios[0].denominatorRole = "prefill"),
  },
  { name: "ratio min above max", rule: "ratio-band", path: "spec.ratios[0].min", edit: (s) => (s.ratios[0].min = "3") },
  {
    name: "ratio target below min",
    rule: "ratio-band",
    path: "spec.ratios[0].target",
    reason: "at least min",
    edit: (s) => (s.ratios[0].target = "499m"),
  },
  {
    name: "ratio target above max",
    rule: "ratio-band",
    path: "spec.ratios[0].target",
    reason: "at most max",
    edit: (s) => (s.ratios[0].target = "2001m"),
  },
  {
    name: "ratio band no bounded vector can meet",
    rule: "ratio-feasibility",
    path: "spec.ratios[0]",
    edit: (s) => {
      s.roles[0].maxReplicas = 1;
      s.roles[1].minReplicas = 4;
    },
  },
];

interface Admitted {
  readonly name: string;
  readonly edit: (spec: LooseSpec) => void;
}

const admitted: readonly Admitted[] = [
  { name: "the base scaler", edit: () => undefined },
  { name: "maxReplicas at 1024", edit: (s) => (s.roles[1].maxReplicas = 1024) },
  { name: "minReplicas equal to maxReplicas", edit: (s) => (s.roles[0].minReplicas = 8) },
  { name: "interval at both ends", edit: (s) => (s.sampling = { intervalSeconds: 5, pendingTimeoutSeconds: 1200 }) },
  { name: "tolerance of exactly 1", edit: (s) => (s.algorithm.proportional.tolerance = "1") },
  { name: "tolerance in millis", edit: (s) => (s.algorithm.proportional.tolerance = "50m") },
  {
    name: "quantities with suffixes and exponents",
    edit: (s) => Object.assign(s.ratios[0], { min: "0.5", target: "1e0", max: "2000m" }),
  },
  { name: "integer quantities", edit: (s) => Object.assign(s.ratios[0], { min: 1, target: 1, max: 2 }) },
  { name: "a fixed ratio", edit: (s) => Object.assign(s.ratios[0], { min: "1", target: "1", max: "1" }) },
  {
    name: "a ratio with only a target",
    edit: (s) => (s.ratios[0] = { numeratorRole: "prefill", denominatorRole: "decode", target: "3" }),
  },
  {
    name: "the reverse pair is a different ordered pair",
    edit: (s) => s.ratios.push({ numeratorRole: "decode", denominatorRole: "prefill", min: "0.5", max: "2" }),
  },
  {
    name: "a role covered by a direct ratio to a targeted role",
    edit: (s) => s.algorithm.proportional.roleTargets.pop(),
  },
  { name: "type inferred from the proportional block", edit: (s) => delete s.algorithm.type },
  { name: "TokenThroughput without a block", edit: (s) => (s.algorithm = {}) },
  {
    name: "Predictive with lenient noises",
    edit: (s) => (s.algorithm = { predictive: { qLevel: "-1", qTrend: 0, measurementNoise: "0" } }),
  },
  { name: "stepPolicy zero values", edit: (s) => (s.behavior.scaleDown.stepPolicy = { type: "Pods", value: 0 }) },
  {
    name: "zero step bounds store defaults",
    edit: (s) => (s.behavior.scaleUp = { maxStepReplicas: 0, maxStepPercent: 0 }),
  },
  { name: "priority lists a subset", edit: (s) => (s.rebalance.priority = ["decode"]) },
  { name: "no ratios at all when every role has a target", edit: (s) => delete s.ratios },
];

describe("validateScaler refuses", () => {
  it.each(refused)("$name ($rule at $path)", ({ rule, path, edit, reason }) => {
    const result = validateScaler(withSpec(edit));
    expect(result.ok).toBe(false);
    if (result.ok) return;
    const hit = result.problems.find((p) => p.rule === rule && p.path === path);
    expect(hit, result.problems.map(formatProblem).join("\n")).toBeDefined();
    if (reason !== undefined) expect(hit?.reason).toContain(reason);
  });
});

describe("validateScaler admits", () => {
  it.each(admitted)("$name", ({ edit }) => {
    const result = validateScaler(withSpec(edit));
    expect(result.ok ? [] : result.problems.map(formatProblem)).toEqual([]);
  });
});

describe("problems", () => {
  it("carry the offending value and a one-line message naming field and value", () => {
    const result = validateScaler(withSpec((s) => (s.roles[1].maxReplicas = 2000)));
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems).toEqual([
      { rule: "schema", path: "spec.roles[1].maxReplicas", value: 2000, reason: "must be at most 1024" },
    ]);
    expect(formatProblem(result.problems[0]!)).toBe("spec.roles[1].maxReplicas = 2000: must be at most 1024");
  });

  it("are all reported at once, schema and cross-field together", () => {
    const result = validateScaler(
      withSpec((s) => {
        s.roles[1].maxReplicas = 2000;
        s.roles.push({ name: "prefill", maxReplicas: 2 });
        s.ratios[0].min = "3";
      }),
    );
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect([...new Set(result.problems.map((p) => p.rule))].sort()).toEqual([
      "ratio-band",
      "schema",
      "unique-role-names",
    ]);
  });

  it("report each unknown key separately", () => {
    const result = validateScaler(withSpec((s) => Object.assign(s, { a: 1, b: 2 })));
    expect(result.ok ? [] : result.problems.map((p) => p.path)).toEqual(["spec.a", "spec.b"]);
  });
});

describe("update rules", () => {
  it("refuse a changed targetRef.name (target-ref-immutable)", () => {
    const old = withSpec((s) => (s.targetRef.name = "other"));
    const result = validateScaler(baseScaler(), { old });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems).toEqual([
      expect.objectContaining({ rule: "target-ref-immutable", path: "spec.targetRef.name", value: "llm-serving" }),
    ]);
  });

  it("admit an update that keeps targetRef.name", () => {
    const old = withSpec((s) => (s.mode = "Active"));
    expect(validateScaler(baseScaler(), { old }).ok).toBe(true);
  });
});

describe("ratio feasibility", () => {
  it("warns, and admits, when the search reaches its limit", async () => {
    const { ratioFeasibilityFindings } = await import("../../../src/core/api/ratio-feasibility.js");
    const { readSpecView } = await import("../../../src/core/api/rules/view.js");
    const spec = withSpec((s) => {
      s.roles = [
        { name: "a", minReplicas: 1, maxReplicas: 1024 },
        { name: "b", minReplicas: 1, maxReplicas: 1024 },
      ];
      s.ratios = [{ numeratorRole: "a", denominatorRole: "b", min: "1", max: "1" }];
    }).spec;
    const findings = ratioFeasibilityFindings(readSpecView(spec), 1);
    expect(findings.problems).toEqual([]);
    expect(findings.warnings).toEqual([expect.objectContaining({ rule: "ratio-feasibility", path: "spec.ratios[0]" })]);
    expect(findings.warnings[0]?.reason).toContain("undecided");
  });
});
