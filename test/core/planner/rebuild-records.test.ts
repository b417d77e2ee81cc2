/**
 * Commit records rebuilt from the decision the target carries: a pass whose
 * status lost the records of the last commit (the process died between the
 * target patch and the status write, or the write was lost) still rolls back,
 * restores, and never rebuilds a decision that is not its own.
 */
import { describe, expect, it } from "vitest";
import { bindingAnnotation, decisionAnnotation } from "../../../src/core/api/model-deployment.js";
import type { ScalerStatus } from "../../../src/core/api/scaler.js";
import { plan } from "../../../src/core/planner/plan.js";
import { rebuildRecords } from "../../../src/core/planner/rebuild-records.js";
import type { PlanResult } from "../../../src/core/planner/types.js";
import { condition, inputOf, seconds, specOf, t0, targetOf, want } from "./fixtures.js";

const bound = (term = 3): Record<string, string> => ({
  [bindingAnnotation]: JSON.stringify({ scalerName: "llm", scalerUID: "scaler-uid", term }),
});
const spec = specOf({
  roles: [
    { name: "p", maxReplicas: 16 },
    { name: "d", maxReplicas: 16 },
  ],
  sampling: { intervalSeconds: 5, pendingTimeoutSeconds: 60 },
  behavior: { scaleDown: { stabilizationWindowSeconds: 5, cooldownAfterAbortSeconds: 300 } },
});

/** The first pass's commit applied to the target, as the API server stores it; the status is not written. */
function applied(result: PlanResult, extra: Parameters<typeof targetOf>[1] = {}, reserved?: Record<string, number>) {
  const commit = result.commit;
  if (commit === undefined) throw new Error("the pass committed nothing");
  return targetOf(
    Object.entries(commit.vector).map(([name, replicas]) => ({
      name,
      replicas,
      ready: Math.min(replicas, commit.baselineVector[name] ?? replicas),
      quotaReserved: reserved?.[name] ?? replicas,
    })),
    {
      generation: commit.targetGeneration,
      ...extra,
      annotations: { ...bound(), [decisionAnnotation]: JSON.stringify(commit.decision), ...extra.annotations },
    },
  );
}

describe("commit records rebuilt from the target's decision", () => {
  const start = targetOf(
    [
      { name: "p", replicas: 2 },
      { name: "d", replicas: 2 },
    ],
    { annotations: bound() },
  );

  it("a scale-up whose status was lost is still rolled back after the pending timeout", () => {
    const up = plan(inputOf({ spec, target: start, observations: { p: want(4), d: want(2) } }));
    expect(up.commit?.decision).toMatchObject({
      vector: { p: 4, d: 2 },
      baselineVector: { p: 2, d: 2 },
      timestamp: new Date(t0).toISOString(),
      reason: "Scale",
    });
    // Quota never arrives for the two new p replicas; the status write never landed: a new leader starts from nothing.
    const target = applied(up, {}, { p: 2 });
    const early = plan(
      inputOf({ spec, target, observations: { p: want(4), d: want(2) }, status: {}, nowMs: seconds(30) }),
    );
    expect(early.commit).toBeUndefined();
    expect(early.statusChanged).toBe(true);
    expect(early.status.lastCommit?.decisionID).toBe(up.commit?.decision.decisionID);
    expect(early.status.pendingCohort).toEqual(up.status.pendingCohort);
    // The timeout counts from the commit, not from the restart.
    const rolled = plan(
      inputOf({ spec, target, observations: { p: want(4), d: want(2) }, status: {}, nowMs: seconds(60) }),
    );
    expect(rolled.commit).toMatchObject({ vector: { p: 2, d: 2 }, reason: "ResourceExhausted" });
    expect(rolled.status.pendingCohort).toBeUndefined();
    expect(condition(rolled, "Blocked")).toMatchObject({ status: "True", reason: "ResourceExhausted" });
  });

  it("a rollback whose status was lost keeps the exhaustion episode and Blocked", () => {
    const up = plan(inputOf({ spec, target: start, observations: { p: want(4), d: want(2) } }));
    const pending = applied(up, {}, { p: 2 });
    const rolled = plan(
      inputOf({
        spec,
        target: pending,
        observations: { p: want(4), d: want(2) },
        status: up.status,
        nowMs: seconds(60),
      }),
    );
    const after = applied(rolled);
    // The status still holds the scale-up's records: the rollback's were never written.
    const next = plan(
      inputOf({ spec, target: after, observations: { p: want(4), d: want(2) }, status: up.status, nowMs: seconds(65) }),
    );
    expect(next.commit).toBeUndefined();
    expect(next.status.lastCommit?.decisionID).toBe(rolled.commit?.decision.decisionID);
    expect(next.status.pendingCohort).toBeUndefined();
    expect(next.status.rebalance).toMatchObject({ receiverRole: "p", startedAt: new Date(seconds(60)).toISOString() });
    expect(condition(next, "Blocked")).toMatchObject({ status: "True", reason: "ResourceExhausted" });
  });

  it("a scale-down whose status was lost is restored when its retirement aborts", () => {
    // A first pass starts the recommendation history; the second may shrink.
    const first = plan(inputOf({ spec, target: start, observations: { p: want(2), d: want(1) }, nowMs: seconds(-5) }));
    const down = plan(inputOf({ spec, target: start, observations: { p: want(2), d: want(1) }, status: first.status }));
    expect(down.commit?.vector).toEqual({ p: 2, d: 1 });
    const aborted = applied(down, { retirement: { roleName: "d", replicaOrdinal: 1, state: "Aborted" } });
    const restored = plan(
      inputOf({ spec, target: aborted, observations: { p: want(2), d: want(1) }, status: {}, nowMs: seconds(10) }),
    );
    expect(restored.commit).toMatchObject({ vector: { p: 2, d: 2 }, reason: "ScaleDownAborted" });
    expect(restored.status.lastScaleDown).toMatchObject({ role: "d", outcome: "Aborted" });
    expect(condition(restored, "Blocked")?.reason).toBe("ScaleDownAborted");

    // And the restore itself, lost in turn, comes back with its cooldown from the restore's time.
    const after = applied(restored, { retirement: { roleName: "d", replicaOrdinal: 1, state: "Aborted" } });
    const cooled = plan(
      inputOf({
        spec,
        target: after,
        observations: { p: want(2), d: want(1) },
        status: down.status,
        nowMs: seconds(20),
      }),
    );
    expect(cooled.commit).toBeUndefined();
    expect(cooled.status.lastScaleDown).toMatchObject({
      outcome: "Aborted",
      abortedAt: new Date(seconds(10)).toISOString(),
      cooldownUntil: new Date(seconds(310)).toISOString(),
    });
    expect(condition(cooled, "Blocked")?.reason).toBe("ScaleDownAborted");
  });

  it("a status that already holds the decision rebuilds nothing and writes nothing", () => {
    const up = plan(inputOf({ spec, target: start, observations: { p: want(4), d: want(2) } }));
    const target = applied(up);
    const steady = plan(
      inputOf({ spec, target, observations: { p: want(4, 4), d: want(2) }, status: up.status, nowMs: seconds(5) }),
    );
    expect(steady.status.lastCommit).toEqual(up.status.lastCommit);
    const again = plan(
      inputOf({ spec, target, observations: { p: want(4, 4), d: want(2) }, status: steady.status, nowMs: seconds(10) }),
    );
    expect(again.status.lastCommit).toEqual(up.status.lastCommit);
    expect(again.statusChanged).toBe(false);
  });

  const decision = {
    decisionID: "d-1",
    term: 3,
    vector: { p: 4 },
    baselineVector: { p: 2 },
    timestamp: new Date(t0).toISOString(),
    targetGeneration: 2,
    reason: "Scale" as const,
  };
  const base: ScalerStatus = {};
  const rebuild = (over: Partial<Parameters<typeof rebuildRecords>[0]>) =>
    rebuildRecords({
      base,
      decision,
      term: 3,
      roleOrder: ["p"],
      generation: 1,
      cooldownAfterAbortSeconds: 300,
      ...over,
    }).kind;

  it.each([
    { why: "the decision of an older term (another binding)", over: { term: 4 } },
    { why: "a scaler that may not commit (Shadow, bound elsewhere)", over: { term: undefined } },
    { why: "no valid decision on the target", over: { decision: undefined } },
    {
      why: "a decision without its record (written before records were carried)",
      over: { decision: { decisionID: "d-1", term: 3, vector: { p: 4 } } },
    },
    {
      why: "a decision older than the stored lastCommit",
      over: {
        base: {
          lastCommit: {
            decisionID: "d-2",
            term: 3,
            vector: { p: 3 },
            baselineVector: { p: 4 },
            timestamp: new Date(seconds(10)).toISOString(),
            targetGeneration: 3,
          },
        },
      },
    },
  ])("rebuilds nothing from $why", ({ over }) => {
    expect(rebuild(over)).toBe("Unchanged");
  });

  it("rebuilds a newer decision of its own term", () => {
    expect(rebuild({})).toBe("Rebuilt");
  });
});
