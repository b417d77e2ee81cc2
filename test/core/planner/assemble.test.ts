/**
 * Status assembly (`assemble.ts`) seen through `plan()`: `MetricsReady` names
 * every role it waits for and why, a rollback's exhaustion is named as the
 * cause, predictor state is kept only when there is some, and a pass records
 * its time and generation.
 */
import { describe, expect, it } from "vitest";
import type { Algorithm } from "../../../src/core/algorithms/types.js";
import type { ScalerStatus } from "../../../src/core/api/scaler.js";
import { plan } from "../../../src/core/planner/plan.js";
import type { PlanInput } from "../../../src/core/planner/types.js";
import type { RoleObservation } from "../../../src/core/signals/types.js";
import { condition, inputOf, roleOf, seconds, specOf, targetOf, want } from "./fixtures.js";

const spec = specOf({
  roles: [
    { name: "p", minReplicas: 1, maxReplicas: 8 },
    { name: "d", minReplicas: 1, maxReplicas: 8 },
  ],
});
const target = targetOf([
  { name: "p", replicas: 2 },
  { name: "d", replicas: 2 },
]);

function metricsReady(observations: Record<string, RoleObservation>, extra: Partial<PlanInput> = {}) {
  const result = plan({ ...inputOf({ spec, target, observations }), ...extra });
  const c = condition(result, "MetricsReady") as { status: string; reason: string; message: string } | undefined;
  return { status: c?.status, reason: c?.reason, message: c?.message };
}

describe("MetricsReady", () => {
  it("is Observed when every driven role has fresh readings from every ready replica", () => {
    expect(metricsReady({ p: want(2), d: want(2) })).toStrictEqual({
      status: "True",
      reason: "Observed",
      message: "all required role signals are available",
    });
  });

  it.each([
    { why: "unobserved", d: undefined, says: "d (unobserved)" },
    { why: "Missing", d: want(2, 2, { signalState: "Missing" }), says: "d (Missing)" },
    { why: "Stale", d: want(2, 2, { signalState: "Stale" }), says: "d (Stale)" },
    { why: "partly sampled", d: want(2, 2, { sampledReplicas: 1 }), says: "d (1 of 2 sampled)" },
  ])("waits for a role whose signals are $why, naming it", ({ d, says }) => {
    expect(metricsReady(d === undefined ? { p: want(2) } : { p: want(2), d })).toStrictEqual({
      status: "False",
      reason: "WaitingForMetrics",
      message: `waiting for ${says}`,
    });
  });

  it("a fully sampled Idle role needs nothing more", () => {
    expect(metricsReady({ p: want(2), d: want(2, 2, { signalState: "Idle" }) }).reason).toBe("Observed");
  });

  it("lists every role it waits for, in spec order", () => {
    expect(metricsReady({}).message).toBe("waiting for p (unobserved), d (unobserved)");
  });

  it("with no driven role, waits for every role's signals", () => {
    const nothingDriven: Algorithm = {
      type: "Proportional",
      recommend: (input) => ({
        roles: input.roles.map((r) => ({ role: r.name, scaled: false, replicas: r.currentReplicas, reason: "Off" })),
        predictors: [],
      }),
    };
    expect(metricsReady({ p: want(2) }, { algorithm: nothingDriven })).toMatchObject({
      status: "False",
      message: "waiting for d (unobserved)",
    });
    expect(metricsReady({ p: want(2), d: want(2) }, { algorithm: nothingDriven }).status).toBe("True");
  });

  it("only driven roles count when some are driven", () => {
    const pOnly: Algorithm = {
      type: "Proportional",
      recommend: (input) => ({
        roles: input.roles.map((r) => ({
          role: r.name,
          scaled: r.name === "p",
          replicas: r.currentReplicas,
          reason: "Test",
        })),
        predictors: [],
      }),
    };
    expect(metricsReady({ p: want(2) }, { algorithm: pOnly }).status).toBe("True");
  });

  it("names the exhaustion as the cause while a rollback holds", () => {
    const status: ScalerStatus = {
      pendingCohort: {
        decisionID: "c",
        term: 1,
        baselineVector: { p: 2, d: 2 },
        targetVector: { p: 4, d: 2 },
        startedAt: new Date(seconds(-400)).toISOString(),
      },
    };
    const pending = targetOf([
      { name: "p", replicas: 4, ready: 2, quotaReserved: 2 },
      { name: "d", replicas: 2 },
    ]);
    const result = plan(inputOf({ spec, target: pending, observations: { p: want(4, 2) }, status }));
    expect(condition(result, "MetricsReady")).toMatchObject({
      status: "False",
      reason: "ResourceExhausted",
      message: "replicas were not admitted; waiting for d (unobserved)",
    });
    const blind = plan(inputOf({ spec, target: pending, observations: {}, status }));
    expect(condition(blind, "MetricsReady")).toMatchObject({
      message: "replicas were not admitted; waiting for p (unobserved), d (unobserved)",
    });
  });

  describe("names a rate window shorter than two engine scrapes (rule window-scrapes)", () => {
    const windows = (stable: number, panic: number) =>
      specOf({
        roles: spec.roles,
        algorithm: {
          type: "Proportional",
          proportional: { metric: "RunningRequests", roleTargets: [{ name: "p", target: "1" }] },
          tokenThroughput: { stableWindowSeconds: stable, panicWindowSeconds: panic },
        },
      });
    const at = (
      s: ReturnType<typeof windows>,
      extra: Partial<PlanInput>,
      observations: Record<string, RoleObservation>,
    ) => {
      const c = condition(plan({ ...inputOf({ spec: s, target, observations }), ...extra }), "MetricsReady");
      return c as { status: string; reason: string; message: string } | undefined;
    };
    const panicShort =
      "spec.algorithm.tokenThroughput.panicWindowSeconds = 15: 15 s holds under two engine scrapes of 15 s, so it never reads a rate: panic never engages, and latency and token-rate Proportional read the stable window; write at least 30 s";

    it("after the message of a condition that holds: a panic window that reads nothing leaves every signal available", () => {
      expect(at(windows(180, 15), { engineScrapeIntervalSeconds: 15 }, { p: want(2), d: want(2) })).toMatchObject({
        status: "True",
        reason: "Observed",
        message: `all required role signals are available; ${panicShort}`,
      });
    });

    it("after the roles it waits for: a stable window that reads nothing is why they wait", () => {
      // kube-prometheus-stack's default scrape, 30 s, under the shortest stable window the specification allows.
      const c = at(windows(30, 10), { engineScrapeIntervalSeconds: 30 }, { p: want(2, 2, { signalState: "Missing" }) });
      expect(c?.reason).toBe("WaitingForMetrics");
      expect(c?.message).toMatch(
        /^waiting for p \(Missing\), d \(unobserved\); spec\.algorithm\.tokenThroughput\.stableWindowSeconds = 30: 30 s holds under two engine scrapes of 30 s, .*; spec\.algorithm\.tokenThroughput\.panicWindowSeconds = 10: /,
      );
    });

    it.each([
      ["windows of two scrapes", 30, 30, { engineScrapeIntervalSeconds: 15 }],
      ["no scrape interval given", 180, 15, {}],
    ] as const)("says nothing more with %s", (_why, stable, panic, extra) => {
      expect(at(windows(stable, panic), extra, { p: want(2), d: want(2) })?.message).toBe(
        "all required role signals are available",
      );
    });
  });
});

describe("the assembled status", () => {
  it("records the pass's time and the scaler generation, and no predictors when the algorithm keeps none", () => {
    const result = plan(inputOf({ spec, target, observations: { p: want(2), d: want(2) }, generation: 6 }));
    expect(result.status.lastPassTime).toBe(new Date(seconds(0)).toISOString());
    expect(result.status.observedGeneration).toBe(6);
    expect(result.status).not.toHaveProperty("predictors");
    expect(result.status).not.toHaveProperty("lastCommit");
    expect(result.status).not.toHaveProperty("pendingCohort");
    expect(result.status).not.toHaveProperty("rebalance");
    expect(result.status).not.toHaveProperty("lastScaleDown");
    expect(result).not.toHaveProperty("commit");
    // A role that never grew has no growth time.
    expect(roleOf(result, "p")).not.toHaveProperty("lastScaleUpTime");
  });

  it("a held role adds no history; a scaler without a generation records none", () => {
    const input = inputOf({ spec, target, observations: { p: want(2) } });
    const result = plan({ ...input, scaler: { ...input.scaler, metadata: { name: "llm", uid: "scaler-uid" } } });
    expect(roleOf(result, "d")).not.toHaveProperty("stabilizationHistory");
    expect(roleOf(result, "p").stabilizationHistory).toHaveLength(1);
    expect(result.status).not.toHaveProperty("observedGeneration");
  });

  it("keeps the algorithm's predictor state", () => {
    const predicting: Algorithm = {
      type: "Proportional",
      recommend: (input) => ({
        roles: input.roles.map((r) => ({ role: r.name, scaled: true, replicas: r.currentReplicas, reason: "Test" })),
        predictors: [{ name: "p", samples: [] }] as never,
      }),
    };
    const result = plan({
      ...inputOf({ spec, target, observations: { p: want(2), d: want(2) } }),
      algorithm: predicting,
    });
    expect(result.status.predictors).toStrictEqual([{ name: "p", samples: [] }]);
  });

  it("a role without a recommendation reports no raw recommendation and the reason NotScaled", () => {
    const silent: Algorithm = {
      type: "Proportional",
      recommend: (input) => ({
        roles: input.roles
          .filter((r) => r.name === "p")
          .map((r) => ({ role: r.name, scaled: true, replicas: r.currentReplicas, reason: "Test" })),
        predictors: [],
      }),
    };
    const result = plan({ ...inputOf({ spec, target, observations: { p: want(2), d: want(2) } }), algorithm: silent });
    expect(roleOf(result, "d")).not.toHaveProperty("rawRecommendedReplicas");
    expect(roleOf(result, "d").reason).toBe("NotScaled");
    expect(roleOf(result, "p").rawRecommendedReplicas).toBe(2);
  });
});
