/**
 * The facts a pass reads once (`pass.ts`), the binding phase (`bind.ts`), the
 * policy gate (`gate.ts`) and the recommendations (`recommend.ts`), through
 * `plan()`: spec order, targets and scalers missing optional fields, passes
 * that stop early, and the algorithm's input.
 */
import { describe, expect, it } from "vitest";
import type { Algorithm, AlgorithmInput } from "../../../src/core/algorithms/types.js";
import { bindingAnnotation, type ModelDeployment } from "../../../src/core/api/model-deployment.js";
import type { ScalerSpec, ScalerStatus } from "../../../src/core/api/scaler.js";
import { withoutTargetState } from "../../../src/core/planner/bind.js";
import type { Pass } from "../../../src/core/planner/pass.js";
import { plan } from "../../../src/core/planner/plan.js";
import { missingDriverField } from "../../../src/core/planner/recommend.js";
import type { PlanInput } from "../../../src/core/planner/types.js";
import { condition, inputOf, specOf, targetOf, want } from "./fixtures.js";

const bound = { [bindingAnnotation]: JSON.stringify({ scalerName: "llm", scalerUID: "scaler-uid", term: 3 }) };
const spec = specOf({
  roles: [
    { name: "p", minReplicas: 1, maxReplicas: 8 },
    { name: "d", minReplicas: 1, maxReplicas: 8 },
  ],
});
const steady = { p: want(2), d: want(2) };

/** An echo that also records what it was given. */
function recording(): { algorithm: Algorithm; inputs: AlgorithmInput[] } {
  const inputs: AlgorithmInput[] = [];
  return {
    inputs,
    algorithm: {
      type: "Proportional",
      recommend(input) {
        inputs.push(input);
        return {
          roles: input.roles.map((r) => ({ role: r.name, scaled: true, replicas: r.currentReplicas, reason: "Test" })),
          predictors: [],
        };
      },
    },
  };
}

const withMetadata = (input: PlanInput, metadata: Partial<PlanInput["scaler"]["metadata"]>): PlanInput => ({
  ...input,
  scaler: { ...input.scaler, metadata: { ...input.scaler.metadata, ...metadata } },
});

describe("the facts of a pass", () => {
  it("reads the target's roles in the spec's order", () => {
    const target = targetOf([
      { name: "d", replicas: 2 },
      { name: "p", replicas: 2 },
    ]);
    const rec = recording();
    const result = plan({ ...inputOf({ spec, target, observations: steady }), algorithm: rec.algorithm });
    expect(result.status.roles?.map((r) => r.name)).toStrictEqual(["p", "d"]);
    expect(rec.inputs[0]?.roles.map((r) => r.name)).toStrictEqual(["p", "d"]);
  });

  it("an unobserved role reaches the algorithm as Missing, with the target's ready count or none", () => {
    const rec = recording();
    const target = targetOf([
      { name: "p", replicas: 2 },
      { name: "d", replicas: 3, ready: 1 },
    ]);
    plan({ ...inputOf({ spec, target, observations: { p: want(2) } }), algorithm: rec.algorithm });
    expect(rec.inputs[0]?.roles[1]?.observation).toStrictEqual({
      readyReplicas: 1,
      sampledReplicas: 0,
      signalState: "Missing",
    });
    const { status: _s, ...statusless } = target;
    plan({ ...inputOf({ spec, target: statusless as ModelDeployment, observations: {} }), algorithm: rec.algorithm });
    expect(rec.inputs[1]?.roles[1]?.observation).toStrictEqual({
      readyReplicas: 0,
      sampledReplicas: 0,
      signalState: "Missing",
    });
  });

  it("the algorithm gets the stored predictor state, or none", () => {
    const rec = recording();
    const target = targetOf([
      { name: "p", replicas: 2 },
      { name: "d", replicas: 2 },
    ]);
    plan({ ...inputOf({ spec, target, observations: steady }), algorithm: rec.algorithm });
    expect(rec.inputs[0]?.predictors).toStrictEqual([]);
    const predictors = [{ name: "p" }] as unknown as NonNullable<ScalerStatus["predictors"]>;
    plan({ ...inputOf({ spec, target, observations: steady, status: { predictors } }), algorithm: rec.algorithm });
    expect(rec.inputs[1]?.predictors).toStrictEqual(predictors);
  });

  it("a target without a uid stays the same target from pass to pass", () => {
    const target = targetOf([
      { name: "p", replicas: 2 },
      { name: "d", replicas: 2 },
    ]);
    const { uid: _u, ...metadata } = target.metadata;
    const uidless = { ...target, metadata };
    const first = plan(inputOf({ spec, target: uidless, observations: steady }));
    expect(first.status.binding?.targetUID).toBe("");
    const second = plan(inputOf({ spec, target: uidless, observations: steady, status: first.status }));
    expect(condition(second, "Bound")?.reason).not.toBe("TargetReplaced");
    expect(second.commit).toBeUndefined();
  });

  it("records the term in status only when the pass may commit", () => {
    const target = targetOf(
      [
        { name: "p", replicas: 2 },
        { name: "d", replicas: 2 },
      ],
      { annotations: bound },
    );
    const active = plan(inputOf({ spec, target, observations: steady }));
    expect(active.status.binding).toStrictEqual({ targetUID: "target-uid", targetName: "llm", term: 3 });
    expect(active.bindingTerm).toBe(3);
    const shadowSpec: ScalerSpec = { ...spec, mode: "Shadow" };
    const shadow = plan(inputOf({ spec: shadowSpec, target, observations: steady }));
    expect(shadow.status.binding).toStrictEqual({ targetUID: "target-uid", targetName: "llm" });
    expect(shadow).not.toHaveProperty("bindingTerm");
  });
});

describe("the binding phase", () => {
  const target = targetOf(
    [
      { name: "p", replicas: 2 },
      { name: "d", replicas: 2 },
    ],
    { annotations: bound },
  );

  it("commits under the term the caller says it holds", () => {
    const result = plan({ ...inputOf({ spec, target, observations: { p: want(3), d: want(2) } }), bindingTerm: 7 });
    expect(result.bindingTerm).toBe(7);
    expect(result.commit?.decision.term).toBe(7);
    expect(result.status.lastCommit?.term).toBe(7);
  });

  it("a scaler without a uid installs a binding with an empty uid", () => {
    const unbound = targetOf([
      { name: "p", replicas: 2 },
      { name: "d", replicas: 2 },
    ]);
    const result = plan(withMetadata(inputOf({ spec, target: unbound, observations: steady }), { uid: undefined }));
    expect(result.bindingWrite).toMatchObject({ kind: "acquire", binding: { scalerName: "llm", scalerUID: "" } });
  });

  it("a scaler being deleted releases its binding and plans nothing", () => {
    const result = plan(
      withMetadata(inputOf({ spec, target, observations: { p: want(3), d: want(2) } }), {
        deletionTimestamp: "2026-11-29T12:00:00Z",
      }),
    );
    expect(result.bindingWrite).toStrictEqual({ kind: "release" });
    expect(result.commit).toBeUndefined();
    expect(result).not.toHaveProperty("bindingTerm");
  });

  it("a stopped pass records the scaler generation when there is one", () => {
    const suspended: ScalerSpec = { ...spec, suspend: true };
    const withGeneration = plan(inputOf({ spec: suspended, target, observations: steady, generation: 5 }));
    expect(withGeneration.status.observedGeneration).toBe(5);
    const without = plan(
      withMetadata(inputOf({ spec: suspended, target, observations: steady }), { generation: undefined }),
    );
    expect(without.status).not.toHaveProperty("observedGeneration");
  });

  it("a replaced target's state is dropped; the rest of the status stays", () => {
    const status: ScalerStatus = {
      observedGeneration: 2,
      lastPassTime: "2026-11-29T11:00:00.000Z",
      lastCommit: {
        decisionID: "x",
        term: 1,
        vector: { p: 2 },
        baselineVector: { p: 1 },
        timestamp: "2026-11-29T11:00:00.000Z",
        targetGeneration: 2,
      },
      rebalance: { reason: "ResourceExhausted" },
      binding: { targetUID: "old", targetName: "llm" },
    };
    expect(withoutTargetState(status)).toStrictEqual({
      observedGeneration: 2,
      lastPassTime: "2026-11-29T11:00:00.000Z",
    });
    expect(withoutTargetState(undefined)).toStrictEqual({});
  });
});

describe("the policy gate", () => {
  const ratioSpec = specOf({
    roles: [
      { name: "p", minReplicas: 1, maxReplicas: 8 },
      { name: "d", minReplicas: 1, maxReplicas: 8 },
    ],
    ratios: [
      { numeratorRole: "d", denominatorRole: "p", min: "2" },
      { numeratorRole: "p", denominatorRole: "d", min: "1" },
    ],
  });
  const target = targetOf([
    { name: "p", replicas: 2 },
    { name: "d", replicas: 3 },
  ]);

  it("a current vector outside the bands stops the pass, naming every broken band", () => {
    const result = plan(inputOf({ spec: ratioSpec, target, observations: { p: want(2), d: want(3) }, generation: 4 }));
    const message = "the current vector violates d/p >= 2, p/d >= 1; widen the ratios to include it";
    expect(condition(result, "Blocked")).toMatchObject({ status: "True", reason: "RatioConflict", message });
    expect(condition(result, "MetricsReady")).toMatchObject({
      status: "False",
      reason: "RatioConflict",
      message: `signals were not evaluated: ${message}`,
    });
    expect(result.status.observedGeneration).toBe(4);
    const without = plan(
      withMetadata(inputOf({ spec: ratioSpec, target, observations: {} }), { generation: undefined }),
    );
    expect(without.status).not.toHaveProperty("observedGeneration");
  });

  it("a stopped pass still names a window that reads nothing at the engines' scrape interval", () => {
    const shortPanic = specOf({
      roles: ratioSpec.roles,
      ...(ratioSpec.ratios === undefined ? {} : { ratios: ratioSpec.ratios }),
      algorithm: {
        type: "Proportional",
        proportional: { metric: "RunningRequests", roleTargets: [{ name: "p", target: "1" }] },
        tokenThroughput: { panicWindowSeconds: 10 },
      },
    });
    const input = inputOf({ spec: shortPanic, target, observations: { p: want(2), d: want(3) } });
    const stopped = condition(plan({ ...input, engineScrapeIntervalSeconds: 15 }), "MetricsReady") as
      { reason: string; message: string } | undefined;
    expect(stopped?.reason).toBe("RatioConflict");
    expect(stopped?.message).toMatch(
      /^signals were not evaluated: the current vector violates .*; spec\.algorithm\.tokenThroughput\.panicWindowSeconds = 10: 10 s holds under two engine scrapes of 15 s, /,
    );
  });

  it("a stopped pass keeps each role's history and growth time, and adds none", () => {
    const history = [{ timestamp: "2026-11-29T11:59:00.000Z", replicas: 2 }];
    const status: ScalerStatus = {
      roles: [
        {
          name: "p",
          currentReplicas: 2,
          readyReplicas: 2,
          signalState: "Fresh",
          lastScaleUpTime: "2026-11-29T11:50:00.000Z",
          stabilizationHistory: history,
        },
      ],
    };
    const result = plan(inputOf({ spec: ratioSpec, target, observations: { p: want(2), d: want(3) }, status }));
    const [p, d] = result.status.roles ?? [];
    expect(p).toMatchObject({ lastScaleUpTime: "2026-11-29T11:50:00.000Z", stabilizationHistory: history });
    expect(d).not.toHaveProperty("lastScaleUpTime");
    expect(d).not.toHaveProperty("stabilizationHistory");
  });
});

describe("recommendations", () => {
  const target = targetOf([
    { name: "p", replicas: 2 },
    { name: "d", replicas: 2 },
  ]);

  it("without an algorithm every role holds as AlgorithmUnavailable", () => {
    const unknown = { ...spec, algorithm: { type: "NoSuchAlgorithm" } } as unknown as ScalerSpec;
    const input = inputOf({ spec: unknown, target, observations: { p: want(5), d: want(5) } });
    const { algorithm: _a, ...registryOnly } = input;
    const result = plan(registryOnly);
    expect(result.commit).toBeUndefined();
    expect(result.status.roles?.map((r) => [r.rawRecommendedReplicas, r.reason])).toStrictEqual([
      [2, "AlgorithmUnavailable"],
      [2, "AlgorithmUnavailable"],
    ]);
    // Undriven: no history, and every role's signals are required.
    expect(result.status.roles?.map((r) => r.stabilizationHistory)).toStrictEqual([undefined, undefined]);
  });

  it("names every role nothing drives, separated by semicolons", () => {
    const noTarget: Algorithm = {
      type: "Proportional",
      recommend: (input) => ({
        roles: input.roles.map((r) => ({
          role: r.name,
          scaled: true,
          replicas: r.currentReplicas,
          reason: "NoTarget",
        })),
        predictors: [],
      }),
    };
    const result = plan({ ...inputOf({ spec, target, observations: steady }), algorithm: noTarget });
    const ratio = "a spec.ratios entry tying it to a driven role";
    expect(condition(result, "Blocked")).toMatchObject({
      reason: "BoundsConflict",
      message:
        `bounds are missing: p needs a spec.algorithm.proportional.roleTargets entry named "p" or ${ratio}; ` +
        `d needs a spec.algorithm.proportional.roleTargets entry named "d" or ${ratio}`,
    });
  });

  it.each([
    { type: "Proportional", kind: "Decode", field: 'a spec.algorithm.proportional.roleTargets entry named "r" or' },
    { type: "TokenThroughput", kind: "Encode", field: "" },
    {
      type: "TokenThroughput",
      kind: "Prefill",
      field: "spec.algorithm.tokenThroughput.prefillTargetTokensPerSecond or",
    },
    {
      type: "Predictive",
      kind: "Decode",
      field: "spec.algorithm.predictive.tokenThroughput.decodeTargetTokensPerSecond or",
    },
  ])("$type, $kind: the field that would drive it", ({ type, kind, field }) => {
    const pass = { spec: { algorithm: { type } } } as unknown as Pass;
    const ratio = "a spec.ratios entry tying it to a driven role";
    expect(missingDriverField(pass, kind, "r")).toBe(field === "" ? ratio : `${field} ${ratio}`);
  });
});
