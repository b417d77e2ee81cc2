/** Rounding demand to replicas and holding at the current count, unknown signals included. */
import { describe, expect, it } from "vitest";
import { ceilReplicas, guardUnknownSignal, holdScaleDown } from "../../../src/core/algorithms/round-and-hold.js";
import { algorithmReasons } from "../../../src/core/algorithms/reasons.js";
import { observation } from "./fixtures.js";

describe("rounding and holds", () => {
  it("ceilReplicas: NaN is one replica; the float slack is relative to the demand", () => {
    expect(ceilReplicas(Number.NaN)).toBe(1);
    expect(ceilReplicas(3000.0000001)).toBe(3000);
    expect(ceilReplicas(3000.01)).toBe(3001);
  });

  it("a hold at the current count keeps the decision's reason", () => {
    const held = holdScaleDown({ replicas: 5, reason: algorithmReasons.proportional }, 5, algorithmReasons.panic);
    expect(held).toEqual({ replicas: 5, reason: algorithmReasons.proportional, holdReason: algorithmReasons.panic });
  });

  it("an unknown signal that recommends the current count waits for metrics", () => {
    const missing = observation({ signalState: "Missing" });
    const decision = guardUnknownSignal({ replicas: 5, reason: algorithmReasons.proportional }, missing, 5);
    expect(decision.reason).toBe(algorithmReasons.waitingForMetrics);
    const growth = guardUnknownSignal({ replicas: 6, reason: algorithmReasons.proportional }, missing, 5);
    expect(growth).toEqual({
      replicas: 6,
      reason: algorithmReasons.proportional,
      holdReason: algorithmReasons.waitingForMetrics,
    });
  });
});
