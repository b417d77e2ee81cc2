/** Checks that need the target: a refused and an admitted case for each. */
import { describe, expect, it } from "vitest";
import type { ModelDeployment } from "../../../src/core/api/model-deployment.js";
import { formatProblem } from "../../../src/core/api/problem.js";
import { longestMemberName } from "../../../src/core/api/target-checks.js";
import { validateScaler } from "../../../src/core/api/validation.js";
import { baseScaler, target, targetWith, type Json, type LooseSpec } from "./helpers.js";

/** The Token throughput example of the specification, as a base to edit. */
function tokenScaler(edit: (spec: LooseSpec) => void = () => undefined): Json {
  const scaler = baseScaler();
  const spec: LooseSpec = {
    targetRef: { name: "llm-serving" },
    roles: [
      { name: "encode", maxReplicas: 4 },
      { name: "prefill", minReplicas: 2, maxReplicas: 16 },
      { name: "decode", minReplicas: 2, maxReplicas: 16 },
    ],
    ratios: [
      { numeratorRole: "prefill", denominatorRole: "decode", target: "1", min: "0.5", max: "2" },
      { numeratorRole: "encode", denominatorRole: "prefill", target: "0.5" },
    ],
    algorithm: {
      type: "TokenThroughput",
      tokenThroughput: { prefillTargetTokensPerSecond: "2000", decodeTargetTokensPerSecond: "800" },
    },
  };
  edit(spec);
  return { ...scaler, spec };
}

function predictive(spec: LooseSpec): void {
  spec.algorithm = {
    predictive: {
      tokenThroughput: { prefillTargetTokensPerSecond: "2000", decodeTargetTokensPerSecond: "800" },
      prefillTokenCapacityPerReplica: "2000",
      decodeTokenCapacityPerReplica: "800",
    },
  };
}

const epd = (): ModelDeployment => target("encode-prefill-decode");

interface Case {
  readonly name: string;
  readonly scaler: Json;
  readonly target: ModelDeployment;
}

const refused: readonly (Case & { rule: string; path: string })[] = [
  {
    name: "a target role without bounds",
    rule: "target-roles-bounded",
    path: "spec.roles",
    scaler: tokenScaler(),
    target: targetWith("llm-serving", [
      ["encode", "Encode"],
      ["prefill", "Prefill"],
      ["decode", "Decode"],
      ["spare", "Decode"],
    ]),
  },
  {
    name: "a scaled role missing from the target",
    rule: "target-roles-exist",
    path: "spec.roles[3].name",
    scaler: tokenScaler((s) => {
      s.roles.push({ name: "extra", maxReplicas: 2 });
    }),
    target: epd(),
  },
  {
    name: "a target of another name",
    rule: "target-name",
    path: "spec.targetRef.name",
    scaler: tokenScaler((s) => (s.targetRef.name = "other")),
    target: epd(),
  },
  {
    name: "a role with a custom command",
    rule: "target-unmanaged-roles",
    path: "spec.roles[0].name",
    scaler: tokenScaler(),
    target: targetWith("llm-serving", [
      ["encode", "Encode", { command: ["python", "serve.py"] }],
      ["prefill", "Prefill"],
      ["decode", "Decode"],
    ]),
  },
  {
    name: "an elasticEp role",
    rule: "target-unmanaged-roles",
    path: "spec.roles[0].name",
    scaler: baseScaler(),
    target: targetWith("llm-serving", [
      ["prefill", "Server", { elasticEp: { width: 2 } }],
      ["decode", "Server"],
    ]),
  },
  {
    name: "TokenThroughput without a Prefill target",
    rule: "target-capacities",
    path: "spec.algorithm.tokenThroughput.prefillTargetTokensPerSecond",
    scaler: tokenScaler((s) => delete s.algorithm.tokenThroughput.prefillTargetTokensPerSecond),
    target: epd(),
  },
  {
    name: "TokenThroughput without a Server target",
    rule: "target-capacities",
    path: "spec.algorithm.tokenThroughput.serverTargetTokensPerSecond",
    scaler: tokenScaler((s) => {
      s.roles = [{ name: "server", maxReplicas: 4 }];
      delete s.ratios;
    }),
    target: target("server"),
  },
  {
    name: "Predictive without a forecast capacity",
    rule: "target-capacities",
    path: "spec.algorithm.predictive.decodeTokenCapacityPerReplica",
    scaler: tokenScaler((s) => {
      predictive(s);
      delete s.algorithm.predictive.decodeTokenCapacityPerReplica;
    }),
    target: epd(),
  },
  {
    name: "Predictive without a fallback target",
    rule: "target-capacities",
    path: "spec.algorithm.predictive.tokenThroughput.prefillTargetTokensPerSecond",
    scaler: tokenScaler((s) => {
      predictive(s);
      delete s.algorithm.predictive.tokenThroughput.prefillTargetTokensPerSecond;
    }),
    target: epd(),
  },
  {
    name: "an Encode role without a ratio",
    rule: "target-encode-coupled",
    path: "spec.roles[0].name",
    scaler: tokenScaler((s) => s.ratios.pop()),
    target: epd(),
  },
  {
    name: "an Encode role coupled only to another Encode role",
    rule: "target-encode-coupled",
    path: "spec.roles[0].name",
    scaler: tokenScaler((s) => {
      s.roles.push({ name: "encode2", maxReplicas: 4 });
      s.ratios[1] = { numeratorRole: "encode", denominatorRole: "encode2", target: "1" };
      s.ratios.push({ numeratorRole: "encode2", denominatorRole: "decode", target: "1" });
    }),
    target: targetWith("llm-serving", [
      ["encode", "Encode"],
      ["encode2", "Encode"],
      ["prefill", "Prefill"],
      ["decode", "Decode"],
    ]),
  },
  {
    name: "member names above 63 characters at maxReplicas",
    rule: "target-name-length",
    path: "spec.roles[1].maxReplicas",
    // 52 + "-decode-10-0" = 64 characters.
    scaler: withTarget("a".repeat(52), (s) => (s.roles[1].maxReplicas = 11)),
    target: targetWith("a".repeat(52), [
      ["prefill", "Server"],
      ["decode", "Server"],
    ]),
  },
  {
    name: "member names above 63 characters because of a wide replica",
    rule: "target-name-length",
    path: "spec.roles[1].maxReplicas",
    // 52 + "-decode-7-10" = 64 characters.
    scaler: withTarget("a".repeat(52)),
    target: targetWith("a".repeat(52), [
      ["prefill", "Server"],
      ["decode", "Server", { size: 11 }],
    ]),
  },
];

function withTarget(name: string, edit: (spec: LooseSpec) => void = () => undefined): Json {
  const scaler = baseScaler();
  const spec = scaler.spec as LooseSpec;
  spec.targetRef.name = name;
  edit(spec);
  return scaler;
}

const admitted: readonly Case[] = [
  { name: "the Token throughput example", scaler: tokenScaler(), target: epd() },
  { name: "the Predictive variant with both capacities", scaler: tokenScaler(predictive), target: epd() },
  {
    name: "Encode coupled to Decode in the other direction",
    scaler: tokenScaler((s) => (s.ratios[1] = { numeratorRole: "decode", denominatorRole: "encode", max: "8" })),
    target: epd(),
  },
  {
    name: "Proportional needs no capacities and no Encode ratio",
    scaler: baseScaler(),
    target: targetWith("llm-serving", [
      ["prefill", "Encode"],
      ["decode", "Decode"],
    ]),
  },
  // 51 + "-prefill-7-0" = 63 characters.
  {
    name: "member names of exactly 63 characters",
    scaler: withTarget("a".repeat(51)),
    target: targetWith("a".repeat(51), [
      ["prefill", "Server"],
      ["decode", "Server"],
    ]),
  },
];

describe("target checks refuse", () => {
  it.each(refused)("$name ($rule at $path)", ({ scaler, target: t, rule, path }) => {
    const result = validateScaler(scaler, { target: t });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(
      result.problems.find((p) => p.rule === rule && p.path === path),
      result.problems.map(formatProblem).join("\n"),
    ).toBeDefined();
  });

  it("are skipped while the target is absent", () => {
    for (const { scaler } of refused.filter((c) => c.rule !== "target-name")) {
      const result = validateScaler(scaler);
      expect(result.ok ? [] : result.problems.map(formatProblem)).toEqual([]);
    }
  });
});

describe("target checks admit", () => {
  it.each(admitted)("$name", ({ scaler, target: t }) => {
    const result = validateScaler(scaler, { target: t });
    expect(result.ok ? [] : result.problems.map(formatProblem)).toEqual([]);
  });
});

describe("the naming rule", () => {
  it("names member i of replica k of role r in deployment d as d-r-k-i", () => {
    expect(longestMemberName("llm", "decode", 16, 4)).toBe("llm-decode-15-3");
    expect(longestMemberName("a".repeat(52), "decode", 8)).toHaveLength(63);
  });
});
