/**
 * The rebalance transaction through `plan()`, pass by pass on a target whose
 * counts follow the commits: a scale-up that is never admitted rolls back,
 * the donor releases one replica, everything holds until the donor's replica
 * is gone, then the receiver grows. And the ways it ends early: the donor's
 * retirement aborts (restore, the episode remembers the attempt), or the
 * receiver's step no longer fits the bounds (cancelled, the episode stays).
 */
import { describe, expect, it } from "vitest";
import { bindingAnnotation, type RoleKind } from "../../../src/core/api/model-deployment.js";
import type { ScalerSpec, ScalerStatus } from "../../../src/core/api/scaler.js";
import { plan } from "../../../src/core/planner/plan.js";
import type { PlanResult } from "../../../src/core/planner/types.js";
import type { RoleObservation } from "../../../src/core/signals/types.js";
import { condition, inputOf, roleOf, seconds, specOf, targetOf, want } from "./fixtures.js";

const bound = { [bindingAnnotation]: JSON.stringify({ scalerName: "llm", scalerUID: "scaler-uid", term: 3 }) };
const iso = (s: number): string => new Date(seconds(s)).toISOString();

interface PoolRole {
  readonly kind: RoleKind;
  replicas: number;
  ready: number;
  quotaReserved: number;
}

/** A target on one h100 pool whose spec follows every commit; admission and release are the test's to give. */
class Pool {
  status: ScalerStatus | undefined;
  generation = 1;
  retirement: { roleName: string; replicaOrdinal: number; state: string } | undefined;
  readonly roles = new Map<string, PoolRole>([
    ["p", { kind: "Prefill", replicas: 2, ready: 2, quotaReserved: 2 }],
    ["d", { kind: "Decode", replicas: 4, ready: 4, quotaReserved: 4 }],
  ]);

  constructor(public spec: ScalerSpec) {}

  pass(atS: number, observations: Record<string, RoleObservation>, scalerGeneration = 1): PlanResult {
    const target = targetOf(
      [...this.roles].map(([name, r]) => ({ name, instanceType: "h100", ...r })),
      {
        annotations: bound,
        generation: this.generation,
        ...(this.retirement === undefined ? {} : { retirement: this.retirement }),
      },
    );
    const result = plan(
      inputOf({
        spec: this.spec,
        target,
        observations,
        nowMs: seconds(atS),
        generation: scalerGeneration,
        ...(this.status === undefined ? {} : { status: this.status }),
      }),
    );
    this.status = result.status;
    if (result.commit !== undefined) {
      for (const [name, count] of Object.entries(result.commit.vector)) {
        const role = this.roles.get(name);
        if (role !== undefined) role.replicas = count;
      }
      this.generation = result.commit.targetGeneration;
    }
    return result;
  }

  /** The role's ready and reserved replicas reach `count`. */
  settle(name: string, count: number): void {
    const role = this.roles.get(name);
    if (role === undefined) throw new Error(`no role ${name}`);
    role.ready = count;
    role.quotaReserved = count;
  }
}

const specWith = (pMax = 8): ScalerSpec =>
  specOf({
    roles: [
      { name: "p", minReplicas: 1, maxReplicas: pMax },
      { name: "d", minReplicas: 1, maxReplicas: 8 },
    ],
    sampling: { intervalSeconds: 15, pendingTimeoutSeconds: 60 },
    behavior: { scaleDown: { stabilizationWindowSeconds: 600 } },
    rebalance: { policy: "Opposing" },
  });

/** Prefill wants 4, decode 3: prefill's growth is never admitted, decode may donate. */
const wants = { p: want(4, 2), d: want(3, 4) };

/** Runs to the donor's release: grow at 0, roll back at 60, release at 75. */
function toRelease(pool: Pool): PlanResult {
  expect(pool.pass(0, wants).commit).toMatchObject({ vector: { p: 4, d: 4 }, reason: "Scale" });
  const held = pool.pass(30, wants);
  expect(held.commit).toBeUndefined();
  expect(held.status.pendingCohort?.targetVector).toStrictEqual({ p: 4, d: 4 });
  const rolled = pool.pass(60, wants);
  expect(rolled.commit).toMatchObject({ vector: { p: 2, d: 4 }, reason: "ResourceExhausted" });
  expect(rolled.status.rebalance).toStrictEqual({
    receiverRole: "p",
    startedAt: iso(60),
    exhaustionEpisodeGeneration: 1,
    donationAttempted: false,
    reason: "ResourceExhausted",
  });
  expect(condition(rolled, "Blocked")).toMatchObject({ status: "True", reason: "ResourceExhausted" });
  const released = pool.pass(75, wants);
  expect(released.commit).toMatchObject({ vector: { p: 2, d: 3 }, reason: "DonorRelease" });
  expect(released.status.rebalance).toStrictEqual({
    receiverRole: "p",
    donorRole: "d",
    donorTargetReplicas: 3,
    receiverTargetReplicas: 3,
    startedAt: iso(75),
    exhaustionEpisodeGeneration: 1,
    donationAttempted: true,
    reason: "DonorRelease",
  });
  // The donor's release is a scale-down of ours: an aborted retirement restores it.
  expect(released.status.lastScaleDown).toStrictEqual({
    role: "d",
    ordinal: 3,
    preScaleDownVector: { p: 2, d: 4 },
    outcome: "Committed",
  });
  expect(released.status.pendingCohort).toBeUndefined();
  expect(roleOf(released, "d")).toMatchObject({ constrainedReplicas: 3, reason: "DonorRelease" });
  // A role the write leaves at its planned count keeps the plan's reason (the pool's growth hold).
  expect(roleOf(released, "p")).toMatchObject({ constrainedReplicas: 2, reason: "ResourceExhausted" });
  return released;
}

describe("a rebalance transaction through plan()", () => {
  it("rolls back, releases the donor, holds until its replica is gone, then grows the receiver", () => {
    const pool = new Pool(specWith());
    toRelease(pool);

    pool.retirement = { roleName: "d", replicaOrdinal: 3, state: "Draining" };
    const draining = pool.pass(90, wants);
    expect(draining.commit).toBeUndefined();
    expect(roleOf(draining, "p").constrainedReplicas).toBe(2);
    expect(roleOf(draining, "d").constrainedReplicas).toBe(3);
    expect(condition(draining, "Blocked")).toMatchObject({
      status: "True",
      reason: "PacingBounded",
      message: "rebalance: waiting for d to release a replica before p grows",
    });
    expect(draining.status.rebalance?.reason).toBe("DonorRelease");

    // The retirement completed, but the donor's pod still holds its reservation.
    pool.retirement = { roleName: "d", replicaOrdinal: 3, state: "Completed" };
    const reserved = pool.pass(105, wants);
    expect(reserved.commit).toBeUndefined();
    expect(reserved.status.rebalance?.reason).toBe("DonorRelease");

    pool.settle("d", 3);
    const acquired = pool.pass(120, wants);
    expect(acquired.commit).toMatchObject({ vector: { p: 3, d: 3 }, reason: "ReceiverAcquire" });
    expect(acquired.status.rebalance).toMatchObject({ receiverTargetReplicas: 3, reason: "ReceiverAcquire" });
    expect(roleOf(acquired, "p")).toMatchObject({ constrainedReplicas: 3, reason: "ReceiverAcquire" });
    // The receiver's step is a scale-up like any other: it waits for admission.
    expect(acquired.status.pendingCohort).toMatchObject({
      baselineVector: { p: 2, d: 3 },
      targetVector: { p: 3, d: 3 },
    });
    expect(roleOf(acquired, "p").lastScaleUpTime).toBe(iso(120));
    expect(acquired.status.lastScaleDown?.role).toBe("d");

    pool.settle("p", 3);
    const after = pool.pass(135, wants);
    // Admitted: the transaction is over and holds nothing; prefill grows on as an ordinary scale-up.
    expect(after.status.rebalance?.reason).toBe("ReceiverAcquire");
    expect(after.commit).toMatchObject({ vector: { p: 4, d: 3 }, reason: "Scale" });
  });

  it("a held pass reports the receiver held by the transaction when the plan wanted it to move", () => {
    const pool = new Pool(specWith());
    toRelease(pool);
    pool.retirement = { roleName: "d", replicaOrdinal: 3, state: "Draining" };
    // Past the pool's retry time (rollback at 60 + 60 s), prefill's plan grows it; the transaction holds it.
    const held = pool.pass(150, wants);
    expect(held.commit).toBeUndefined();
    expect(roleOf(held, "p")).toMatchObject({ constrainedReplicas: 2, reason: "RebalanceInProgress" });
  });

  it("the donor's retirement aborts: the pre-release vector is restored and the episode remembers the attempt", () => {
    const pool = new Pool(specWith());
    toRelease(pool);
    pool.retirement = { roleName: "d", replicaOrdinal: 3, state: "Aborted" };
    const restored = pool.pass(90, wants);
    expect(restored.commit).toMatchObject({ vector: { p: 2, d: 4 }, reason: "ScaleDownAborted" });
    expect(restored.status.rebalance).toStrictEqual({
      receiverRole: "p",
      exhaustionEpisodeGeneration: 1,
      donationAttempted: true,
      reason: "DonationAttempted",
    });
    expect(restored.status.lastScaleDown).toMatchObject({
      role: "d",
      outcome: "Aborted",
      abortedAt: iso(90),
      cooldownUntil: iso(390),
    });
    expect(condition(restored, "Blocked")).toMatchObject({ status: "True", reason: "ScaleDownAborted" });
    // A restore is no scale-up: no cohort to admit.
    expect(restored.status.pendingCohort).toBeUndefined();
  });

  it("a bounds edit during the transaction cancels the receiver's step; the episode stays", () => {
    const pool = new Pool(specWith());
    toRelease(pool);
    pool.settle("d", 3);
    pool.spec = specWith(2);
    const cancelled = pool.pass(90, wants);
    expect(cancelled.commit).toBeUndefined();
    expect(cancelled.status.rebalance).toStrictEqual({
      receiverRole: "p",
      exhaustionEpisodeGeneration: 1,
      donationAttempted: true,
      reason: "RebalanceBlocked",
    });
    expect(condition(cancelled, "Blocked")).toMatchObject({
      status: "True",
      reason: "RebalanceBlocked",
      message: "receiver step cancelled: p would have 3 replicas, outside [1, 2]",
    });
  });

  it("Disabled: the rollback happens, no donor is released", () => {
    const pool = new Pool(specOf({ ...specWith(), rebalance: { policy: "Disabled" } }));
    pool.pass(0, wants);
    pool.pass(60, wants);
    const seeking = pool.pass(75, wants);
    expect(seeking.commit).toBeUndefined();
    expect(condition(seeking, "Blocked")).toMatchObject({
      reason: "ResourceExhausted",
      message: "p needs capacity that was not admitted; rebalance.policy is Disabled",
    });
  });
});
