/** The floor by the hour read from yesterday (`bench:hourly-floor`): the floors, and the policy keeping the fleet at them. */
import { describe, expect, it } from "vitest";
import { defaultCapacity } from "../../../src/sim/engines/model.js";
import { floorAtSecondOfDay, hourlyFloors, tokensPerSecondByMinute } from "../../../src/sim/quality/hourly-floor.js";
import { mdsPolicy } from "../../../src/sim/quality/policies/mds.js";
import { runPolicy } from "../../../src/sim/quality/run.js";
import { defaultScaler, replicaFigures } from "../../../src/sim/quality/scalers.js";
import type { Trace } from "../../../src/sim/quality/traces.js";
import { slice } from "./fixtures.js";

/** A day whose only traffic is `requests` requests of 1,000 + 200 tokens in one minute at `second`. */
function dayWithBurst(second: number, requests: number): Trace {
  return {
    name: "burst",
    requests: Array.from({ length: requests }, () => ({
      arrivalSeconds: second,
      promptTokens: 1000,
      outputTokens: 200,
    })),
    spanSeconds: 86_400,
    notes: [],
  };
}

describe("hourlyFloors", () => {
  it("reads each minute's tokens per second in the minute the requests arrived", () => {
    const minutes = tokensPerSecondByMinute(dayWithBurst(14 * 3600 + 30, 10));
    expect(minutes).toHaveLength(1440);
    expect(minutes[14 * 60]).toBe(200); // 12,000 tokens over 60 s
    expect(minutes.filter((m) => m > 0)).toHaveLength(1);
  });

  it("floors each hour at the busiest minute within the hour and half an hour either side, at least 1, at most the cap", () => {
    // 50 requests at 14:00:30: 1,000 tok/s; at 300 tok/s per replica that is 4 replicas.
    const floors = hourlyFloors(dayWithBurst(14 * 3600 + 30, 50), 300, 8);
    expect(floors).toHaveLength(24);
    // Hour 13 reads 12:30 to 14:30, hour 14 13:30 to 15:30; hour 15 starts reading at 14:30, after the burst.
    expect(floors.map((f, h) => [h, f]).filter(([, f]) => f !== 1)).toEqual([
      [13, 4],
      [14, 4],
    ]);
    expect(hourlyFloors(dayWithBurst(14 * 3600 + 30, 50), 300, 3)[14]).toBe(3);
    expect(hourlyFloors(dayWithBurst(14 * 3600 + 30, 50), 300, 8, 0)[13]).toBe(1);
  });

  it("refuses a target that is not a positive number, naming it", () => {
    expect(() => hourlyFloors(dayWithBurst(0, 1), 0, 4)).toThrow(/tokensPerSecondPerReplica: 0/);
  });

  it("looks a floor up by the second of the day, wrapping past midnight", () => {
    const floors = Array.from({ length: 24 }, (_, h) => h + 1);
    expect(floorAtSecondOfDay(floors, 0)).toBe(1);
    expect(floorAtSecondOfDay(floors, 14 * 3600 + 59)).toBe(15);
    expect(floorAtSecondOfDay(floors, 86_400 + 3600)).toBe(2);
  });
});

describe("mdsPolicy with floorAt", () => {
  const conv = slice("azure-conv", 1200);
  const figures = replicaFigures(conv, defaultCapacity);
  const spec = defaultScaler({ algorithm: "TokenThroughput", figures, maxReplicas: 12, ttftTargetMilliseconds: 1500 });

  it("keeps the fleet at the floor from the first pass, and plans without BoundsConflict", () => {
    const reasons: string[] = [];
    const desired: number[] = [];
    const floor = 5;
    const policy = mdsPolicy({
      spec,
      initialReplicas: 1,
      floorAt: () => floor,
      onPass: (result) => {
        reasons.push(...(result.status.conditions ?? []).filter((c) => c.type === "Blocked").map((c) => c.reason));
        desired.push(result.status.roles?.[0]?.constrainedReplicas ?? Number.NaN);
      },
    });
    const result = runPolicy(conv, policy, { seed: 1, fleet: {} });
    const without = runPolicy(conv, mdsPolicy({ spec, initialReplicas: 1 }), { seed: 1, fleet: {} });
    expect(reasons).not.toContain("BoundsConflict");
    expect(Math.min(...desired)).toBeGreaterThanOrEqual(floor);
    // The replicas added at the first pass count once started, within the longest cold start, 180 s.
    expect(result.replicaHours).toBeGreaterThanOrEqual((floor * (conv.spanSeconds - 180)) / 3600);
    expect(result.replicaHours).toBeGreaterThan(without.replicaHours);
  });

  it("refuses a scaler of more than one role, naming the count", () => {
    const two = { ...spec, roles: [...spec.roles, { ...spec.roles[0]!, name: "other" }] };
    expect(() => mdsPolicy({ spec: two, initialReplicas: 1, floorAt: () => 1 })).toThrow(/one role, it has 2/);
  });
});
