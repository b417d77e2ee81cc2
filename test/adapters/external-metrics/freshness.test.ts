import { describe, expect, it } from "vitest";
import { staleness, type FreshnessView } from "../../../src/adapters/external-metrics/freshness.js";

const current: FreshnessView = {
  generation: 2,
  observedGeneration: 2,
  deleting: false,
  suspend: false,
  conditions: [
    { type: "Bound", status: "True", reason: "Bound" },
    { type: "Blocked", status: "True", reason: "PacingBounded" },
  ],
};

describe("the freshness rule", () => {
  it("keeps a bound, observed scaler under a renewing leader current", () => {
    expect(staleness(current, true)).toBeUndefined();
  });

  it.each<[string, FreshnessView, boolean, string]>([
    ["no leader renews the Lease", current, false, "NoLeader"],
    ["suspended", { ...current, suspend: true }, true, "Suspended"],
    ["being deleted", { ...current, deleting: true }, true, "Deleting"],
    ["a spec edit the leader has not planned yet", { ...current, generation: 3 }, true, "NotObserved"],
    [
      "unbound (another scaler owns the target)",
      { ...current, conditions: [{ type: "Bound", status: "False", reason: "AlreadyBound" }] },
      true,
      "Unbound",
    ],
    ["no Bound condition yet", { ...current, conditions: [] }, true, "Unbound"],
    [
      "Blocked by a bounds conflict",
      {
        ...current,
        conditions: [
          { type: "Bound", status: "True", reason: "Bound" },
          { type: "Blocked", status: "True", reason: "BoundsConflict" },
        ],
      },
      true,
      "BlockedByConflict",
    ],
    [
      "Blocked by a ratio conflict",
      {
        ...current,
        conditions: [
          { type: "Bound", status: "True", reason: "Bound" },
          { type: "Blocked", status: "True", reason: "RatioConflict" },
        ],
      },
      true,
      "BlockedByConflict",
    ],
  ])("reports missing when %s", (_, view, leader, why) => {
    expect(staleness(view, leader)).toBe(why);
  });
});
