import { describe, expect, it } from "vitest";
import { plan } from "../../../src/core/planner/plan.js";
import { bindingAnnotation } from "../../../src/core/api/model-deployment.js";
import type { ScalerStatus } from "../../../src/core/api/scaler.js";
import { condition, inputOf, roleOf, seconds, specOf, t0, targetOf, want } from "./fixtures.js";

const bound = { [bindingAnnotation]: JSON.stringify({ scalerName: "llm", scalerUID: "scaler-uid", term: 3 }) };
const server = specOf({ roles: [{ name: "s", minReplicas: 1, maxReplicas: 16 }] });

describe("bounds and ratios gate planning", () => {
  it.each([
    {
      why: "a target role without bounds",
      roles: [
        { name: "s", replicas: 2 },
        { name: "x", replicas: 1 },
      ],
      reason: "BoundsConflict",
    },
    { why: "a current count outside the bounds", roles: [{ name: "s", replicas: 20 }], reason: "BoundsConflict" },
  ])("$why -> $reason, nothing planned", ({ roles, reason }) => {
    const result = plan(inputOf({ spec: server, target: targetOf(roles), observations: { s: want(8) } }));
    expect(result.commit).toBeUndefined();
    expect(condition(result, "Blocked")).toMatchObject({ status: "True", reason });
    expect(condition(result, "MetricsReady")).toMatchObject({ status: "False", reason });
    expect(roleOf(result, "s").constrainedReplicas).toBeUndefined();
  });

  it("a current vector outside a ratio band -> RatioConflict", () => {
    const spec = specOf({
      roles: [
        { name: "p", maxReplicas: 16 },
        { name: "d", maxReplicas: 16 },
      ],
      ratios: [{ numeratorRole: "p", denominatorRole: "d", min: "0.5", max: "2" }],
    });
    const result = plan(
      inputOf({
        spec,
        target: targetOf([
          { name: "p", replicas: 6 },
          { name: "d", replicas: 2 },
        ]),
        observations: { p: want(6), d: want(2) },
      }),
    );
    expect(result.commit).toBeUndefined();
    expect(condition(result, "Blocked")).toMatchObject({ status: "True", reason: "RatioConflict" });
  });
});

describe("modes and binding", () => {
  it("Active commits the vector with its decision under the binding's term", () => {
    const result = plan(
      inputOf({
        spec: server,
        target: targetOf([{ name: "s", replicas: 2 }], { annotations: bound }),
        observations: { s: want(5) },
      }),
    );
    expect(result.commit).toMatchObject({
      vector: { s: 5 },
      baselineVector: { s: 2 },
      targetGeneration: 2,
      reason: "Scale",
      decision: { term: 3, vector: { s: 5 } },
    });
    expect(result.commit?.binding).toBeUndefined();
    expect(result.status.lastCommit).toMatchObject({
      term: 3,
      vector: { s: 5 },
      baselineVector: { s: 2 },
      targetGeneration: 2,
    });
    expect(result.status.pendingCohort).toMatchObject({ baselineVector: { s: 2 }, targetVector: { s: 5 } });
    expect(roleOf(result, "s")).toMatchObject({
      rawRecommendedReplicas: 5,
      constrainedReplicas: 5,
      reason: "Echo",
      lastScaleUpTime: new Date(t0).toISOString(),
    });
  });

  it("an unbound target gets the binding installed with the first commit", () => {
    const result = plan(
      inputOf({ spec: server, target: targetOf([{ name: "s", replicas: 2 }]), observations: { s: want(5) } }),
    );
    expect(result.commit?.binding).toEqual({ scalerName: "llm", scalerUID: "scaler-uid", term: 1 });
    expect(result.bindingWrite).toMatchObject({ kind: "acquire" });
  });

  it("Shadow plans the same vector and never commits", () => {
    const result = plan(
      inputOf({
        spec: { ...server, mode: "Shadow" },
        target: targetOf([{ name: "s", replicas: 2 }]),
        observations: { s: want(5) },
      }),
    );
    expect(result.commit).toBeUndefined();
    expect(roleOf(result, "s").constrainedReplicas).toBe(5);
    expect(condition(result, "Active")).toMatchObject({ status: "False", reason: "ShadowMode" });
    expect(result.status.binding?.term).toBeUndefined();
  });

  it.each([
    {
      why: "suspended",
      spec: { ...server, suspend: true },
      target: targetOf([{ name: "s", replicas: 2 }]),
      reason: "Suspended",
    },
    { why: "target missing", spec: server, target: undefined, reason: "TargetNotFound" },
    {
      why: "bound to another scaler",
      spec: server,
      target: targetOf([{ name: "s", replicas: 2 }], {
        annotations: { [bindingAnnotation]: JSON.stringify({ scalerName: "x", scalerUID: "x", term: 1 }) },
      }),
      reason: "AlreadyBound",
    },
    {
      why: "an unparseable binding",
      spec: server,
      target: targetOf([{ name: "s", replicas: 2 }], { annotations: { [bindingAnnotation]: "{" } }),
      reason: "InvalidBinding",
    },
  ])("$why: no plan, Bound and Active say $reason", ({ spec, target, reason }) => {
    const result = plan(inputOf({ spec, target, observations: { s: want(5) } }));
    expect(result.commit).toBeUndefined();
    expect(condition(result, "Bound")).toMatchObject({ status: "False", reason });
    expect(condition(result, "Active")).toMatchObject({ status: "False", reason });
    expect(result.status.roles).toBeUndefined();
  });
});

/** A status whose history for `role` already spans the scale-down window. */
function spanned(role: string, replicas: number): ScalerStatus {
  return {
    lastPassTime: new Date(t0 - 15_000).toISOString(),
    roles: [
      {
        name: role,
        currentReplicas: replicas,
        readyReplicas: 2,
        signalState: "Fresh",
        stabilizationHistory: [{ timestamp: new Date(t0 - 400_000).toISOString(), replicas }],
      },
    ],
  };
}

describe("constraint reasons replace the algorithm's", () => {
  const two = (fragment: object = {}) =>
    specOf({
      roles: [
        { name: "p", maxReplicas: 64 },
        { name: "d", maxReplicas: 64 },
      ],
      ratios: [{ numeratorRole: "p", denominatorRole: "d", min: "0.5", max: "2", target: "1" }],
      ...fragment,
    });
  it.each([
    {
      why: "above maxReplicas (not a block)",
      spec: server,
      roles: [{ name: "s", replicas: 2 }],
      obs: { s: want(40) },
      role: "s",
      value: 6,
      reason: "ScaleUpLimit",
      blocked: "PacingBounded",
    },
    {
      why: "clamped to maxReplicas only",
      spec: specOf({ roles: [{ name: "s", maxReplicas: 3 }] }),
      roles: [{ name: "s", replicas: 2 }],
      obs: { s: want(40) },
      role: "s",
      value: 3,
      reason: "MaxReplicas",
      blocked: "Ready",
    },
    {
      why: "first scale-down waits for the window",
      spec: server,
      roles: [{ name: "s", replicas: 6 }],
      obs: { s: want(2) },
      role: "s",
      value: 6,
      reason: "ScaleDownStabilization",
      blocked: "PacingBounded",
    },
    {
      why: "a sibling growing holds the shrink",
      spec: two(),
      roles: [
        { name: "p", replicas: 4 },
        { name: "d", replicas: 4 },
      ],
      obs: { p: want(6), d: want(3) },
      role: "d",
      value: 4,
      reason: "ComponentScalingUp",
      blocked: "Ready",
      status: spanned("d", 3),
    },
    {
      why: "ratio coupling moves the smaller role",
      spec: two({ behavior: { scaleUp: { stepPolicy: { type: "Pods", value: 8 } } } }),
      roles: [
        { name: "p", replicas: 2 },
        { name: "d", replicas: 2 },
      ],
      obs: { p: want(10), d: want(2) },
      role: "d",
      value: 5,
      reason: "RatioCoupled",
      blocked: "Ready",
    },
  ])("$why", ({ spec, roles, obs, role, value, reason, blocked, status }) => {
    const result = plan(
      inputOf({ spec, target: targetOf(roles), observations: obs, ...(status === undefined ? {} : { status }) }),
    );
    expect(roleOf(result, role)).toMatchObject({ constrainedReplicas: value, reason });
    expect(condition(result, "Blocked")?.reason).toBe(blocked);
  });

  it("a role with incomplete coverage may grow but not shrink", () => {
    const obs = { ...want(1, 4), sampledReplicas: 3 };
    const history: ScalerStatus = {
      lastPassTime: new Date(t0 - 15_000).toISOString(),
      roles: [
        {
          name: "s",
          currentReplicas: 4,
          readyReplicas: 4,
          signalState: "Fresh",
          stabilizationHistory: [{ timestamp: new Date(t0 - 400_000).toISOString(), replicas: 1 }],
        },
      ],
    };
    const result = plan(
      inputOf({
        spec: server,
        target: targetOf([{ name: "s", replicas: 4 }]),
        observations: { s: obs },
        status: history,
      }),
    );
    expect(roleOf(result, "s")).toMatchObject({ constrainedReplicas: 4, reason: "IncompleteCoverage" });
    expect(condition(result, "MetricsReady")).toMatchObject({ status: "False", reason: "WaitingForMetrics" });
    const grow = plan(
      inputOf({
        spec: server,
        target: targetOf([{ name: "s", replicas: 4 }]),
        observations: { s: { ...obs, runningRequests: 6 } },
      }),
    );
    expect(grow.commit?.vector).toEqual({ s: 6 });
  });
});

describe("status writes", () => {
  it("a steady pass does not move the control plane", () => {
    const target = targetOf([{ name: "s", replicas: 3 }], { annotations: bound });
    const first = plan(inputOf({ spec: server, target, observations: { s: want(3) } }));
    const second = plan(
      inputOf({ spec: server, target, observations: { s: want(3) }, status: first.status, nowMs: seconds(15) }),
    );
    expect(second.statusChanged).toBe(false);
    expect(second.status.roles?.[0]?.stabilizationHistory).toHaveLength(2);
  });

  it("equal inputs give equal outputs", () => {
    const input = inputOf({
      spec: server,
      target: targetOf([{ name: "s", replicas: 3 }]),
      observations: { s: want(7) },
    });
    expect(plan(input)).toEqual(plan(input));
  });
});

describe("guards and recoveries", () => {
  const activeSpec = specOf({
    roles: [
      { name: "p", maxReplicas: 16 },
      { name: "d", maxReplicas: 16 },
    ],
  });

  it("a pending cohort holds growth everywhere, then rolls back in one write", () => {
    const first = plan(
      inputOf({
        spec: activeSpec,
        target: targetOf(
          [
            { name: "p", replicas: 2 },
            { name: "d", replicas: 2 },
          ],
          { annotations: bound },
        ),
        observations: { p: want(4), d: want(2) },
      }),
    );
    expect(first.commit?.vector).toEqual({ p: 4, d: 2 });
    const pendingTarget = targetOf(
      [
        { name: "p", replicas: 4, quotaReserved: 2, ready: 2 },
        { name: "d", replicas: 2 },
      ],
      { annotations: bound, generation: 2 },
    );
    const held = plan(
      inputOf({
        spec: activeSpec,
        target: pendingTarget,
        observations: { p: want(6), d: want(5) },
        status: first.status,
        nowMs: seconds(60),
      }),
    );
    expect(held.commit).toBeUndefined();
    expect(roleOf(held, "d")).toMatchObject({ constrainedReplicas: 2, reason: "PendingAdmission" });
    const rolled = plan(
      inputOf({
        spec: activeSpec,
        target: pendingTarget,
        observations: { p: want(6), d: want(2) },
        status: held.status,
        nowMs: seconds(300),
      }),
    );
    expect(rolled.commit).toMatchObject({ vector: { p: 2, d: 2 }, reason: "ResourceExhausted" });
    expect(rolled.status.pendingCohort).toBeUndefined();
    expect(rolled.status.rebalance).toMatchObject({
      receiverRole: "p",
      reason: "ResourceExhausted",
      donationAttempted: false,
      exhaustionEpisodeGeneration: 1,
    });
    expect(condition(rolled, "Blocked")).toMatchObject({ status: "True", reason: "ResourceExhausted" });
  });

  it("an aborted retirement restores the pre-scale-down vector and cools down", () => {
    const status: ScalerStatus = {
      lastScaleDown: { role: "d", ordinal: 2, preScaleDownVector: { p: 2, d: 3 }, outcome: "Committed" },
    };
    const target = targetOf(
      [
        { name: "p", replicas: 2 },
        { name: "d", replicas: 2 },
      ],
      { annotations: bound, retirement: { roleName: "d", replicaOrdinal: 2, state: "Aborted" } },
    );
    const result = plan(inputOf({ spec: activeSpec, target, observations: { p: want(2), d: want(2) }, status }));
    expect(result.commit).toMatchObject({ vector: { p: 2, d: 3 }, reason: "ScaleDownAborted" });
    expect(result.status.lastScaleDown).toMatchObject({
      outcome: "Aborted",
      abortedAt: new Date(t0).toISOString(),
      cooldownUntil: new Date(seconds(300)).toISOString(),
    });
    expect(condition(result, "Blocked")?.reason).toBe("ScaleDownAborted");
    expect(result.status.pendingCohort).toBeUndefined();
  });

  it("a decode role holds its count during the post-scale-up grace", () => {
    const spec = specOf({
      roles: [{ name: "d", maxReplicas: 16 }],
      behavior: { scaleDown: { stabilizationWindowSeconds: 30 } },
    });
    const status: ScalerStatus = {
      lastPassTime: new Date(seconds(-15)).toISOString(),
      roles: [
        {
          name: "d",
          currentReplicas: 4,
          readyReplicas: 4,
          signalState: "Fresh",
          lastScaleUpTime: new Date(seconds(-60)).toISOString(),
          stabilizationHistory: [{ timestamp: new Date(seconds(-60)).toISOString(), replicas: 2 }],
        },
      ],
    };
    const result = plan(
      inputOf({
        spec,
        target: targetOf([{ name: "d", replicas: 4, kind: "Decode" }]),
        observations: { d: want(2, 4) },
        status,
      }),
    );
    expect(roleOf(result, "d")).toMatchObject({ constrainedReplicas: 4, reason: "DecodePostScaleUpGrace" });
  });
});

describe("exhaustion episodes", () => {
  const spec = specOf({ roles: [{ name: "s", maxReplicas: 16 }] });
  const status: ScalerStatus = {
    lastCommit: {
      decisionID: "d-1",
      term: 3,
      vector: { s: 3 },
      baselineVector: { s: 2 },
      timestamp: new Date(t0).toISOString(),
      targetGeneration: 5,
    },
    rebalance: {
      receiverRole: "s",
      exhaustionEpisodeGeneration: 1,
      donationAttempted: true,
      reason: "ReceiverAcquire",
    },
  };
  it.each([
    { why: "our own commit keeps the episode", generation: 1, targetGeneration: 5, kept: true },
    { why: "a scaler spec edit starts a new one", generation: 2, targetGeneration: 5, kept: false },
    { why: "an external target change starts a new one", generation: 1, targetGeneration: 6, kept: false },
  ])("$why", ({ generation, targetGeneration, kept }) => {
    const target = targetOf([{ name: "s", replicas: 3 }], { annotations: bound, generation: targetGeneration });
    const result = plan(inputOf({ spec, target, observations: { s: want(3) }, status, generation }));
    expect(result.status.rebalance !== undefined).toBe(kept);
  });
});
