/** Prometheus' duration syntax, as a scrape interval is written. */
import { describe, expect, it } from "vitest";
import { durationSeconds } from "../../../src/adapters/prometheus/duration.js";

describe("durationSeconds", () => {
  it.each([
    ["15s", 15],
    ["1m", 60],
    ["1m30s", 90],
    ["500ms", 0.5],
    ["1h", 3600],
    ["2d", 172_800],
    ["1w", 604_800],
    ["1y", 31_536_000],
    ["1h1m1s1ms", 3661.001],
  ])("reads %s as %d seconds", (text, seconds) => {
    expect(durationSeconds(text)).toBeCloseTo(seconds, 9);
  });

  it.each(["", "15", "0s", "0", "s", "1.5s", "30s1m", "15 s", "-15s", "15S", "1m1m"])(
    "refuses %j: not a duration above zero",
    (text) => {
      expect(durationSeconds(text)).toBeUndefined();
    },
  );
});
