/** The floor by the hour in the simulator: yesterday's minutes from a trace, and the planner's floor on the trace's clock. */
import { describe, expect, it } from "vitest";
import { defaultCapacity } from "../../../src/sim/engines/model.js";
import { arrivalMinutes } from "../../../src/sim/quality/hourly-floor.js";
import { mdsPolicy } from "../../../src/sim/quality/policies/mds.js";
import { runPolicy } from "../../../src/sim/quality/run.js";
import { defaultScaler, replicaFigures } from "../../../src/sim/quality/scalers.js";
import { fromSecond, type Trace } from "../../../src/sim/quality/traces.js";
import { slice } from "./fixtures.js";

describe("arrivalMinutes", () => {
  it("counts each request's tokens per second in the minute it arrived", () => {
    const trace: Trace = {
      name: "burst",
      requests: Array.from({ length: 10 }, () => ({
        arrivalSeconds: 14 * 3600 + 30,
        promptTokens: 1000,
        outputTokens: 200,
      })),
      spanSeconds: 86_400,
      notes: [],
    };
    const minutes = arrivalMinutes(trace);
    expect(minutes).toHaveLength(1440);
    expect(minutes[14 * 60]).toEqual({ endSeconds: 14 * 3600 + 60, tokensPerSecond: 200 }); // 12,000 tokens over 60 s
    expect(minutes.filter((m) => m.tokensPerSecond > 0)).toHaveLength(1);
  });
});

describe("floorReplicasByUtcHour in a simulated run", () => {
  const conv = slice("azure-conv", 1200);
  const figures = replicaFigures(conv, defaultCapacity);
  const base = defaultScaler({ algorithm: "TokenThroughput", figures, maxReplicas: 12, ttftTargetMilliseconds: 1500 });
  // A floor of 5 in the trace's first hour only (its second 0 is 00:00 UTC).
  const floors = Array.from({ length: 24 }, (_, h) => (h === 0 ? 5 : 1));
  const spec = { ...base, roles: base.roles.map((r) => ({ ...r, floorReplicasByUtcHour: floors })) };
  const lowest = (trace: Trace): number => {
    const desired: number[] = [];
    const policy = mdsPolicy({
      spec,
      initialReplicas: 1,
      onPass: (result) => desired.push(result.status.roles?.[0]?.constrainedReplicas ?? Number.NaN),
    });
    runPolicy(trace, policy, { seed: 1, fleet: {} });
    // After the first minute, where the scale-up from one replica is paced.
    return Math.min(...desired.slice(4));
  };

  it("keeps the role at the floor through the hour the trace's clock is in", () => {
    expect(lowest(conv)).toBeGreaterThanOrEqual(5);
  });

  it("reads the hour from the trace's own time of day when replayed from a later second", () => {
    const later: Trace = { ...conv, originSeconds: 3600 };
    expect(lowest(later)).toBeLessThan(5);
    expect(fromSecond(conv, 600).originSeconds).toBe(600);
    expect(fromSecond(fromSecond(conv, 600), 60).originSeconds).toBe(660);
  });
});
