/**
 * Role readings as status shows them, history entries read back from status,
 * and the "control plane moved" test that decides whether a pass writes status.
 */
import { describe, expect, it } from "vitest";
import {
  controlPlaneMoved,
  historyFromStatus,
  observedRoleStatus,
  stableJson,
} from "../../../src/core/planner/status.js";
import type { ScalerStatus } from "../../../src/core/api/scaler.js";
import { want } from "./fixtures.js";

describe("observedRoleStatus", () => {
  it("names every reading with its status field", () => {
    const status = observedRoleStatus(
      "d",
      3,
      want(2, 3, {
        promptTokensPerSecond: 1500,
        generationTokensPerSecond: 250,
        waitingRequests: 4,
        kvCacheUsage: 0.5,
        ttftMilliseconds: 120,
        itlMilliseconds: 15,
        queueTimeMilliseconds: 30,
      }),
      undefined,
    );
    expect(status).toEqual({
      name: "d",
      currentReplicas: 3,
      readyReplicas: 3,
      signalState: "Fresh",
      promptTokensPerSecond: "1500",
      generationTokensPerSecond: "250",
      runningRequests: 2,
      waitingRequests: 4,
      kvCacheUsage: "0.5",
      ttftMilliseconds: "120",
      itlMilliseconds: "15",
      queueTimeMilliseconds: "30",
    });
  });

  it("leaves out readings that are absent or not finite: unknown is not shown as a number", () => {
    const status = observedRoleStatus(
      "d",
      2,
      want(Number.NaN, 2, { kvCacheUsage: Number.POSITIVE_INFINITY, ttftMilliseconds: Number.NaN }),
      undefined,
    );
    expect(Object.keys(status).sort()).toEqual(["currentReplicas", "name", "readyReplicas", "signalState"]);
  });

  it("an unobserved role of a target without role status has no ready replicas", () => {
    expect(observedRoleStatus("d", 2, undefined, undefined)).toEqual({
      name: "d",
      currentReplicas: 2,
      readyReplicas: 0,
      signalState: "Missing",
    });
  });
});

describe("historyFromStatus", () => {
  it("drops an entry whose timestamp cannot be parsed and keeps the rest", () => {
    const samples = historyFromStatus([
      { timestamp: "yesterday", replicas: 9 },
      { timestamp: "2026-11-30T10:00:00Z", replicas: 3 },
    ]);
    expect(samples).toEqual([
      { timestampMs: Date.parse("2026-11-30T10:00:00Z"), replicas: 3, timestamp: "2026-11-30T10:00:00Z" },
    ]);
  });
});

describe("controlPlaneMoved", () => {
  it("no conditions and an empty list of conditions are the same control plane; so are no roles and none", () => {
    const bare: ScalerStatus = { observedGeneration: 2 };
    expect(controlPlaneMoved(bare, { ...bare, conditions: [] })).toBe(false);
    expect(controlPlaneMoved({ ...bare, conditions: [] }, bare)).toBe(false);
    expect(controlPlaneMoved(bare, { ...bare, roles: [] })).toBe(false);
  });

  it("a first status always moves the control plane", () => {
    expect(controlPlaneMoved(undefined, {})).toBe(true);
  });

  it("the order of keys in a record does not count as a change", () => {
    const commit = { decisionID: "a", term: 1, baselineVector: { p: 1, d: 2 }, targetVector: { p: 2, d: 4 } };
    const reordered = { targetVector: { d: 4, p: 2 }, baselineVector: { d: 2, p: 1 }, term: 1, decisionID: "a" };
    const before = { lastCommit: commit } as unknown as ScalerStatus;
    const after = { lastCommit: reordered } as unknown as ScalerStatus;
    expect(controlPlaneMoved(before, after)).toBe(false);
    expect(controlPlaneMoved(before, { lastCommit: { ...commit, targetVector: { p: 2, d: 5 } } } as never)).toBe(true);
  });
});

describe("stableJson", () => {
  it("sorts object keys at every depth and keeps arrays, nulls and scalars as they are", () => {
    expect(stableJson({ b: [3, { z: null, y: "t" }], a: { d: 1, c: true } })).toBe(
      '{"a":{"c":true,"d":1},"b":[3,{"y":"t","z":null}]}',
    );
  });
});
