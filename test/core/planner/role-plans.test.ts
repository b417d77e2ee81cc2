/**
 * The hold rule of phase 4: which passes hold a role for want of signals, so
 * that their recommendation joins no stabilization history.
 */
import { describe, expect, it } from "vitest";
import type { RoleRecommendation } from "../../../src/core/algorithms/types.js";
import { holdsForSignals } from "../../../src/core/planner/role-plans.js";
import type { RoleObservation } from "../../../src/core/signals/types.js";
import { want } from "./fixtures.js";

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
