import { describe, expect, it } from "vitest";
import { checkBounds, clampToBounds } from "../../../src/core/planner/bounds.js";
import {
  controlPlaneMoved,
  historyFromStatus,
  historyToStatus,
  observedRoleStatus,
} from "../../../src/core/planner/status.js";
import { parseTimestampMs } from "../../../src/core/time/timestamp.js";
import type { ScalerStatus } from "../../../src/core/api/scaler.js";
import { specOf, targetOf, want } from "./fixtures.js";

describe("checkBounds", () => {
  const spec = specOf({
    roles: [
      { name: "p", minReplicas: 2, maxReplicas: 8 },
      { name: "d", maxReplicas: 4 },
      { name: "gone", maxReplicas: 4 },
    ],
  });
  it.each([
    {
      why: "every role inside its bounds; bounds for absent roles are ignored",
      roles: [
        { name: "p", replicas: 2 },
        { name: "d", replicas: 4 },
      ],
      ok: true,
    },
    {
      why: "a role without bounds",
      roles: [
        { name: "p", replicas: 2 },
        { name: "x", replicas: 1 },
      ],
      ok: false,
    },
    { why: "below the minimum", roles: [{ name: "p", replicas: 1 }], ok: false },
    { why: "above the maximum", roles: [{ name: "d", replicas: 5 }], ok: false },
    { why: "no roles at all", roles: [], ok: false },
  ])("$why", ({ roles, ok }) => {
    expect(checkBounds(spec, targetOf(roles).spec.roles).ok).toBe(ok);
  });

  it("names the offending role in the message", () => {
    const result = checkBounds(spec, targetOf([{ name: "d", replicas: 5 }]).spec.roles);
    expect(result.ok ? "" : result.message).toContain("role d: current 5 replicas is outside [1, 4]");
  });

  it.each([
    { value: 0, want: { value: 2, reason: "MinReplicas" } },
    { value: 5, want: { value: 5, reason: "" } },
    { value: 9, want: { value: 8, reason: "MaxReplicas" } },
  ])("clamps $value", ({ value, want: expected }) => {
    expect(clampToBounds(value, { min: 2, max: 8 })).toEqual(expected);
  });
});

describe("role observations in status", () => {
  it("keeps a missing reading absent and a measured zero as zero", () => {
    const status = observedRoleStatus(
      "p",
      2,
      want(0, 2, { promptTokensPerSecond: 0, kvCacheUsage: 0.4567 }),
      undefined,
    );
    expect(status).toMatchObject({ runningRequests: 0, promptTokensPerSecond: "0", kvCacheUsage: "0.457" });
    expect(status).not.toHaveProperty("ttftMilliseconds");
  });

  it("an unobserved role is Missing with the target's ready count", () => {
    expect(observedRoleStatus("p", 3, undefined, { name: "p", ready: 2 })).toEqual({
      name: "p",
      currentReplicas: 3,
      readyReplicas: 2,
      signalState: "Missing",
    });
  });
});

describe("control plane", () => {
  const base: ScalerStatus = {
    observedGeneration: 1,
    roles: [
      {
        name: "p",
        currentReplicas: 2,
        readyReplicas: 2,
        signalState: "Fresh",
        rawRecommendedReplicas: 2,
        constrainedReplicas: 2,
        runningRequests: 3,
      },
    ],
  };
  it.each([
    {
      why: "readings and history alone do not move it",
      next: {
        ...base,
        roles: [
          {
            ...base.roles![0]!,
            runningRequests: 9,
            stabilizationHistory: [{ timestamp: "2026-11-29T12:00:00.000Z", replicas: 2 }],
          },
        ],
      },
      moved: false,
    },
    {
      why: "a replica count moves it",
      next: { ...base, roles: [{ ...base.roles![0]!, constrainedReplicas: 3 }] },
      moved: true,
    },
    { why: "a generation moves it", next: { ...base, observedGeneration: 2 }, moved: true },
  ])("$why", ({ next, moved }) => {
    expect(controlPlaneMoved(base, next)).toBe(moved);
  });
});

describe("timestamps", () => {
  it.each([
    "2026-11-29T12:00:00.000Z",
    "2026-11-29T12:00:00Z",
    "2026-11-29T13:00:00+01:00",
    "2024-02-29T23:59:59.999Z",
  ])("parses %s like Date.parse", (text) => {
    expect(parseTimestampMs(text)).toBe(Date.parse(text));
  });

  it("rejects text that is not a time", () => {
    expect(parseTimestampMs("yesterday")).toBeUndefined();
  });

  it("round-trips history, reusing the stamp text", () => {
    const entries = [{ timestamp: "2026-11-29T12:00:00Z", replicas: 3 }];
    expect(historyToStatus(historyFromStatus(entries))).toEqual(entries);
  });
});
