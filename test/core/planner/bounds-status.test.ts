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

describe("bounds edges", () => {
  const role = (name: string, replicas: number) => ({ name, kind: "Server" as const, replicas });
  it("min above max is a conflict naming both; min equal to max is a pinned role", () => {
    const spec = specOf({ roles: [{ name: "s", minReplicas: 3, maxReplicas: 3 }] });
    expect(checkBounds(spec, [role("s", 3)])).toMatchObject({ ok: true });
    const pinned = checkBounds(spec, [role("s", 3)]);
    expect(pinned.ok && pinned.bounds.get("s")).toEqual({ min: 3, max: 3 });
    const inverted = { ...spec, roles: [{ name: "s", minReplicas: 4, maxReplicas: 3 }] };
    expect(checkBounds(inverted, [role("s", 3)])).toEqual({
      ok: false,
      message: "role s: minReplicas 4 exceeds maxReplicas 3",
    });
  });

  it("every problem is named, joined by '; '", () => {
    const spec = specOf({ roles: [{ name: "s", minReplicas: 1, maxReplicas: 3 }] });
    expect(checkBounds(spec, [role("x", 1), role("s", 5)])).toEqual({
      ok: false,
      message: "target role x has no bounds in spec.roles; role s: current 5 replicas is outside [1, 3]",
    });
    expect(checkBounds(spec, [])).toEqual({ ok: false, message: "the target has no roles" });
  });

  it("a recommendation at a bound is not clamped", () => {
    expect(clampToBounds(1, { min: 1, max: 3 })).toEqual({ value: 1, reason: "" });
    expect(clampToBounds(3, { min: 1, max: 3 })).toEqual({ value: 3, reason: "" });
    expect(clampToBounds(0, { min: 1, max: 3 })).toEqual({ value: 1, reason: "MinReplicas" });
    expect(clampToBounds(4, { min: 1, max: 3 })).toEqual({ value: 3, reason: "MaxReplicas" });
  });
});
