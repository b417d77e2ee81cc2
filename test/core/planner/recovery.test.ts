/**
 * The recovery phase (`recovery.ts`) case by case, on inputs built by the
 * phases before it: restore an aborted scale-down, roll back a timed-out
 * cohort, advance a rebalance transaction, release a donor; first match wins.
 * Plus the pieces status depends on directly: what a cancelled transaction
 * leaves behind, and vector equality.
 */
import { describe, expect, it } from "vitest";
import type { Algorithm } from "../../../src/core/algorithms/types.js";
import type { ModelDeployment } from "../../../src/core/api/model-deployment.js";
import type {
  LastScaleDown,
  PendingCohort,
  RebalanceStatus,
  ScalerSpecInput,
  ScalerStatus,
} from "../../../src/core/api/scaler.js";
import { bindingPhase } from "../../../src/core/planner/bind.js";
import { sameVector } from "../../../src/core/planner/commit.js";
import { gatePolicy } from "../../../src/core/planner/gate.js";
import { readPass } from "../../../src/core/planner/pass.js";
import { recommend } from "../../../src/core/planner/recommend.js";
import { recover, withoutTransaction, type Recovery, type RecoveryInput } from "../../../src/core/planner/recovery.js";
import { readRecoveryState } from "../../../src/core/planner/recovery-state.js";
import { planRoles } from "../../../src/core/planner/role-plans.js";
import type { PlanInput } from "../../../src/core/planner/types.js";
import type { RoleObservation } from "../../../src/core/signals/types.js";
import { inputOf, seconds, specOf, targetOf, want, type RoleFixture } from "./fixtures.js";

const iso = (s: number): string => new Date(seconds(s)).toISOString();

interface Case {
  readonly roles?: readonly RoleFixture[];
  readonly status?: ScalerStatus;
  readonly observations?: Record<string, RoleObservation>;
  readonly spec?: Partial<ScalerSpecInput>;
  readonly retirement?: { roleName: string; replicaOrdinal: number; state: string };
  readonly targetGeneration?: number;
  readonly nowS?: number;
  /** `null` plans a scaler without a generation. */
  readonly generation?: number | null;
  readonly algorithm?: Algorithm;
}

/** Prefill and decode on one pool of h100s; prefill wants 4, decode wants 3. */
const pool: readonly RoleFixture[] = [
  { name: "p", kind: "Prefill", replicas: 2, instanceType: "h100" },
  { name: "d", kind: "Decode", replicas: 4, instanceType: "h100" },
];

/** The input of the recovery phase, as `plan()` builds it. */
function recoveryInput(c: Case = {}): RecoveryInput {
  const target: ModelDeployment = targetOf(c.roles ?? pool, {
    generation: c.targetGeneration ?? 1,
    ...(c.retirement === undefined ? {} : { retirement: c.retirement }),
  });
  const spec = specOf({
    roles: (c.roles ?? pool).map((r) => ({ name: r.name, minReplicas: 1, maxReplicas: 8 })),
    sampling: { pendingTimeoutSeconds: 120 },
    behavior: { scaleDown: { cooldownAfterAbortSeconds: 450 } },
    ...c.spec,
  });
  const base = inputOf({
    spec,
    target,
    observations: c.observations ?? { p: want(4), d: want(3) },
    nowMs: seconds(c.nowS ?? 0),
    ...(c.status === undefined ? {} : { status: c.status }),
    ...(typeof c.generation === "number" ? { generation: c.generation } : {}),
  });
  const input: PlanInput = {
    ...base,
    scaler: {
      ...base.scaler,
      metadata: {
        ...base.scaler.metadata,
        generation: c.generation === null ? undefined : base.scaler.metadata.generation,
      },
    },
    ...(c.algorithm === undefined ? {} : { algorithm: c.algorithm }),
  };
  const pass = readPass(input, target, bindingPhase(input));
  const gate = gatePolicy(pass);
  if (!gate.ok) throw new Error(`gate: ${gate.message}`);
  const state = readRecoveryState(pass);
  const plans = planRoles(pass, gate.bounds, recommend(pass), state);
  return { pass, state, bounds: gate.bounds, bands: gate.bands, plans };
}

const recovered = (c: Case = {}): Recovery => recover(recoveryInput(c));

/** An exhaustion episode that seeks a donor for prefill, opened 60 s ago (generation 1). */
const seeking: RebalanceStatus = {
  receiverRole: "p",
  startedAt: iso(-60),
  exhaustionEpisodeGeneration: 1,
  donationAttempted: false,
  reason: "ResourceExhausted",
};

/** Decode released one replica for prefill (the first write of the transaction). */
const inFlight: RebalanceStatus = {
  receiverRole: "p",
  donorRole: "d",
  donorTargetReplicas: 3,
  receiverTargetReplicas: 3,
  startedAt: iso(-30),
  exhaustionEpisodeGeneration: 1,
  donationAttempted: true,
  reason: "DonorRelease",
};

/** The target after the donor's write: decode at 3, prefill still at 2. */
const afterRelease: readonly RoleFixture[] = [
  { name: "p", kind: "Prefill", replicas: 2, instanceType: "h100" },
  { name: "d", kind: "Decode", replicas: 3, instanceType: "h100" },
];

const shrankDecode: LastScaleDown = {
  role: "d",
  ordinal: 3,
  preScaleDownVector: { p: 2, d: 4 },
  outcome: "Committed",
};

/** Prefill grown 2 -> 4, 120 s ago, never admitted. */
const cohort: PendingCohort = {
  decisionID: "c-1",
  term: 3,
  baselineVector: { p: 2, d: 4 },
  targetVector: { p: 4, d: 4 },
  startedAt: iso(-120),
};
const unadmitted: readonly RoleFixture[] = [
  { name: "p", kind: "Prefill", replicas: 4, instanceType: "h100", quotaReserved: 2, ready: 2 },
  { name: "d", kind: "Decode", replicas: 4, instanceType: "h100" },
];

describe("recover: nothing to recover", () => {
  it("keeps the records as they were, blocks nothing, writes nothing", () => {
    expect(recovered()).toStrictEqual({
      case: "None",
      rebalance: undefined,
      lastScaleDown: undefined,
      pendingCohort: undefined,
      blocked: new Map(),
    });
  });

  it("carries a committed scale-down, a pending cohort and a finished episode forward", () => {
    const pending = { ...cohort, startedAt: iso(-60) };
    const done: RebalanceStatus = { ...inFlight, receiverTargetReplicas: 3, reason: "ReceiverAcquire" };
    const result = recovered({
      roles: unadmitted,
      status: { lastScaleDown: shrankDecode, pendingCohort: pending, rebalance: done },
    });
    expect(result).toStrictEqual({
      case: "None",
      rebalance: done,
      lastScaleDown: shrankDecode,
      pendingCohort: pending,
      blocked: new Map(),
    });
  });

  it("drops an admitted cohort", () => {
    const result = recovered({
      roles: unadmitted.map((r) => ({ ...r, quotaReserved: r.replicas })),
      status: { pendingCohort: cohort },
    });
    expect(result.case).toBe("None");
    expect(result.pendingCohort).toBeUndefined();
  });
});

describe("recover: restore an aborted scale-down", () => {
  const aborted = { roleName: "d", replicaOrdinal: 3, state: "Aborted" };

  it("writes the pre-scale-down vector back, marks the scale-down aborted and cools down", () => {
    const result = recovered({
      roles: afterRelease,
      retirement: aborted,
      status: { lastScaleDown: shrankDecode },
      nowS: 30,
    });
    expect(result).toStrictEqual({
      case: "RestoreAborted",
      write: { vector: { p: 2, d: 4 }, reason: "ScaleDownAborted" },
      rebalance: undefined,
      lastScaleDown: { ...shrankDecode, outcome: "Aborted", abortedAt: iso(30), cooldownUntil: iso(480) },
      pendingCohort: undefined,
      blocked: new Map([
        [
          "ScaleDownAborted",
          `the retirement of d was aborted; restored the pre-scale-down vector, scale-down cools down until ${iso(480)}`,
        ],
      ]),
    });
  });

  it("ends an in-flight transaction whose donor kept its replica; the episode remembers the attempt", () => {
    const result = recovered({
      roles: afterRelease,
      retirement: aborted,
      status: { lastScaleDown: shrankDecode, rebalance: inFlight },
    });
    expect(result.case).toBe("RestoreAborted");
    expect(result.rebalance).toStrictEqual(withoutTransaction(inFlight, "DonationAttempted"));
    expect(result.rebalance).toStrictEqual({
      receiverRole: "p",
      exhaustionEpisodeGeneration: 1,
      donationAttempted: true,
      reason: "DonationAttempted",
    });
  });

  it("keeps an episode that has no transaction in flight as it was", () => {
    const result = recovered({
      roles: afterRelease,
      retirement: aborted,
      status: { lastScaleDown: shrankDecode, rebalance: seeking },
    });
    expect(result.case).toBe("RestoreAborted");
    expect(result.rebalance).toStrictEqual(seeking);
  });

  it.each([
    { why: "the retirement completed", retirement: { ...aborted, state: "Completed" }, last: shrankDecode },
    { why: "no scale-down was recorded", retirement: aborted, last: undefined },
    { why: "the scale-down was already restored", retirement: aborted, last: { ...shrankDecode, outcome: "Aborted" } },
  ])("restores nothing when $why", ({ retirement, last }) => {
    const result = recovered({
      roles: afterRelease,
      retirement,
      status: last === undefined ? {} : { lastScaleDown: last as LastScaleDown },
    });
    expect(result.case).toBe("None");
    expect(result.write).toBeUndefined();
  });

  it("wins over a timed-out cohort in the same pass", () => {
    const result = recovered({
      roles: [
        { name: "p", kind: "Prefill", replicas: 4, instanceType: "h100", quotaReserved: 2, ready: 2 },
        { name: "d", kind: "Decode", replicas: 3, instanceType: "h100" },
      ],
      retirement: aborted,
      status: { lastScaleDown: shrankDecode, pendingCohort: { ...cohort, targetVector: { p: 4, d: 3 } } },
    });
    expect(result.case).toBe("RestoreAborted");
    expect(result.write).toStrictEqual({ vector: { p: 4, d: 4 }, reason: "ScaleDownAborted" });
  });
});

describe("recover: roll back a timed-out cohort", () => {
  it("writes the baseline back and opens an exhaustion episode for the unadmitted role", () => {
    const result = recovered({ roles: unadmitted, status: { pendingCohort: cohort }, generation: 4, nowS: 0 });
    expect(result).toStrictEqual({
      case: "RollBackCohort",
      write: { vector: { p: 2, d: 4 }, reason: "ResourceExhausted" },
      rebalance: {
        receiverRole: "p",
        startedAt: iso(0),
        exhaustionEpisodeGeneration: 4,
        donationAttempted: false,
        reason: "ResourceExhausted",
      },
      lastScaleDown: undefined,
      pendingCohort: undefined,
      blocked: new Map([["ResourceExhausted", "p not admitted within 120s; restored the baseline vector"]]),
    });
  });

  it("waits while the cohort is inside its timeout", () => {
    const result = recovered({ roles: unadmitted, status: { pendingCohort: cohort }, nowS: -1 });
    expect(result.case).toBe("None");
    expect(result.pendingCohort).toStrictEqual(cohort);
  });

  it("picks the receiver in the spec's role order, and names every unadmitted role", () => {
    const both: PendingCohort = { ...cohort, targetVector: { d: 6, p: 4 } };
    const result = recovered({
      roles: [
        { name: "p", kind: "Prefill", replicas: 4, instanceType: "h100", quotaReserved: 2, ready: 2 },
        { name: "d", kind: "Decode", replicas: 6, instanceType: "h100", quotaReserved: 4, ready: 4 },
      ],
      status: { pendingCohort: both },
    });
    expect(result.write?.vector).toStrictEqual({ p: 2, d: 4 });
    expect(result.rebalance?.receiverRole).toBe("p");
    expect(result.blocked.get("ResourceExhausted")).toBe("d, p not admitted within 120s; restored the baseline vector");
  });

  it("continues the episode it is in: an earlier donation stays attempted", () => {
    const attempted = { ...seeking, donationAttempted: true, reason: "DonationAttempted" };
    const result = recovered({ roles: unadmitted, status: { pendingCohort: cohort, rebalance: attempted } });
    expect(result.rebalance).toMatchObject({ donationAttempted: true, reason: "ResourceExhausted", startedAt: iso(0) });
  });

  it("an episode that never recorded an attempt has none", () => {
    const { donationAttempted: _d, ...unrecorded } = seeking;
    const result = recovered({ roles: unadmitted, status: { pendingCohort: cohort, rebalance: unrecorded } });
    expect(result.rebalance?.donationAttempted).toBe(false);
  });

  it("a transaction in flight does not carry its attempt into the new episode", () => {
    const result = recovered({ roles: unadmitted, status: { pendingCohort: cohort, rebalance: inFlight } });
    expect(result.case).toBe("RollBackCohort");
    expect(result.rebalance?.donationAttempted).toBe(false);
  });

  it("a scaler without a generation opens episode 0", () => {
    const result = recovered({ roles: unadmitted, status: { pendingCohort: cohort }, generation: null });
    expect(result.rebalance?.exhaustionEpisodeGeneration).toBe(0);
  });

  it("wins over an in-flight transaction", () => {
    const result = recovered({ roles: unadmitted, status: { pendingCohort: cohort, rebalance: inFlight } });
    expect(result.case).toBe("RollBackCohort");
  });
});

describe("recover: advance a rebalance transaction", () => {
  it("holds every role while the donor's retirement runs", () => {
    const result = recovered({
      roles: afterRelease,
      retirement: { roleName: "d", replicaOrdinal: 3, state: "Draining" },
      status: { rebalance: inFlight },
    });
    const message = "rebalance: waiting for d to release a replica before p grows";
    expect(result).toStrictEqual({
      case: "AdvanceTransaction",
      holdAll: message,
      rebalance: inFlight,
      lastScaleDown: undefined,
      pendingCohort: undefined,
      blocked: new Map([["PacingBounded", message]]),
    });
  });

  it("holds while the donor still has more ready replicas than its target", () => {
    const result = recovered({
      roles: [
        { name: "p", kind: "Prefill", replicas: 2, instanceType: "h100" },
        { name: "d", kind: "Decode", replicas: 3, instanceType: "h100", ready: 4, quotaReserved: 3 },
      ],
      status: { rebalance: inFlight },
    });
    expect(result.case).toBe("AdvanceTransaction");
    expect(result.holdAll).toBeDefined();
    expect(result.write).toBeUndefined();
  });

  it("names no donor when the record lost it", () => {
    const { donorRole: _d, ...noDonor } = inFlight;
    const result = recovered({ roles: afterRelease, status: { rebalance: noDonor } });
    expect(result.holdAll).toBe("rebalance: waiting for the donor to release a replica before p grows");
  });

  it("grows the receiver by one once the donor's replica is gone", () => {
    const result = recovered({ roles: afterRelease, status: { rebalance: inFlight } });
    expect(result).toStrictEqual({
      case: "AdvanceTransaction",
      write: { vector: { p: 3, d: 3 }, reason: "ReceiverAcquire" },
      rebalance: { ...inFlight, receiverTargetReplicas: 3, reason: "ReceiverAcquire" },
      lastScaleDown: undefined,
      pendingCohort: undefined,
      blocked: new Map(),
    });
  });

  it("the receiver's new target counts from its current replicas", () => {
    const result = recovered({
      roles: [
        { name: "p", kind: "Prefill", replicas: 5, instanceType: "h100" },
        { name: "d", kind: "Decode", replicas: 3, instanceType: "h100" },
      ],
      status: { rebalance: inFlight },
      observations: { p: want(6), d: want(3) },
    });
    expect(result.write?.vector).toStrictEqual({ p: 6, d: 3 });
    expect(result.rebalance?.receiverTargetReplicas).toBe(6);
  });

  it("cancels the receiver's step when it would leave the bounds; the episode stays", () => {
    const result = recovered({
      roles: [
        { name: "p", kind: "Prefill", replicas: 8, instanceType: "h100" },
        { name: "d", kind: "Decode", replicas: 3, instanceType: "h100" },
      ],
      status: { rebalance: inFlight },
      observations: { p: want(8), d: want(3) },
    });
    expect(result).toStrictEqual({
      case: "AdvanceTransaction",
      rebalance: withoutTransaction(inFlight, "RebalanceBlocked"),
      lastScaleDown: undefined,
      pendingCohort: undefined,
      blocked: new Map([["RebalanceBlocked", "receiver step cancelled: p would have 9 replicas, outside [1, 8]"]]),
    });
  });

  it("cancels a transaction whose receiver left the target, or was never recorded", () => {
    const cancelledFor = (rebalance: RebalanceStatus, why: string): Recovery => ({
      case: "AdvanceTransaction",
      rebalance: withoutTransaction(rebalance, "RebalanceBlocked"),
      lastScaleDown: undefined,
      pendingCohort: undefined,
      blocked: new Map([["RebalanceBlocked", `receiver step cancelled: ${why}`]]),
    });
    const gone = recovered({
      roles: [{ name: "d", kind: "Decode", replicas: 3, instanceType: "h100" }],
      spec: {
        roles: [
          { name: "p", minReplicas: 1, maxReplicas: 8 },
          { name: "d", minReplicas: 1, maxReplicas: 8 },
        ],
      },
      status: { rebalance: inFlight },
    });
    expect(gone).toStrictEqual(cancelledFor(inFlight, "receiver p is not a role of the target"));
    const { receiverRole: _r, ...noReceiver } = inFlight;
    expect(recovered({ roles: afterRelease, status: { rebalance: noReceiver } })).toStrictEqual(
      cancelledFor(noReceiver, "the transaction records no receiver"),
    );
  });

  it("does nothing for an episode without a transaction", () => {
    const done: RebalanceStatus = { ...inFlight, reason: "ReceiverAcquire" };
    const result = recovered({ roles: afterRelease, status: { rebalance: done } });
    expect(result.case).toBe("None");
    expect(result.rebalance).toStrictEqual(done);
  });
});

describe("recover: release a donor", () => {
  it("Opposing: the shrinking role on the receiver's pool gives one replica; the transaction starts", () => {
    const result = recovered({ status: { rebalance: seeking }, nowS: 10 });
    expect(result).toStrictEqual({
      case: "ReleaseDonor",
      write: { vector: { p: 2, d: 3 }, reason: "DonorRelease" },
      rebalance: {
        receiverRole: "p",
        donorRole: "d",
        donorTargetReplicas: 3,
        receiverTargetReplicas: 3,
        startedAt: iso(10),
        exhaustionEpisodeGeneration: 1,
        donationAttempted: true,
        reason: "DonorRelease",
      },
      lastScaleDown: { role: "d", ordinal: 3, preScaleDownVector: { p: 2, d: 4 }, outcome: "Committed" },
      pendingCohort: undefined,
      blocked: new Map(),
    });
  });

  it("an episode without its generation takes the scaler's", () => {
    const { exhaustionEpisodeGeneration: _g, ...noGeneration } = seeking;
    // currentEpisode keeps only episodes of this generation, so read the state first and then drop the field.
    const input = recoveryInput({ status: { rebalance: seeking }, generation: 1 });
    const result = recover({ ...input, state: { ...input.state, rebalance: noGeneration } });
    expect(result.rebalance?.exhaustionEpisodeGeneration).toBe(1);
    const noScalerGeneration = recoveryInput({
      status: { rebalance: { ...seeking, exhaustionEpisodeGeneration: 0 } },
      generation: null,
    });
    const fromNothing = recover({
      ...noScalerGeneration,
      state: { ...noScalerGeneration.state, rebalance: noGeneration },
    });
    expect(fromNothing.case).toBe("ReleaseDonor");
    expect(fromNothing.rebalance?.exhaustionEpisodeGeneration).toBe(0);
  });

  it("keeps the episode's generation when it has one", () => {
    const input = recoveryInput({ status: { rebalance: seeking }, generation: 1 });
    const result = recover({
      ...input,
      state: { ...input.state, rebalance: { ...seeking, exhaustionEpisodeGeneration: 7 } },
    });
    expect(result.rebalance?.exhaustionEpisodeGeneration).toBe(7);
  });

  it("stops seeking once the pool's retry time is reached", () => {
    // The episode opened at -60 s; with a 120 s pending timeout growth may retry from 60 s on.
    expect(recovered({ status: { rebalance: seeking }, nowS: 59 }).case).toBe("ReleaseDonor");
    expect(recovered({ status: { rebalance: seeking }, nowS: 60 })).toMatchObject({ case: "None", blocked: new Map() });
  });

  it("an episode without a start time seeks nothing", () => {
    const { startedAt: _s, ...unstarted } = seeking;
    expect(recovered({ status: { rebalance: unstarted } }).case).toBe("None");
  });

  it.each(["RebalanceNotApplicable", "RebalanceBlocked", "DonationAttempted"])(
    "an episode whose last answer was %s keeps seeking",
    (reason) => {
      expect(recovered({ status: { rebalance: { ...seeking, reason } } }).case).toBe("ReleaseDonor");
    },
  );

  it.each([
    { why: "holds", p: 2 },
    { why: "shrinks", p: 1 },
  ])("releases nothing when the receiver's recommendation $why", ({ p }) => {
    const result = recovered({ status: { rebalance: seeking }, observations: { p: want(p), d: want(3) } });
    expect(result).toStrictEqual({
      case: "None",
      rebalance: seeking,
      lastScaleDown: undefined,
      pendingCohort: undefined,
      blocked: new Map(),
    });
  });

  it("releases nothing for a receiver the algorithm does not drive, or one that left the target", () => {
    const unscaled: Algorithm = {
      type: "Proportional",
      recommend: (input) => ({
        roles: input.roles.map((r) => ({
          role: r.name,
          scaled: r.name !== "p",
          replicas: r.name === "p" ? 6 : 3,
          reason: "Test",
        })),
        predictors: [],
      }),
    };
    expect(recovered({ status: { rebalance: seeking }, algorithm: unscaled }).case).toBe("None");
    const gone = recovered({ status: { rebalance: { ...seeking, receiverRole: "x" } } });
    expect(gone.case).toBe("None");
    expect(gone.blocked.size).toBe(0);
  });

  it("a receiver-less episode releases nothing", () => {
    const { receiverRole: _r, ...noReceiver } = seeking;
    expect(recovered({ status: { rebalance: noReceiver } }).case).toBe("None");
  });

  it("Disabled: reports the exhaustion, releases nothing", () => {
    const result = recovered({ status: { rebalance: seeking }, spec: { rebalance: { policy: "Disabled" } } });
    expect(result).toStrictEqual({
      case: "None",
      rebalance: seeking,
      lastScaleDown: undefined,
      pendingCohort: undefined,
      blocked: new Map([["ResourceExhausted", "p needs capacity that was not admitted; rebalance.policy is Disabled"]]),
    });
  });

  it("no donor on the pool: RebalanceNotApplicable, recorded in the episode", () => {
    const result = recovered({ status: { rebalance: seeking }, observations: { p: want(4), d: want(4) } });
    expect(result).toStrictEqual({
      case: "None",
      rebalance: { ...seeking, reason: "RebalanceNotApplicable" },
      lastScaleDown: undefined,
      pendingCohort: undefined,
      blocked: new Map([["RebalanceNotApplicable", "no role on instance type h100 can donate to p"]]),
    });
  });

  it("a donor whose step breaks a ratio: RebalanceBlocked, recorded in the episode", () => {
    const result = recovered({
      status: { rebalance: seeking },
      spec: {
        roles: [
          { name: "p", minReplicas: 1, maxReplicas: 8 },
          { name: "d", minReplicas: 1, maxReplicas: 8 },
        ],
        ratios: [{ numeratorRole: "d", denominatorRole: "p", min: "2" }],
      },
    });
    expect(result).toStrictEqual({
      case: "None",
      rebalance: { ...seeking, reason: "RebalanceBlocked" },
      lastScaleDown: undefined,
      pendingCohort: undefined,
      blocked: new Map([["RebalanceBlocked", "donor d: ratio d/p >= 2 would break"]]),
    });
  });

  it("Priority: a second donation in the episode is blocked as DonationAttempted", () => {
    const result = recovered({
      status: { rebalance: { ...seeking, donationAttempted: true } },
      spec: { rebalance: { policy: "Priority", priority: ["p", "d"] } },
    });
    expect(result.case).toBe("None");
    expect(result.rebalance).toStrictEqual({ ...seeking, donationAttempted: true, reason: "DonationAttempted" });
    expect(result.blocked.get("RebalanceBlocked")).toBe(
      "a Priority donation was already attempted in this exhaustion episode",
    );
  });

  it("Priority: a first donation goes ahead", () => {
    const result = recovered({
      status: { rebalance: seeking },
      spec: { rebalance: { policy: "Priority", priority: ["p", "d"] } },
      observations: { p: want(4), d: want(4) },
    });
    expect(result.case).toBe("ReleaseDonor");
    expect(result.write?.vector).toStrictEqual({ p: 2, d: 3 });
  });

  it("Opposing: a donor the algorithm does not drive gives nothing", () => {
    const unscaledDonor: Algorithm = {
      type: "Proportional",
      recommend: (input) => ({
        roles: input.roles.map((r) => ({
          role: r.name,
          scaled: r.name !== "d",
          replicas: r.name === "p" ? 4 : 3,
          reason: "Test",
        })),
        predictors: [],
      }),
    };
    const result = recovered({ status: { rebalance: seeking }, algorithm: unscaledDonor });
    expect(result.case).toBe("None");
    expect(result.rebalance?.reason).toBe("RebalanceNotApplicable");
  });

  it("waits for a running retirement, then for the abort cooldown to end", () => {
    const message = "d will donate to p once no retirement or abort cooldown is active";
    const retiring = recovered({
      status: { rebalance: seeking },
      retirement: { roleName: "d", replicaOrdinal: 5, state: "Draining" },
    });
    expect(retiring).toStrictEqual({
      case: "None",
      rebalance: seeking,
      lastScaleDown: undefined,
      pendingCohort: undefined,
      blocked: new Map([["ResourceExhausted", message]]),
    });
    const cooling: LastScaleDown = {
      ...shrankDecode,
      outcome: "Aborted",
      abortedAt: iso(-200),
      cooldownUntil: iso(20),
    };
    const atS = (nowS: number) => recovered({ status: { rebalance: seeking, lastScaleDown: cooling }, nowS });
    expect(atS(19).blocked.get("ResourceExhausted")).toBe(message);
    expect(atS(19).case).toBe("None");
    expect(atS(20).case).toBe("ReleaseDonor");
    // A finished retirement holds nothing.
    expect(
      recovered({
        status: { rebalance: seeking },
        retirement: { roleName: "d", replicaOrdinal: 4, state: "Completed" },
      }).case,
    ).toBe("ReleaseDonor");
  });
});

describe("withoutTransaction", () => {
  it("drops the donor, the targets and the start; keeps the receiver and the episode; marks the attempt", () => {
    expect(withoutTransaction({ ...inFlight, donationAttempted: false }, "RebalanceBlocked")).toStrictEqual({
      receiverRole: "p",
      exhaustionEpisodeGeneration: 1,
      donationAttempted: true,
      reason: "RebalanceBlocked",
    });
  });

  it("writes no receiver or episode fields the record did not have", () => {
    expect(withoutTransaction({ donorRole: "p" }, "DonationAttempted")).toStrictEqual({
      donationAttempted: true,
      reason: "DonationAttempted",
    });
  });
});

describe("sameVector", () => {
  it.each([
    { a: { p: 1, d: 2 }, b: { d: 2, p: 1 }, same: true },
    { a: { p: 1, d: 2 }, b: { p: 1, d: 3 }, same: false },
    { a: { p: 1 }, b: { p: 1, d: 0 }, same: false },
    { a: { p: 1, d: 0 }, b: { p: 1 }, same: false },
    { a: {}, b: {}, same: true },
  ])("$a and $b: $same", ({ a, b, same }) => {
    expect(sameVector(a, b)).toBe(same);
  });
});
