/**
 * The fleet's quota in the loop: replicas beyond it stay pending, the planner
 * sees them through `quotaReserved`, holds further growth while its cohort
 * waits, and after `sampling.pendingTimeoutSeconds` restores the cohort's
 * baseline vector with a `ResourceExhausted` commit (the specification's
 * pending-cohort rule), all in simulated time.
 */
import { describe, expect, it } from "vitest";
import { defaultCapacity } from "../../../src/sim/engines/model.js";
import type { Commit } from "../../../src/core/planner/types.js";
import type { QualityFleet } from "../../../src/sim/quality/cluster.js";
import { mdsPolicy } from "../../../src/sim/quality/policies/mds.js";
import { runPolicy } from "../../../src/sim/quality/run.js";
import { defaultScaler, replicaFigures } from "../../../src/sim/quality/scalers.js";
import { slice } from "./fixtures.js";

const conv = slice("azure-conv", 1800);
const figures = replicaFigures(conv, defaultCapacity);
const quotaReplicas = 3;

function scaler() {
  return defaultScaler({
    algorithm: "TokenThroughput",
    // A quarter of the replica's capacity: the trace then asks for more replicas than the quota.
    figures: { ...figures, tokensPerSecond: figures.tokensPerSecond / 4 },
    maxReplicas: 32,
    ttftTargetMilliseconds: 1500,
  });
}

describe("quota in the quality simulator", () => {
  it("withholds replicas beyond the quota; the planner rolls the pending cohort back with ResourceExhausted", () => {
    const commits: { at: number; commit: Commit; pending: number }[] = [];
    let fleet: QualityFleet | undefined;
    const inner = mdsPolicy({
      spec: scaler(),
      initialReplicas: 1,
      onPass: (result, at) => {
        if (result.commit !== undefined)
          commits.push({ at, commit: result.commit, pending: fleet?.count("Pending") ?? 0 });
      },
    });
    const policy = {
      ...inner,
      start: (f: QualityFleet) => {
        fleet = f;
        inner.start?.(f);
      },
      decide: inner.decide,
    };
    const result = runPolicy(conv, policy, { seed: 1, fleet: { quotaReplicas } });
    const pendingTimeoutSeconds = scaler().sampling.pendingTimeoutSeconds;

    // The quota held: never more than three replicas admitted, and pending replicas cost nothing.
    expect(result.maxReplicas).toBeLessThanOrEqual(quotaReplicas);
    expect(result.replicaHours).toBeLessThanOrEqual((quotaReplicas * conv.spanSeconds) / 3600 + 1e-9);
    expect(result.gpuHours).toBeCloseTo(result.replicaHours * result.gpusPerReplica, 9);

    // The planner grew past the quota, the added replicas waited, and after the pending timeout
    // it restored the cohort's baseline in one ResourceExhausted write.
    const growth = commits.find((c) => c.commit.reason === "Scale" && (c.commit.vector.server ?? 0) > quotaReplicas);
    expect(growth, JSON.stringify(commits.map((c) => [c.at, c.commit.reason, c.commit.vector]))).toBeDefined();
    const rollback = commits.find((c) => c.commit.reason === "ResourceExhausted");
    expect(rollback, JSON.stringify(commits.map((c) => [c.at, c.commit.reason, c.commit.vector]))).toBeDefined();
    const r = rollback as (typeof commits)[number];
    const g = growth as (typeof commits)[number];
    expect(r.at).toBeGreaterThan(g.at);
    expect(r.pending).toBeGreaterThan(0);
    expect(r.commit.vector.server).toBeLessThanOrEqual(quotaReplicas);
    expect(r.commit.vector.server).toBeLessThan(r.commit.baselineVector.server ?? 0);
    // The rollback came no sooner than the timeout after the cohort it undid was committed.
    const cohortStart = commits
      .filter((c) => c.at < r.at && c.commit.reason === "Scale")
      .pop() as (typeof commits)[number];
    expect(r.at - cohortStart.at).toBeGreaterThanOrEqual(pendingTimeoutSeconds);
    expect(result.notes).toMatch(/PendingAdmission|ResourceExhausted/);
  });
});
