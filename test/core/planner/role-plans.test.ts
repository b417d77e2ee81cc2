/**
 * The hold rule of phase 4: which passes hold a role for want of signals, so
 * that their recommendation joins no stabilization history.
 */
import { describe, expect, it } from "vitest";
import type { RoleRecommendation } from "../../../src/core/algorithms/types.js";
import { holdsForSignals } from "../../../src/core/planner/role-plans.js";
import type { RoleObservation } from "../../../src/core/signals/types.js";
import { plan } from "../../../src/core/planner/plan.js";
import { inputOf, roleOf, specOf, targetOf, want } from "./fixtures.js";

const rec = (extra: Partial<RoleRecommendation> = {}): RoleRecommendation =>
  ({ role: "d", scaled: true, replicas: 3, reason: "Scaled", ...extra }) as RoleRecommendation;
const waiting = rec({ scaleDownHold: { reason: "WaitingForMetrics" } } as Partial<RoleRecommendation>);
const observed = (signalState: RoleObservation["signalState"]): RoleObservation => ({ ...want(3), signalState });

describe("holdsForSignals", () => {
  it.each([
    {
      why: "fresh signals and a recommendation: a sample",
      r: rec(),
      obs: observed("Fresh"),
      coupled: false,
      holds: false,
    },
    {
      why: "no recommendation, fresh signals: no hold",
      r: undefined,
      obs: observed("Fresh"),
      coupled: false,
      holds: false,
    },
    { why: "Missing signals hold", r: rec(), obs: observed("Missing"), coupled: false, holds: true },
    { why: "Stale signals hold", r: rec(), obs: observed("Stale"), coupled: false, holds: true },
    { why: "an unobserved role holds", r: rec(), obs: undefined, coupled: false, holds: true },
    {
      why: "the algorithm waiting for metrics holds even on fresh signals",
      r: waiting,
      obs: observed("Fresh"),
      coupled: false,
      holds: true,
    },
    { why: "a coupled role ignores its own signals", r: rec(), obs: undefined, coupled: true, holds: false },
    {
      why: "a coupled role inherits its driver's wait",
      r: waiting,
      obs: observed("Fresh"),
      coupled: true,
      holds: true,
    },
  ])("$why", ({ r, obs, coupled, holds }) => {
    expect(holdsForSignals(r, obs, coupled)).toBe(holds);
  });
});

describe("a role nothing drives", () => {
  it("keeps no stabilization history: it recommends nothing", () => {
    const spec = specOf({
      roles: [
        { name: "s", minReplicas: 1, maxReplicas: 16 },
        { name: "x", minReplicas: 1, maxReplicas: 16 },
      ],
      algorithm: {
        type: "Proportional",
        proportional: { metric: "RunningRequests", roleTargets: [{ name: "s", target: "1" }] },
      },
    });
    const { algorithm: _echo, ...viaRegistry } = inputOf({
      spec,
      target: targetOf([
        { name: "s", replicas: 2 },
        { name: "x", replicas: 2 },
      ]),
      observations: { s: want(2, 2), x: want(2, 2) },
    });
    const result = plan(viaRegistry);
    expect(roleOf(result, "x").reason).toBe("NoTarget");
    expect(roleOf(result, "x").stabilizationHistory ?? []).toEqual([]);
    expect(roleOf(result, "s").stabilizationHistory).toHaveLength(1);
  });
});
