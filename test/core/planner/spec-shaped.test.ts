/**
 * A status and target shaped exactly like the specification's examples, with
 * none of the project's extensions (docs/reference.md, Extensions): no
 * `lastPassTime`, no predictor `lastUpdateTime`, a decision annotation with
 * `decisionID`, `term` and `vector` only, no bound label. The pass must decide
 * what the specification's rules decide: the stabilization windows read the
 * history at once, tolerance and step limits apply as written.
 */
import { describe, expect, it } from "vitest";
import { bindingAnnotation, decisionAnnotation } from "../../../src/core/api/model-deployment.js";
import type { ScalerSpec, ScalerStatus } from "../../../src/core/api/scaler.js";
import { plan } from "../../../src/core/planner/plan.js";
import { extensions } from "../../../src/core/api/extensions.js";
import { inputOf, roleOf, specOf, t0, targetOf, want } from "./fixtures.js";

const iso = (s: number): string => new Date(t0 + s * 1000).toISOString();

/** Recommendations on a 15 s grid ending `newestAgeSeconds` before now, the first one the oldest. */
function history(values: readonly number[], newestAgeSeconds = 15) {
  return values.map((replicas, i) => ({ timestamp: iso(-newestAgeSeconds - 15 * (values.length - 1 - i)), replicas }));
}

/** 20 samples, 300 s down to 15 s old: the default scale-down window, spanned. */
const downWindow = (values: readonly number[]) => [
  ...values,
  ...Array<number>(20 - values.length).fill(values.at(-1) ?? 0),
];

function specShapedStatus(current: number, samples: ReturnType<typeof history>): ScalerStatus {
  return {
    observedGeneration: 1,
    binding: { targetUID: "target-uid", targetName: "llm", term: 1 },
    roles: [
      {
        name: "s",
        currentReplicas: current,
        readyReplicas: current,
        signalState: "Fresh",
        rawRecommendedReplicas: samples.at(-1)?.replicas ?? current,
        constrainedReplicas: current,
        reason: "Proportional",
        stabilizationHistory: samples,
      },
    ],
    lastCommit: {
      decisionID: "d-earlier",
      term: 1,
      vector: { s: current },
      baselineVector: { s: current },
      timestamp: iso(-3600),
      targetGeneration: 1,
    },
  };
}

function specShapedTarget(current: number) {
  return targetOf([{ name: "s", replicas: current }], {
    annotations: {
      [bindingAnnotation]: JSON.stringify({ scalerName: "llm", scalerUID: "scaler-uid", term: 1 }),
      [decisionAnnotation]: JSON.stringify({ decisionID: "d-earlier", term: 1, vector: { s: current } }),
    },
  });
}

interface Case {
  readonly why: string;
  readonly behavior?: object;
  readonly current: number;
  readonly samples: ReturnType<typeof history>;
  readonly wanted: number;
  readonly replicas: number;
  readonly reason: string;
}

const wideDown = { scaleDown: { stepPolicy: { type: "Pods", value: 100 } } };

const cases: Case[] = [
  {
    why: "scale-down stops at the window's highest recommendation",
    behavior: wideDown,
    current: 8,
    samples: history(downWindow([5, 4, 4, 3])),
    wanted: 3,
    replicas: 5,
    reason: "ScaleDownStabilization",
  },
  {
    why: "scale-down reaches the wanted count when the whole window wanted it",
    behavior: wideDown,
    current: 8,
    samples: history(downWindow([3])),
    wanted: 3,
    replicas: 3,
    reason: "Proportional",
  },
  {
    why: "a recommendation older than the window no longer counts",
    behavior: wideDown,
    current: 8,
    samples: history([7, ...downWindow([4])]),
    wanted: 3,
    replicas: 4,
    reason: "ScaleDownStabilization",
  },
  {
    why: "the default step removes one replica per pass",
    current: 8,
    samples: history(downWindow([3])),
    wanted: 3,
    replicas: 7,
    reason: "ScaleDownLimit",
  },
  {
    why: "a Percent step rounds up",
    behavior: { scaleDown: { stepPolicy: { type: "Percent", value: 30 } } },
    current: 8,
    samples: history(downWindow([2])),
    wanted: 2,
    replicas: 5,
    reason: "ScaleDownLimit",
  },
  {
    why: "scale-up goes to the window's lowest recommendation",
    behavior: { scaleUp: { stabilizationWindowSeconds: 60 } },
    current: 4,
    samples: history([6, 7, 8, 9]),
    wanted: 9,
    replicas: 6,
    reason: "ScaleUpStabilization",
  },
  {
    why: "scale-up sustained over the window grows to the wanted count",
    behavior: { scaleUp: { stabilizationWindowSeconds: 60 } },
    current: 5,
    samples: history([9, 9, 9, 9]),
    wanted: 9,
    replicas: 9,
    reason: "Proportional",
  },
  {
    why: "scale-up is bounded by max(maxStepReplicas, maxStepPercent)",
    behavior: { scaleUp: { stabilizationWindowSeconds: 60 } },
    current: 3,
    samples: history([12, 12, 12, 12]),
    wanted: 12,
    replicas: 7,
    reason: "ScaleUpLimit",
  },
  {
    why: "inside the tolerance the count holds (10.9 / 10 ready / 1 = 1.09)",
    behavior: wideDown,
    current: 10,
    samples: history(downWindow([10])),
    wanted: 10.9,
    replicas: 10,
    reason: "WithinTolerance",
  },
  {
    why: "just outside the tolerance the count moves (8.9 / 10 ready / 1 = 0.89)",
    behavior: wideDown,
    current: 10,
    samples: history(downWindow([9])),
    wanted: 8.9,
    replicas: 9,
    reason: "Proportional",
  },
];

function specWith(behavior: object | undefined): ScalerSpec {
  return specOf({ roles: [{ name: "s", maxReplicas: 64 }], ...(behavior === undefined ? {} : { behavior }) });
}

function passOf(c: Case, status: ScalerStatus) {
  const input = inputOf({
    spec: specWith(c.behavior),
    target: specShapedTarget(c.current),
    observations: { s: want(c.wanted, c.current) },
    status,
  });
  // The real Proportional algorithm (RunningRequests over a target of 1 per replica), with its tolerance.
  return plan({ ...input, algorithm: undefined });
}

describe("a specification-shaped status and target, without any extension field", () => {
  it.each(cases)("$why", (c) => {
    const result = passOf(c, specShapedStatus(c.current, c.samples));
    expect(roleOf(result, "s")).toMatchObject({ constrainedReplicas: c.replicas, reason: c.reason });
    if (c.replicas === c.current) expect(result.commit).toBeUndefined();
    else expect(result.commit?.vector).toEqual({ s: c.replicas });
  });

  it.each(cases)("decides as a status with lastPassTime at its newest sample: $why", (c) => {
    const status = specShapedStatus(c.current, c.samples);
    const stamped = { ...status, lastPassTime: c.samples.at(-1)?.timestamp as string };
    const bare = passOf(c, status);
    const withExtension = passOf(c, stamped);
    expect(bare.commit).toEqual(withExtension.commit);
    expect(bare.status.roles).toEqual(withExtension.status.roles);
  });

  it("a history whose newest sample is older than the gap threshold holds for the window", () => {
    const stale = { ...cases[0], samples: history(downWindow([5, 4, 4, 3]), 61) } as Case;
    const result = passOf(stale, specShapedStatus(8, stale.samples));
    expect(roleOf(result, "s")).toMatchObject({ constrainedReplicas: 8, reason: "ScaleDownStabilization" });
    expect(roleOf(result, "s").stabilizationHistory).toEqual([{ timestamp: iso(0), replicas: 3 }]);
    expect(result.commit).toBeUndefined();
  });

  it("a newest sample exactly at the gap threshold keeps the history", () => {
    // Samples from 345 s to 60 s old: the one 300 s old, at 5, is the window's highest.
    const edge = { ...cases[0], samples: history(downWindow([5, 5, 5, 5, 3]), 60) } as Case;
    const result = passOf(edge, specShapedStatus(8, edge.samples));
    expect(roleOf(result, "s")).toMatchObject({ constrainedReplicas: 5, reason: "ScaleDownStabilization" });
    expect(roleOf(result, "s").stabilizationHistory?.[0]).toEqual({ timestamp: iso(-300), replicas: 5 });
  });

  it("the pass writes the extensions back: the next status proves its pass by lastPassTime", () => {
    const c = cases[0] as Case;
    const result = passOf(c, specShapedStatus(c.current, c.samples));
    expect(result.status.lastPassTime).toBe(iso(0));
    expect(Object.keys(result.commit?.decision ?? {})).toEqual(
      expect.arrayContaining(["decisionID", "term", "vector", "baselineVector", "timestamp"]),
    );
  });
});

describe("a specification-shaped predictor, without lastUpdateTime", () => {
  const spec = specOf({
    roles: [{ name: "s", maxReplicas: 64 }],
    algorithm: {
      type: "Predictive",
      predictive: {
        tokenThroughput: { serverTargetTokensPerSecond: "1000" },
        serverTokenCapacityPerReplica: "1000",
      },
    },
  });
  const status: ScalerStatus = {
    predictors: [
      {
        name: "s",
        level: "4000",
        trend: "0",
        covariance: { p00: "1", p01: "0", p10: "0", p11: "1" },
        sampleCount: 10,
        history: [
          { timestamp: iso(-30), tokensPerSecond: "4000" },
          { timestamp: iso(-15), tokensPerSecond: "4000" },
        ],
      },
    ],
  };
  const observation = {
    ...want(0, 4),
    promptTokensPerSecond: 4000,
    generationTokensPerSecond: 0,
    panicPromptTokensPerSecond: 4000,
    panicGenerationTokensPerSecond: 0,
  };

  it("keeps its filter: the newest demand sample stands for the last update", () => {
    const input = inputOf({ spec, target: specShapedTarget(4), observations: { s: observation }, status });
    const result = plan({ ...input, algorithm: undefined });
    expect(roleOf(result, "s").reason).not.toBe("PredictorWarmingUp");
    expect(result.status.predictors?.[0]).toMatchObject({ sampleCount: 11, lastUpdateTime: iso(0) });
  });
});

describe("the extensions the fixtures above leave out", () => {
  it("every status extension is absent from the specification-shaped status", () => {
    const status = specShapedStatus(8, history([3])) as Record<string, unknown>;
    for (const e of extensions.filter((x) => x.field.startsWith("status.") && !x.field.includes("[]")))
      expect(status).not.toHaveProperty(e.field.slice("status.".length));
  });
});
