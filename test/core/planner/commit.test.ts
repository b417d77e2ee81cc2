/**
 * The commit phase through `plan()`: what a scale-down records for a later
 * abort, the fence the write carries, and what a rollback leaves alone.
 */
import { describe, expect, it } from "vitest";
import { bindingAnnotation } from "../../../src/core/api/model-deployment.js";
import type { ScalerStatus } from "../../../src/core/api/scaler.js";
import { plan } from "../../../src/core/planner/plan.js";
import { inputOf, seconds, specOf, targetOf, want } from "./fixtures.js";

const iso = (s: number) => new Date(seconds(s)).toISOString();
const bound = { [bindingAnnotation]: JSON.stringify({ scalerName: "llm", scalerUID: "scaler-uid", term: 3 }) };

describe("a scale-down commit", () => {
  const spec = specOf({
    roles: [
      { name: "p", minReplicas: 1, maxReplicas: 16 },
      { name: "d", minReplicas: 1, maxReplicas: 16 },
    ],
    behavior: { scaleDown: { stabilizationWindowSeconds: 30 } },
  });
  const role = (name: string, replicas: number) => ({
    name,
    currentReplicas: replicas,
    readyReplicas: replicas,
    signalState: "Fresh" as const,
    stabilizationHistory: [{ timestamp: iso(-60), replicas: 1 }],
  });
  const status: ScalerStatus = { lastPassTime: iso(-15), roles: [role("p", 2), role("d", 3)] };

  it("records the role that shrank, the ordinal retired and the vector before, for an abort to restore", () => {
    const result = plan(
      inputOf({
        spec,
        target: targetOf(
          [
            { name: "p", replicas: 2 },
            { name: "d", replicas: 3 },
          ],
          { annotations: bound, generation: 7 },
        ),
        observations: { p: want(2, 2), d: want(1, 3) },
        status,
      }),
    );
    expect(result.commit?.vector).toEqual({ p: 2, d: 2 });
    expect(result.status.lastScaleDown).toStrictEqual({
      role: "d",
      ordinal: 2,
      preScaleDownVector: { p: 2, d: 3 },
      outcome: "Committed",
    });
    // The write is fenced on the target as read, and expects the generation it will cause.
    expect(result.commit).toMatchObject({ resourceVersion: "100", targetGeneration: 8 });
    // The binding is already ours: the commit does not write it again.
    expect(result.commit).not.toHaveProperty("binding");
  });

  it("a first commit on an unbound target carries the binding with it", () => {
    const result = plan(
      inputOf({
        spec,
        target: targetOf([
          { name: "p", replicas: 2 },
          { name: "d", replicas: 3 },
        ]),
        observations: { p: want(2, 2), d: want(1, 3) },
        status,
      }),
    );
    expect(result.commit?.vector).toEqual({ p: 2, d: 2 });
    expect(result.commit).toHaveProperty("binding");
  });
});

describe("a growth commit", () => {
  it("records no scale-down", () => {
    const spec = specOf({ roles: [{ name: "p", minReplicas: 1, maxReplicas: 16 }] });
    const result = plan(
      inputOf({
        spec,
        target: targetOf([{ name: "p", replicas: 2 }], { annotations: bound }),
        observations: { p: want(4, 2) },
      }),
    );
    expect(result.commit?.vector).toEqual({ p: 4 });
    expect(result.status.lastScaleDown).toBeUndefined();
  });
});

describe("a rollback", () => {
  it("returns replicas that never served: no scale-down record to restore", () => {
    const spec = specOf({ roles: [{ name: "p", minReplicas: 1, maxReplicas: 16 }] });
    const status: ScalerStatus = {
      lastPassTime: iso(-15),
      pendingCohort: {
        decisionID: "c-1",
        term: 3,
        baselineVector: { p: 2 },
        targetVector: { p: 4 },
        startedAt: iso(-400),
      },
    };
    const result = plan(
      inputOf({
        spec,
        target: targetOf([{ name: "p", replicas: 4, quotaReserved: 2, ready: 2 }], { annotations: bound }),
        observations: { p: want(4, 2) },
        status,
      }),
    );
    expect(result.commit).toMatchObject({ vector: { p: 2 }, reason: "ResourceExhausted" });
    expect(result.status.lastScaleDown).toBeUndefined();
  });
});

describe("a rebalance transaction waiting for its donor", () => {
  it("writes nothing, whatever the roles want", () => {
    const spec = specOf({
      roles: [
        { name: "p", minReplicas: 1, maxReplicas: 16 },
        { name: "d", minReplicas: 1, maxReplicas: 16 },
      ],
    });
    const status: ScalerStatus = {
      lastPassTime: iso(-15),
      rebalance: {
        receiverRole: "d",
        donorRole: "p",
        donorTargetReplicas: 1,
        startedAt: iso(-30),
        exhaustionEpisodeGeneration: 1,
        donationAttempted: true,
        reason: "DonorRelease",
      },
    };
    const result = plan(
      inputOf({
        spec,
        // The donor still has two ready replicas: it has not released one.
        target: targetOf(
          [
            { name: "p", replicas: 1, ready: 2, quotaReserved: 1 },
            { name: "d", replicas: 2 },
          ],
          { annotations: bound },
        ),
        observations: { p: want(1, 2), d: want(6, 2) },
        status,
      }),
    );
    expect(result.commit).toBeUndefined();
  });
});
