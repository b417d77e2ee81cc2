/** The floor by the hour (`floorReplicasByUtcHour`): it raises what the pass records, and nothing else. */
import { describe, expect, it } from "vitest";
import { hourlyFloorAt, raiseToHourlyFloor } from "../../../src/core/planner/hourly-floor.js";
import { plan } from "../../../src/core/planner/plan.js";
import { condition, inputOf, roleOf, specOf, t0, targetOf, want } from "./fixtures.js";

/** Floors of 1 at every hour but 12:00–13:00 UTC (t0 is 12:00 UTC), where it is `atNoon`. */
const noonFloors = (atNoon: number): number[] => Array.from({ length: 24 }, (_, h) => (h === 12 ? atNoon : 1));

describe("hourlyFloorAt", () => {
  it("reads the UTC hour the instant falls in", () => {
    const floors = Array.from({ length: 24 }, (_, h) => h + 1);
    expect(hourlyFloorAt(floors, Date.parse("2026-12-05T00:00:00Z"))).toBe(1);
    expect(hourlyFloorAt(floors, Date.parse("2026-12-05T14:59:59Z"))).toBe(15);
    expect(hourlyFloorAt(floors, Date.parse("2026-12-05T23:30:00+02:00"))).toBe(22);
    expect(hourlyFloorAt(undefined, t0)).toBeUndefined();
  });

  it("raises a count below the floor and leaves one at or above it", () => {
    expect(raiseToHourlyFloor(2, noonFloors(5), t0)).toEqual({ value: 5, reason: "HourlyFloor" });
    expect(raiseToHourlyFloor(5, noonFloors(5), t0)).toEqual({ value: 5, reason: "" });
    expect(raiseToHourlyFloor(7, noonFloors(5), t0)).toEqual({ value: 7, reason: "" });
    expect(raiseToHourlyFloor(2, undefined, t0)).toEqual({ value: 2, reason: "" });
  });
});

describe("a pass under a floor by the hour", () => {
  const spec = (atNoon: number, maxReplicas = 8) =>
    specOf({ roles: [{ name: "s", maxReplicas, floorReplicasByUtcHour: noonFloors(atNoon) }] });
  const pass = (atNoon: number, observation = want(2), maxReplicas = 8, nowMs = t0) =>
    plan(
      inputOf({
        spec: spec(atNoon, maxReplicas),
        target: targetOf([{ name: "s", replicas: 2 }]),
        observations: { s: observation },
        nowMs,
      }),
    );

  it("scales up to the hour's floor where the algorithm asks for less, naming the floor", () => {
    const result = pass(5);
    expect(result.commit?.vector).toEqual({ s: 5 });
    expect(roleOf(result, "s").reason).toBe("HourlyFloor");
    expect(roleOf(result, "s").stabilizationHistory?.map((h) => h.replicas)).toEqual([5]);
  });

  it("leaves a recommendation above the floor as it is", () => {
    const result = pass(3, want(6));
    expect(result.commit?.vector).toEqual({ s: 6 });
    expect(roleOf(result, "s").reason).not.toBe("HourlyFloor");
  });

  it("does nothing outside the floor's hour", () => {
    const result = pass(5, want(2), 8, t0 + 3600_000);
    expect(result.commit).toBeUndefined();
  });

  it("is clamped to maxReplicas like any recommendation", () => {
    const result = pass(12, want(2), 6);
    expect(result.commit?.vector).toEqual({ s: 6 });
    expect(roleOf(result, "s").reason).toBe("MaxReplicas");
  });

  it("never makes a recommendation: a pass that holds for signals holds", () => {
    const result = pass(5, { ...want(2), signalState: "Missing" });
    expect(result.commit).toBeUndefined();
    expect(roleOf(result, "s").stabilizationHistory ?? []).toEqual([]);
    expect(condition(result, "Blocked")?.reason).not.toBe("BoundsConflict");
  });
});
