/** Demand per role kind and window, and forecast capacity per replica per kind. */
import { describe, expect, it } from "vitest";
import {
  forecastCapacityPerReplica,
  roleDemandTokensPerSecond,
  tokenFieldsRead,
} from "../../../src/core/algorithms/capacity.js";
import { PredictiveSchema } from "../../../src/core/api/scaler.js";
import { observation } from "./fixtures.js";

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
