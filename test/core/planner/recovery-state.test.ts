/**
 * What earlier passes left that later passes must respect, seen through
 * `plan()`: the scale-down cooldown after an aborted retirement, and the
 * growth freeze of the exhausted pool after a rollback. Each ends on time.
 */
import { describe, expect, it } from "vitest";
import type { ScalerStatus } from "../../../src/core/api/scaler.js";
import { plan } from "../../../src/core/planner/plan.js";
import type { PlanResult } from "../../../src/core/planner/types.js";
import type { RoleObservation } from "../../../src/core/signals/types.js";
import { inputOf, roleOf, seconds, specOf, targetOf, want } from "./fixtures.js";

const iso = (s: number) => new Date(seconds(s)).toISOString();

/** Passes every 15 s over [from, to] at fixed counts, each carrying the previous status. */
function passes(
  spec: ReturnType<typeof specOf>,
  roles: { name: string; replicas: number; instanceType?: string }[],
  status: ScalerStatus,
  observations: Record<string, RoleObservation>,
  from: number,
  to: number,
): Map<number, PlanResult> {
  const out = new Map<number, PlanResult>();
  let current = status;
  for (let at = from; at <= to; at += 15) {
    const result = plan(inputOf({ spec, target: targetOf(roles), observations, status: current, nowMs: seconds(at) }));
    out.set(at, result);
    current = result.status;
  }
  return out;
}

describe("the abort cooldown", () => {
  it("holds scale-down until cooldownUntil, then shrinks", () => {
    const spec = specOf({
      roles: [{ name: "d", minReplicas: 1, maxReplicas: 16 }],
      behavior: { scaleDown: { stabilizationWindowSeconds: 30 } },
    });
    const status: ScalerStatus = {
      lastPassTime: iso(-15),
      lastScaleDown: {
        role: "d",
        ordinal: 2,
        preScaleDownVector: { d: 3 },
        outcome: "Aborted",
        abortedAt: iso(-240),
        cooldownUntil: iso(60),
      },
      roles: [
        {
          name: "d",
          currentReplicas: 3,
          readyReplicas: 3,
          signalState: "Fresh",
          stabilizationHistory: [{ timestamp: iso(-60), replicas: 1 }],
        },
      ],
    };
    const results = passes(spec, [{ name: "d", replicas: 3 }], status, { d: want(1, 3) }, 0, 60);
    for (const at of [0, 15, 30, 45]) {
      const held = results.get(at) as PlanResult;
      expect(held.commit, `pass at ${at} s`).toBeUndefined();
      expect(roleOf(held, "d").reason).toBe("AbortCooldown");
    }
    expect(results.get(60)?.commit?.vector).toEqual({ d: 2 });
  });
});

describe("the growth freeze after a rollback", () => {
  it("holds the receiver and its instance type for pendingTimeoutSeconds from the rollback, other pools grow", () => {
    const spec = specOf({
      // The receiver is not the first role: its pool is found by name.
      roles: [
        { name: "u", maxReplicas: 16 },
        { name: "s", maxReplicas: 16 },
        { name: "t", maxReplicas: 16 },
      ],
    });
    const status: ScalerStatus = {
      lastPassTime: iso(-15),
      rebalance: {
        receiverRole: "s",
        startedAt: iso(-200),
        exhaustionEpisodeGeneration: 1,
        donationAttempted: true,
        reason: "DonationAttempted",
      },
    };
    const roles = [
      { name: "u", replicas: 2, instanceType: "gpu-b" },
      { name: "s", replicas: 2, instanceType: "gpu-a" },
      { name: "t", replicas: 2, instanceType: "gpu-a" },
    ];
    const wants = { s: want(4, 2), t: want(4, 2), u: want(4, 2) };
    const first = plan(inputOf({ spec, target: targetOf(roles), observations: wants, status, nowMs: seconds(0) }));
    expect(roleOf(first, "s").reason).toBe("ResourceExhausted");
    expect(roleOf(first, "t").reason).toBe("ResourceExhausted");
    expect(first.commit?.vector).toEqual({ s: 2, t: 2, u: 4 });
    // The default pendingTimeoutSeconds (300) after the rollback at -200 s: growth resumes at 100 s.
    const atEnd = plan(inputOf({ spec, target: targetOf(roles), observations: wants, status, nowMs: seconds(100) }));
    expect(atEnd.commit?.vector).toMatchObject({ s: 4, t: 4 });
  });
});

describe("the growth freeze: which records start it", () => {
  const spec = specOf({
    roles: [
      { name: "u", maxReplicas: 16 },
      { name: "s", maxReplicas: 16 },
    ],
  });
  const episode = { receiverRole: "s", exhaustionEpisodeGeneration: 1, donationAttempted: true };
  const grown = (rebalance: ScalerStatus["rebalance"], instanceType?: string) =>
    plan(
      inputOf({
        spec,
        target: targetOf(
          ["u", "s"].map((name) => ({ name, replicas: 2, ...(instanceType === undefined ? {} : { instanceType }) })),
        ),
        observations: { u: want(4, 2), s: want(4, 2) },
        status: { lastPassTime: iso(-15), rebalance },
        nowMs: seconds(0),
      }),
    ).commit?.vector;

  it("an empty instance type is no pool: only the receiver is frozen", () => {
    expect(grown({ ...episode, startedAt: iso(-10), reason: "ResourceExhausted" }, "")).toEqual({ u: 4, s: 2 });
    expect(grown({ ...episode, startedAt: iso(-10), reason: "ResourceExhausted" })).toEqual({ u: 4, s: 2 });
  });

  it("a record that no longer seeks a donor, or has no start, freezes nothing", () => {
    expect(grown({ ...episode, startedAt: iso(-10), reason: "ReceiverAcquire" })).toEqual({ u: 4, s: 4 });
    expect(grown({ ...episode, reason: "ResourceExhausted" })).toEqual({ u: 4, s: 4 });
  });
});
