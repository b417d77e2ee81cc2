/**
 * The edges of the shared algorithm rules that the scenario tests do not pin:
 * demand per kind and window, capacities per kind, the parts a composite
 * metric needs, rounding, holds at the current count, ratio coupling and the
 * predictor history window.
 */
import { describe, expect, it } from "vitest";
import {
  forecastCapacityPerReplica,
  roleDemandTokensPerSecond,
  tokenFieldsRead,
} from "../../../src/core/algorithms/capacity.js";
import { preferredRatio, withCoupledRoles } from "../../../src/core/algorithms/coupling.js";
import { ceilReplicas, guardUnknownSignal, holdScaleDown } from "../../../src/core/algorithms/decision.js";
import { algorithmReasons } from "../../../src/core/algorithms/reasons.js";
import { encodeNumber, nextHistory } from "../../../src/core/algorithms/predictor-state.js";
import { proportional, proportionalMetricTotal } from "../../../src/core/algorithms/proportional.js";
import { fieldsRead } from "../../../src/core/algorithms/reads.js";
import type { RoleRecommendation } from "../../../src/core/algorithms/types.js";
import { PredictiveSchema } from "../../../src/core/api/scaler.js";
import { observation, role, run, spec, t0Ms } from "./fixtures.js";

describe("role demand", () => {
  const obs = observation({
    promptTokensPerSecond: 100,
    generationTokensPerSecond: 200,
    panicPromptTokensPerSecond: 300,
    panicGenerationTokensPerSecond: 400,
  });

  it.each([
    ["Prefill", "stable", 100],
    ["Prefill", "panic", 300],
    ["Decode", "stable", 200],
    ["Decode", "panic", 400],
    ["Server", "stable", 300],
    ["Server", "panic", 700],
    ["Encode", "stable", undefined],
  ] as const)("%s over the %s window: %s", (kind, window, expected) => {
    expect(roleDemandTokensPerSecond(kind, obs, window)).toBe(expected);
  });

  it("a Server role with half its demand has none", () => {
    expect(roleDemandTokensPerSecond("Server", observation({ promptTokensPerSecond: 100 }), "stable")).toBeUndefined();
    expect(
      roleDemandTokensPerSecond("Server", observation({ generationTokensPerSecond: 100 }), "stable"),
    ).toBeUndefined();
  });

  it("an Encode role reads no field", () => {
    expect(tokenFieldsRead("Encode")).toEqual([]);
  });

  it("forecast capacity per kind", () => {
    const params = PredictiveSchema.parse({
      prefillTokenCapacityPerReplica: "1k",
      decodeTokenCapacityPerReplica: "2k",
      serverTokenCapacityPerReplica: "3k",
    });
    expect(forecastCapacityPerReplica("Prefill", params)).toBe(1000);
    expect(forecastCapacityPerReplica("Decode", params)).toBe(2000);
    expect(forecastCapacityPerReplica("Server", params)).toBe(3000);
    expect(forecastCapacityPerReplica("Encode", params)).toBeUndefined();
  });
});

describe("proportional metric totals", () => {
  it.each([
    ["QueueDepth", { runningRequests: 3 }],
    ["QueueDepth", { waitingRequests: 3 }],
    ["TotalTokensPerSecond", { panicPromptTokensPerSecond: 3 }],
    ["TotalTokensPerSecond", { panicGenerationTokensPerSecond: 3 }],
  ] as const)("%s with only %j is unknown", (metric, fields) => {
    expect(proportionalMetricTotal(metric, observation(fields))).toBeUndefined();
  });

  it("a composite metric adds its parts", () => {
    expect(proportionalMetricTotal("QueueDepth", observation({ runningRequests: 3, waitingRequests: 4 }))).toBe(7);
    const rates = observation({ panicPromptTokensPerSecond: 3, panicGenerationTokensPerSecond: 4 });
    expect(proportionalMetricTotal("TotalTokensPerSecond", rates)).toBe(7);
  });
});

describe("proportional recommendations", () => {
  const proportionalSpec = spec(
    {
      algorithm: {
        proportional: {
          metric: "RunningRequests",
          roleTargets: [
            { name: "a", target: "10" },
            { name: "b", target: "10" },
          ],
        },
      },
    },
    ["a", "b", "c"],
  );

  it("a recommendation without a hold carries no hold field, and the algorithm keeps no predictor", () => {
    const result = run(proportionalSpec, [
      role("a", "Server", 2, observation({ runningRequests: 60 })),
      role("b", "Server", 2, observation({ runningRequests: 20 })),
      role("c", "Server", 2, observation()),
    ]);
    expect(result.predictors).toEqual([]);
    expect(result.roles[0]).toEqual({ role: "a", scaled: true, replicas: 6, reason: "Proportional" });
    expect(result.roles[1]).not.toHaveProperty("scaleDownHold");
    expect(result.roles[2]).toMatchObject({ role: "c", scaled: false, reason: algorithmReasons.noTarget });
  });

  it("without its parameter block no role is driven", () => {
    const bare = { ...proportionalSpec, algorithm: { type: "Proportional" as const } };
    const result = proportional.recommend({
      spec: bare,
      roles: [role("a", "Server", 2, observation({ runningRequests: 60 }))],
      predictors: [],
      nowMs: t0Ms,
    });
    expect(result.roles).toEqual([{ role: "a", scaled: false, replicas: 2, reason: algorithmReasons.noTarget }]);
  });

  it("reads nothing without its parameter block", () => {
    const bare = { ...proportionalSpec, algorithm: { type: "Proportional" as const } };
    expect(fieldsRead(bare, { name: "a", kind: "Server" })).toEqual([]);
  });

  it("reads its metric's fields for every targeted role and none for the others", () => {
    expect(fieldsRead(proportionalSpec, { name: "a", kind: "Server" })).toEqual(["runningRequests"]);
    expect(fieldsRead(proportionalSpec, { name: "b", kind: "Server" })).toEqual(["runningRequests"]);
    expect(fieldsRead(proportionalSpec, { name: "c", kind: "Server" })).toEqual([]);
  });
});

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

describe("ratio coupling", () => {
  const driver = (replicas: number, hold?: string): RoleRecommendation => ({
    role: "prefill",
    scaled: true,
    replicas,
    reason: "TokenThroughput",
    ...(hold === undefined ? {} : { scaleDownHold: { reason: hold } }),
  });
  const roles = [role("prefill", "Prefill", 4, observation()), role("encode", "Encode", 10, observation())];

  it("the preferred ratio: the one bound given, else the middle", () => {
    const base = { numeratorRole: "encode", denominatorRole: "prefill" };
    expect(preferredRatio({ ...base, max: "2" })).toBe(2);
    expect(preferredRatio({ ...base, min: "0.5" })).toBe(0.5);
    expect(preferredRatio({ ...base, min: "0.5", max: "1.5" })).toBe(1);
    expect(preferredRatio(base)).toBeUndefined();
  });

  it("skips ratios that give no positive value and takes the next", () => {
    const ratios = [
      { numeratorRole: "encode", denominatorRole: "prefill" },
      { numeratorRole: "encode", denominatorRole: "prefill", target: "0" },
      { numeratorRole: "encode", denominatorRole: "prefill", target: "0.5" },
    ];
    const [, encode] = withCoupledRoles(roles, ratios, new Map([["prefill", driver(5)]]));
    expect(encode).toEqual({ role: "encode", scaled: true, replicas: 3, reason: algorithmReasons.ratioCoupled });
  });

  it("follows an unheld driver down; a held driver holds it at its count", () => {
    const ratios = [{ numeratorRole: "encode", denominatorRole: "prefill", target: "0.5" }];
    const [, down] = withCoupledRoles(roles, ratios, new Map([["prefill", driver(2)]]));
    expect(down).toEqual({ role: "encode", scaled: true, replicas: 1, reason: algorithmReasons.ratioCoupled });
    const [, held] = withCoupledRoles(roles, ratios, new Map([["prefill", driver(2, "Panic")]]));
    expect(held).toEqual({
      role: "encode",
      scaled: true,
      replicas: 10,
      reason: algorithmReasons.ratioCoupled,
      scaleDownHold: { reason: "Panic" },
    });
  });
});

describe("predictor state", () => {
  it("refuses to store a number that is not finite, naming it", () => {
    expect(() => encodeNumber(Number.POSITIVE_INFINITY)).toThrow("predictor state must be finite, got Infinity");
  });

  it("keeps the samples inside the window and before now, readable ones only", () => {
    const at = (offsetSeconds: number, tokensPerSecond = "1"): { timestamp: string; tokensPerSecond: string } => ({
      timestamp: new Date(t0Ms + offsetSeconds * 1000).toISOString(),
      tokensPerSecond,
    });
    const history = [
      at(-600),
      at(-599),
      at(-10, "x"),
      at(-5),
      at(0),
      at(5),
      { timestamp: "never", tokensPerSecond: "1" },
    ];
    expect(nextHistory(history, t0Ms, 600, undefined)).toEqual([at(-599), at(-5)]);
  });
});
