import { describe, expect, it } from "vitest";
import {
  activeRetirement,
  cohortState,
  growthHold,
  restoreVector,
  rollbackVector,
  scaleDownAborted,
  scaleDownHold,
  type ScaleDownHoldInput,
} from "../../../src/core/planner/guards.js";
import type { LastScaleDown, PendingCohort } from "../../../src/core/api/scaler.js";
import { t0, targetOf, want } from "./fixtures.js";

const free: ScaleDownHoldInput = {
  kind: "Server",
  observation: want(1),
  needsOwnSignals: true,
  algorithmHold: undefined,
  retirement: undefined,
  abortCooldownUntilMs: undefined,
  lastScaleUpMs: undefined,
  decodeGraceSeconds: 120,
  nowMs: t0,
};

describe("scaleDownHold", () => {
  it.each([
    { why: "nothing holds", input: {}, want: undefined },
    { why: "no ready replica", input: { observation: want(1, 0) }, want: "NoReadyReplicas" },
    { why: "an unobserved role", input: { observation: undefined }, want: "NoReadyReplicas" },
    {
      why: "incomplete coverage",
      input: { observation: { ...want(1, 4), sampledReplicas: 3 } },
      want: "IncompleteCoverage",
    },
    {
      why: "stale signals",
      input: { observation: { ...want(1), signalState: "Stale" as const } },
      want: "IncompleteCoverage",
    },
    {
      why: "missing signals",
      input: { observation: { ...want(1), signalState: "Missing" as const } },
      want: "IncompleteCoverage",
    },
    {
      why: "idle signals are known",
      input: { observation: { ...want(1), signalState: "Idle" as const } },
      want: undefined,
    },
    {
      why: "a ratio-coupled role's missing signals hold nothing",
      input: {
        needsOwnSignals: false,
        observation: { ...want(1), signalState: "Missing" as const, sampledReplicas: 0 },
      },
      want: undefined,
    },
    {
      why: "a ratio-coupled role still needs a ready replica",
      input: { needsOwnSignals: false, observation: { ...want(1, 0), signalState: "Missing" as const } },
      want: "NoReadyReplicas",
    },
    {
      why: "a ratio-coupled role's algorithm hold still holds",
      input: { needsOwnSignals: false, algorithmHold: { reason: "WaitingForMetrics" } },
      want: "WaitingForMetrics",
    },
    { why: "the algorithm holds (panic)", input: { algorithmHold: { reason: "Panic" } }, want: "Panic" },
    {
      why: "a retirement anywhere",
      input: { retirement: { roleName: "other", replicaOrdinal: 3, state: "Draining" } },
      want: "RetirementActive",
    },
    { why: "abort cooldown running", input: { abortCooldownUntilMs: t0 + 1 }, want: "AbortCooldown" },
    { why: "abort cooldown over", input: { abortCooldownUntilMs: t0 }, want: undefined },
    {
      why: "decode grace after growth",
      input: { kind: "Decode" as const, lastScaleUpMs: t0 - 119_000 },
      want: "DecodePostScaleUpGrace",
    },
    { why: "decode grace over", input: { kind: "Decode" as const, lastScaleUpMs: t0 - 120_000 }, want: undefined },
    {
      why: "grace is for Decode roles only",
      input: { kind: "Prefill" as const, lastScaleUpMs: t0 - 1 },
      want: undefined,
    },
  ])("$why", ({ input, want: reason }) => {
    expect(scaleDownHold({ ...free, ...input })?.reason).toBe(reason);
  });
});

describe("growthHold", () => {
  it.each([
    { why: "free", input: {}, want: undefined },
    { why: "a committed cohort is pending anywhere", input: { cohortPending: true }, want: "PendingAdmission" },
    {
      why: "this role has unadmitted replicas",
      input: { roleStatus: { name: "s", quotaReserved: 2 } },
      want: "PendingAdmission",
    },
    { why: "exhaustion backoff", input: { exhaustedUntilMs: t0 + 1 }, want: "ResourceExhausted" },
    { why: "exhaustion backoff over", input: { exhaustedUntilMs: t0 }, want: undefined },
    {
      why: "reservations covering the count",
      input: { roleStatus: { name: "s", quotaReserved: 3 } },
      want: undefined,
    },
    { why: "no admission step (no quotaReserved)", input: { roleStatus: { name: "s" } }, want: undefined },
  ])("$why", ({ input, want: reason }) => {
    expect(
      growthHold({
        cohortPending: false,
        roleStatus: undefined,
        currentReplicas: 3,
        exhaustedUntilMs: undefined,
        nowMs: t0,
        ...input,
      })?.reason,
    ).toBe(reason);
  });
});

describe("pending cohort", () => {
  const cohort: PendingCohort = {
    decisionID: "d",
    term: 1,
    baselineVector: { p: 2, d: 2 },
    targetVector: { p: 4, d: 2 },
    startedAt: new Date(t0).toISOString(),
  };
  const statuses = (reserved: number) => new Map([["p", { name: "p", quotaReserved: reserved }]]);
  it.each([
    { why: "admitted when reservations cover the commit", reserved: 4, at: 10, want: "Admitted" },
    { why: "pending before the timeout", reserved: 3, at: 299, want: "Pending" },
    { why: "timed out at pendingTimeoutSeconds", reserved: 3, at: 300, want: "TimedOut" },
  ])("$why", ({ reserved, at, want: kind }) => {
    expect(cohortState(cohort, { p: 4, d: 2 }, statuses(reserved), t0 + at * 1000, 300).kind).toBe(kind);
  });

  it("rolls back every grown role and nothing else", () => {
    expect(
      rollbackVector({ ...cohort, targetVector: { p: 4, d: 3 }, baselineVector: { p: 2, d: 2 } }, { p: 4, d: 3, e: 1 }),
    ).toEqual({ p: 2, d: 2, e: 1 });
  });
});

describe("aborted scale-down", () => {
  const last: LastScaleDown = { role: "d", ordinal: 2, preScaleDownVector: { p: 2, d: 3 }, outcome: "Committed" };
  const current = { p: 2, d: 2 };
  it.each([
    {
      why: "our removed ordinal aborted",
      retirement: { roleName: "d", replicaOrdinal: 2, state: "Aborted" },
      want: true,
    },
    { why: "still draining", retirement: { roleName: "d", replicaOrdinal: 2, state: "Draining" }, want: false },
    {
      why: "another role's retirement",
      retirement: { roleName: "p", replicaOrdinal: 1, state: "Aborted" },
      want: false,
    },
    { why: "an ordinal we kept", retirement: { roleName: "d", replicaOrdinal: 1, state: "Aborted" }, want: false },
  ])("$why", ({ retirement, want: aborted }) => {
    const target = targetOf(
      [
        { name: "p", replicas: 2 },
        { name: "d", replicas: 2 },
      ],
      { retirement },
    );
    expect(scaleDownAborted(last, target, current)).toBe(aborted);
  });

  it("an abort already handled does not restore twice", () => {
    const target = targetOf([{ name: "d", replicas: 3 }], {
      retirement: { roleName: "d", replicaOrdinal: 2, state: "Aborted" },
    });
    expect(scaleDownAborted({ ...last, outcome: "Aborted" }, target, current)).toBe(false);
  });

  it("restores the reduced roles and keeps growth made since", () => {
    expect(restoreVector(last, { p: 3, d: 2 })).toEqual({ p: 3, d: 3 });
  });
});

describe("activeRetirement", () => {
  it.each([
    { state: "Draining", active: true },
    { state: "Completed", active: false },
    { state: "Aborted", active: false },
  ])("a $state retirement is active: $active", ({ state, active }) => {
    const target = targetOf([{ name: "d", replicas: 2 }], { retirement: { roleName: "d", replicaOrdinal: 2, state } });
    expect(activeRetirement(target) !== undefined).toBe(active);
  });

  it("no retirement is none", () => {
    expect(activeRetirement(targetOf([{ name: "d", replicas: 2 }]))).toBeUndefined();
  });
});

describe("cohortState edges", () => {
  const cohort: PendingCohort = {
    decisionID: "d",
    term: 1,
    baselineVector: { p: 2, d: 2 },
    targetVector: { p: 4, d: 1 },
    startedAt: new Date(t0).toISOString(),
  };
  it("a role without quotaReserved has no admission step", () => {
    expect(cohortState(cohort, { p: 4, d: 1 }, new Map([["p", { name: "p" }]]), t0 + 400_000, 300).kind).toBe(
      "Admitted",
    );
  });
  it("a grown role shrunk back to its baseline since needs nothing", () => {
    const statuses = new Map([["p", { name: "p", quotaReserved: 1 }]]);
    expect(cohortState(cohort, { p: 2, d: 1 }, statuses, t0 + 400_000, 300).kind).toBe("Admitted");
  });
  it("a grown role now below the committed count needs only its current count", () => {
    const statuses = new Map([["p", { name: "p", quotaReserved: 3 }]]);
    expect(cohortState(cohort, { p: 3, d: 1 }, statuses, t0 + 10_000, 300).kind).toBe("Admitted");
    expect(cohortState(cohort, { p: 4, d: 1 }, statuses, t0 + 10_000, 300)).toEqual({
      kind: "Pending",
      unadmittedRoles: ["p"],
    });
  });
  it("restores only roles the scale-down reduced; roles grown since keep their counts", () => {
    const last: LastScaleDown = { role: "d", ordinal: 1, preScaleDownVector: { p: 2, d: 2 }, outcome: "Committed" };
    expect(restoreVector(last, { p: 3, d: 1 })).toEqual({ p: 3, d: 2 });
  });
});

describe("hold messages name what holds", () => {
  it.each([
    { input: { observation: want(1, 0) }, text: "no ready replica" },
    { input: { observation: { ...want(1), signalState: "Stale" as const } }, text: "signals are Stale" },
    { input: { observation: { ...want(1, 4), sampledReplicas: 3 } }, text: "3 of 4 ready replicas sampled" },
    { input: { algorithmHold: { reason: "Panic" } }, text: "the algorithm holds scale-down (Panic)" },
    {
      input: { retirement: { roleName: "d", replicaOrdinal: 3, state: "Draining" } },
      text: "retirement of d ordinal 3 is Draining",
    },
    { input: { abortCooldownUntilMs: t0 + 1000 }, text: `until ${new Date(t0 + 1000).toISOString()}` },
    {
      input: { kind: "Decode" as const, lastScaleUpMs: t0 - 1000 },
      text: `added at ${new Date(t0 - 1000).toISOString()} are settling`,
    },
  ])("$text", ({ input, text }) => {
    expect(scaleDownHold({ ...free, ...input })?.message).toContain(text);
  });

  it.each([
    { input: { cohortPending: true }, text: "a committed scale-up is waiting for admission" },
    { input: { roleStatus: { name: "s", quotaReserved: 1 } }, text: "2 replicas wait for admission" },
    { input: { exhaustedUntilMs: t0 + 1000 }, text: `retrying after ${new Date(t0 + 1000).toISOString()}` },
  ])("$text", ({ input, text }) => {
    const hold = growthHold({
      cohortPending: false,
      roleStatus: undefined,
      currentReplicas: 3,
      exhaustedUntilMs: undefined,
      nowMs: t0,
      ...input,
    });
    expect(hold?.message).toContain(text);
  });
});

describe("guards on partial target status", () => {
  const bare = (): ReturnType<typeof targetOf> => {
    const { status: _status, ...target } = targetOf([{ name: "d", replicas: 2 }]);
    return target;
  };
  const last: LastScaleDown = { role: "d", ordinal: 2, preScaleDownVector: { d: 3 }, outcome: "Committed" };

  it("a target without status or with a null retirement has no retirement and no abort", () => {
    expect(activeRetirement(bare())).toBeUndefined();
    expect(scaleDownAborted(last, bare(), { d: 2 })).toBe(false);
    const cleared = targetOf([{ name: "d", replicas: 2 }]);
    const withNull = { ...cleared, status: { ...cleared.status, retirement: null } } as unknown as typeof cleared;
    expect(activeRetirement(withNull)).toBeUndefined();
    expect(scaleDownAborted(last, withNull, { d: 2 })).toBe(false);
  });

  it("an abort needs our committed scale-down of that role, which it reduced", () => {
    const aborted = (roleName: string, replicaOrdinal: number) =>
      targetOf([{ name: "d", replicas: 2 }], { retirement: { roleName, replicaOrdinal, state: "Aborted" } });
    expect(scaleDownAborted(last, aborted("x", 2), { d: 2, x: 2 })).toBe(false);
    expect(scaleDownAborted(last, aborted("d", 2), {})).toBe(false);
    // The role was not reduced: the pre-scale-down count equals the current one.
    expect(scaleDownAborted({ ...last, preScaleDownVector: { d: 2 } }, aborted("d", 2), { d: 2 })).toBe(false);
    expect(scaleDownAborted(last, aborted("d", 2), { d: 2 })).toBe(true);
  });

  it("restore and rollback never add a role the target lacks", () => {
    expect(restoreVector(last, { p: 1 })).toEqual({ p: 1 });
    const cohort: PendingCohort = {
      decisionID: "d",
      term: 1,
      baselineVector: { p: 2, d: 2 },
      targetVector: { p: 4, d: 2 },
      startedAt: new Date(t0).toISOString(),
    };
    expect(rollbackVector(cohort, { p: 4 })).toEqual({ p: 2 });
    // A role below its baseline keeps its count.
    expect(rollbackVector(cohort, { p: 1, d: 2 })).toEqual({ p: 1, d: 2 });
  });

  it("cohort: only grown roles wait, a new role grows from zero, a role without status has no admission step", () => {
    const cohort: PendingCohort = {
      decisionID: "d",
      term: 1,
      baselineVector: { p: 2, d: 3 },
      targetVector: { p: 2, d: 2, e: 1 },
      startedAt: new Date(t0).toISOString(),
    };
    const statuses = new Map([
      ["p", { name: "p", quotaReserved: 1 }],
      ["d", { name: "d", quotaReserved: 1 }],
      ["e", { name: "e", quotaReserved: 0 }],
    ]);
    // p held at its baseline and d shrank: neither waits, whatever their reservations; e is new and waits.
    expect(cohortState(cohort, { p: 2, d: 2, e: 1 }, statuses, t0 + 1000, 300)).toEqual({
      kind: "Pending",
      unadmittedRoles: ["e"],
    });
    expect(cohortState(cohort, { p: 2, d: 2, e: 1 }, new Map(), t0 + 1000, 300).kind).toBe("Admitted");
  });
});
