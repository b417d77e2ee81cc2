import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { filterUpdatedAtMs, readTrendState, writeTrendState } from "../../../src/core/algorithms/predictive.js";
import { decodeNumber, encodeNumber, nextHistory } from "../../../src/core/algorithms/predictor-state.js";
import { parseQuantity } from "../../../src/core/api/quantity.js";
import { PredictorStatusSchema } from "../../../src/core/api/scaler.js";
import { t0Ms } from "./fixtures.js";

describe("predictor numbers", () => {
  it("round-trip every double from 1e-30 to 1e18 in magnitude exactly, as a valid Kubernetes quantity", () => {
    const magnitude = fc.double({ min: 1e-30, max: 1e18, noNaN: true });
    fc.assert(
      fc.property(
        fc.oneof(
          magnitude,
          magnitude.map((x) => -x),
          fc.constant(0),
        ),
        (value) => {
          const text = encodeNumber(value);
          expect(decodeNumber(text)).toBe(value);
          expect(parseQuantity(text)).toBeDefined();
        },
      ),
    );
  });

  it("writes a magnitude under 1e-30 as 0", () => {
    expect(encodeNumber(1e-31)).toBe("0");
    expect(encodeNumber(-5e-324)).toBe("0");
  });

  it.each([
    [0.1 + 0.2, "0.30000000000000004"],
    [1.5e-7, "1.5e-7"],
    [-0, "0"],
    [2400, "2400"],
  ])("writes %s as %s (more digits than status quantities, where a restart needs them)", (value, text) => {
    expect(encodeNumber(value)).toBe(text);
  });

  it("refuses to write a non-finite number", () => {
    expect(() => encodeNumber(Number.NaN)).toThrow();
    expect(() => encodeNumber(Number.POSITIVE_INFINITY)).toThrow();
  });

  it.each(["", " ", "abc", "NaN", "Infinity"])("reads %j as no number", (text) => {
    expect(decodeNumber(text)).toBeUndefined();
  });
});

describe("filter state in status", () => {
  const state = {
    level: 2400.123456789,
    trend: -0.1 / 3,
    p00: 9.68,
    p01: 0.5,
    p10: 0.5,
    p11: 1e-5,
    sampleCount: 7,
    updatedAtMs: t0Ms,
  };

  it("writes and reads back the identical state through JSON", () => {
    const entry = writeTrendState("prefill", state, []);
    const restored = PredictorStatusSchema.parse(JSON.parse(JSON.stringify(entry)));
    expect(readTrendState(restored)).toEqual(state);
    expect(entry).not.toHaveProperty("history");
    expect(entry.lastUpdateTime).toBe("2026-11-29T12:00:00.000Z");
  });

  it.each([
    { name: "no filter observations (a TokenThroughput entry)", patch: { sampleCount: 0 } },
    { name: "no update time and no demand history", patch: { lastUpdateTime: undefined } },
    {
      name: "no update time and only unreadable demand stamps",
      patch: { lastUpdateTime: undefined, history: [{ timestamp: "soon", tokensPerSecond: "1" }] },
    },
    { name: "an unreadable level", patch: { level: "lots" } },
    { name: "a non-positive level variance", patch: { covariance: { p00: "0", p01: "0", p10: "0", p11: "1" } } },
    { name: "an unreadable time", patch: { lastUpdateTime: "yesterday" } },
  ])("holds no filter with $name", ({ patch }) => {
    const entry = { ...writeTrendState("prefill", state, []), ...patch };
    if (entry.lastUpdateTime === undefined) delete entry.lastUpdateTime;
    expect(readTrendState(entry as Parameters<typeof readTrendState>[0])).toBeUndefined();
  });
});

describe("filter state without lastUpdateTime (an extension of the specification)", () => {
  const at = (seconds: number) => new Date(t0Ms + seconds * 1000).toISOString();
  const state = { level: 100, trend: 1, p00: 2, p01: 0, p10: 0, p11: 1, sampleCount: 7, updatedAtMs: t0Ms };
  const history = [
    { timestamp: at(-15), tokensPerSecond: "90" },
    { timestamp: "garbage", tokensPerSecond: "95" },
    { timestamp: at(0), tokensPerSecond: "100" },
    { timestamp: at(-30), tokensPerSecond: "80" },
  ];

  it("the newest readable demand sample is the update time, whatever the order", () => {
    const { lastUpdateTime: _dropped, ...bare } = writeTrendState("prefill", state, history);
    expect(filterUpdatedAtMs(bare)).toBe(t0Ms);
    expect(readTrendState(bare)).toEqual(state);
  });

  it("lastUpdateTime wins where present", () => {
    const entry = writeTrendState("prefill", { ...state, updatedAtMs: t0Ms - 60_000 }, history);
    expect(filterUpdatedAtMs(entry)).toBe(t0Ms - 60_000);
  });
});

describe("nextHistory", () => {
  const at = (seconds: number) => new Date(t0Ms + seconds * 1000).toISOString();

  it("drops samples outside the window, unreadable ones, and ones not before now", () => {
    const history = [
      { timestamp: at(-200), tokensPerSecond: "1" },
      { timestamp: at(-180), tokensPerSecond: "2" },
      { timestamp: at(-179), tokensPerSecond: "3" },
      { timestamp: "garbage", tokensPerSecond: "4" },
      { timestamp: at(-10), tokensPerSecond: "oops" },
      { timestamp: at(0), tokensPerSecond: "5" },
      { timestamp: at(30), tokensPerSecond: "6" },
    ];
    expect(nextHistory(history, t0Ms, 180, 7)).toEqual([
      { timestamp: at(-179), tokensPerSecond: "3" },
      { timestamp: at(0), tokensPerSecond: "7" },
    ]);
  });

  it("appends nothing for an unknown demand", () => {
    expect(nextHistory([{ timestamp: at(-5), tokensPerSecond: "3" }], t0Ms, 180, undefined)).toEqual([
      { timestamp: at(-5), tokensPerSecond: "3" },
    ]);
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
