/**
 * `rebuildRecords` on its own: which decisions it rebuilds from, and the exact
 * records each commit reason leaves (the pass-level scenarios are in
 * `rebuild-records.test.ts`).
 */
import { describe, expect, it } from "vitest";
import type { DecisionPayload } from "../../../src/core/api/model-deployment.js";
import type { LastCommit, LastScaleDown, ScalerStatus } from "../../../src/core/api/scaler.js";
import { rebuildRecords, type RebuildInput } from "../../../src/core/planner/rebuild-records.js";

const at = (s: number): string => new Date(Date.parse("2026-11-30T10:00:00Z") + s * 1000).toISOString();

const decision: DecisionPayload = {
  decisionID: "d-new",
  term: 3,
  vector: { p: 4, d: 2 },
  baselineVector: { p: 2, d: 2 },
  timestamp: at(0),
  targetGeneration: 8,
  reason: "Scale",
};
const stored: LastCommit = {
  decisionID: "d-old",
  term: 3,
  vector: { p: 2, d: 2 },
  baselineVector: { p: 2, d: 3 },
  timestamp: at(-60),
  targetGeneration: 7,
};

function input(patch: Partial<RebuildInput> = {}, d: Partial<DecisionPayload> = {}): RebuildInput {
  return {
    base: { lastCommit: stored },
    decision: { ...decision, ...d },
    term: 3,
    roleOrder: ["p", "d"],
    generation: 5,
    cooldownAfterAbortSeconds: 120,
    ...patch,
  };
}

const rebuiltBase = (i: RebuildInput): ScalerStatus => {
  const out = rebuildRecords(i);
  if (out.kind !== "Rebuilt") throw new Error("nothing rebuilt");
  return out.base;
};

describe("which decisions are rebuilt", () => {
  it.each([
    { why: "no decision", i: input({ decision: undefined }) },
    { why: "no term to commit under", i: input({ term: undefined }) },
    { why: "another term's decision", i: input({}, { term: 2 }) },
    { why: "no baseline", i: input({}, { baselineVector: undefined }) },
    { why: "no time", i: input({}, { timestamp: undefined }) },
    { why: "no reason", i: input({}, { reason: undefined }) },
    { why: "the stored commit", i: input({}, { decisionID: "d-old" }) },
    { why: "older than the stored commit", i: input({}, { timestamp: at(-61) }) },
    { why: "an unreadable time", i: input({}, { timestamp: "yesterday" }) },
  ])("not with $why", ({ i }) => {
    expect(rebuildRecords(i)).toStrictEqual({ kind: "Unchanged" });
  });

  it("a decision as old as the stored commit, or a status without one, is rebuilt", () => {
    expect(rebuildRecords(input({}, { timestamp: at(-60) })).kind).toBe("Rebuilt");
    expect(rebuildRecords(input({ base: {} })).kind).toBe("Rebuilt");
  });
});

describe("the records each reason leaves", () => {
  it("Scale growing a role: lastCommit, the pending cohort, the grown role's growth time", () => {
    const base: ScalerStatus = {
      lastCommit: stored,
      lastPassTime: at(-5),
      roles: [
        { name: "p", currentReplicas: 2, readyReplicas: 2, signalState: "Fresh" },
        { name: "d", currentReplicas: 2, readyReplicas: 2, signalState: "Fresh" },
      ],
    };
    expect(rebuildRecords(input({ base }))).toStrictEqual({
      kind: "Rebuilt",
      decisionID: "d-new",
      base: {
        lastPassTime: at(-5),
        lastCommit: {
          decisionID: "d-new",
          term: 3,
          vector: { p: 4, d: 2 },
          baselineVector: { p: 2, d: 2 },
          timestamp: at(0),
          targetGeneration: 8,
        },
        pendingCohort: {
          decisionID: "d-new",
          term: 3,
          baselineVector: { p: 2, d: 2 },
          targetVector: { p: 4, d: 2 },
          startedAt: at(0),
        },
        roles: [
          { name: "p", currentReplicas: 2, readyReplicas: 2, signalState: "Fresh", lastScaleUpTime: at(0) },
          { name: "d", currentReplicas: 2, readyReplicas: 2, signalState: "Fresh" },
        ],
      },
      blocked: new Map(),
    });
  });

  it("a decision without its generation keeps the stored one, or 0", () => {
    expect(rebuiltBase(input({}, { targetGeneration: undefined })).lastCommit?.targetGeneration).toBe(7);
    expect(rebuiltBase(input({ base: {} }, { targetGeneration: undefined })).lastCommit?.targetGeneration).toBe(0);
  });

  it("Scale shrinking: lastScaleDown names the first shrunk role in spec order; nothing grew", () => {
    const base = rebuiltBase(input({ roleOrder: ["d", "p"] }, { vector: { p: 1, d: 1 } }));
    expect(base.lastScaleDown).toStrictEqual({
      role: "d",
      ordinal: 1,
      preScaleDownVector: { p: 2, d: 2 },
      outcome: "Committed",
    });
    expect(base).not.toHaveProperty("pendingCohort");
    expect(base).not.toHaveProperty("roles");
  });

  it("DonorRelease shrinking records the scale-down; ReceiverAcquire growing opens a cohort and moves no growth time", () => {
    const released = rebuiltBase(input({}, { reason: "DonorRelease", vector: { p: 2, d: 1 } }));
    expect(released.lastScaleDown).toMatchObject({ role: "d", ordinal: 1, outcome: "Committed" });
    const roles = [{ name: "p", currentReplicas: 2, readyReplicas: 2, signalState: "Fresh" as const }];
    const acquired = rebuiltBase(input({ base: { roles } }, { reason: "ReceiverAcquire", vector: { p: 3, d: 2 } }));
    expect(acquired.pendingCohort?.targetVector).toStrictEqual({ p: 3, d: 2 });
    expect(acquired.roles).toStrictEqual(roles);
  });

  it("ResourceExhausted: no cohort, the episode for the first rolled-back role, Blocked", () => {
    const pending = {
      decisionID: "d-old",
      term: 3,
      baselineVector: { p: 2, d: 2 },
      targetVector: { p: 4, d: 2 },
      startedAt: at(-60),
    };
    const out = rebuildRecords(
      input(
        { base: { lastCommit: stored, pendingCohort: pending } },
        { reason: "ResourceExhausted", vector: { p: 2, d: 2 }, baselineVector: { p: 4, d: 3 } },
      ),
    );
    expect(out).toMatchObject({ kind: "Rebuilt" });
    if (out.kind !== "Rebuilt") return;
    expect(out.base).not.toHaveProperty("pendingCohort");
    expect(out.base.rebalance).toStrictEqual({
      receiverRole: "p",
      startedAt: at(0),
      exhaustionEpisodeGeneration: 5,
      donationAttempted: false,
      reason: "ResourceExhausted",
    });
    expect(out.blocked).toStrictEqual(
      new Map([["ResourceExhausted", "p, d not admitted in time; restored the baseline vector"]]),
    );
    const noGeneration = rebuiltBase(
      input(
        { generation: undefined },
        { reason: "ResourceExhausted", vector: { p: 2, d: 2 }, baselineVector: { p: 4, d: 2 } },
      ),
    );
    expect(noGeneration.rebalance?.exhaustionEpisodeGeneration).toBe(0);
  });

  it("ScaleDownAborted: the committed scale-down is marked aborted and cools down from the decision's time", () => {
    const committed: LastScaleDown = {
      role: "d",
      ordinal: 1,
      preScaleDownVector: { p: 2, d: 2 },
      outcome: "Committed",
    };
    const pending = {
      decisionID: "c",
      term: 3,
      baselineVector: { p: 1 },
      targetVector: { p: 2 },
      startedAt: at(-30),
    };
    const out = rebuildRecords(
      input(
        { base: { lastCommit: stored, lastScaleDown: committed, pendingCohort: pending } },
        { reason: "ScaleDownAborted", vector: { p: 2, d: 2 }, baselineVector: { p: 2, d: 1 } },
      ),
    );
    if (out.kind !== "Rebuilt") throw new Error("nothing rebuilt");
    expect(out.base.lastScaleDown).toStrictEqual({
      ...committed,
      outcome: "Aborted",
      abortedAt: at(0),
      cooldownUntil: at(120),
    });
    // A restore grows a role but creates no cohort: the one before stays.
    expect(out.base.pendingCohort).toStrictEqual(pending);
    expect(out.blocked).toStrictEqual(
      new Map([
        [
          "ScaleDownAborted",
          `the retirement of d was aborted; restored the pre-scale-down vector, scale-down cools down until ${at(120)}`,
        ],
      ]),
    );
  });

  it("ScaleDownAborted without a committed scale-down on record changes no scale-down", () => {
    const aborted: LastScaleDown = {
      role: "d",
      ordinal: 1,
      preScaleDownVector: { p: 2, d: 2 },
      outcome: "Aborted",
      abortedAt: at(-10),
      cooldownUntil: at(50),
    };
    const out = rebuildRecords(
      input(
        { base: { lastCommit: stored, lastScaleDown: aborted } },
        { reason: "ScaleDownAborted", vector: { p: 2, d: 2 }, baselineVector: { p: 2, d: 1 } },
      ),
    );
    if (out.kind !== "Rebuilt") throw new Error("nothing rebuilt");
    expect(out.base.lastScaleDown).toStrictEqual(aborted);
    // The restore on record still cools down: Blocked names its end.
    expect(out.blocked.get("ScaleDownAborted")).toBe(
      `the retirement of d was aborted; restored the pre-scale-down vector, scale-down cools down until ${at(50)}`,
    );
    const none = rebuildRecords(
      input({}, { reason: "ScaleDownAborted", vector: { p: 2, d: 2 }, baselineVector: { p: 2, d: 1 } }),
    );
    if (none.kind !== "Rebuilt") throw new Error("nothing rebuilt");
    expect(none.base).not.toHaveProperty("lastScaleDown");
    expect(none.blocked.size).toBe(0);
  });

  it("roles missing from either vector neither grew nor shrank", () => {
    const base = rebuiltBase(
      input({ roleOrder: ["p", "d", "e"] }, { vector: { p: 2, e: 1 }, baselineVector: { p: 2, d: 3 } }),
    );
    expect(base).not.toHaveProperty("pendingCohort");
    expect(base).not.toHaveProperty("lastScaleDown");
  });
});
