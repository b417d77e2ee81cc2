/** The floors by the hour read from the day before's minutes (`hourlyFloors`). */
import { describe, expect, it } from "vitest";
import { hourlyFloors, type DemandMinute } from "../../../src/core/calibrate/hourly-floors.js";

/** A quiet day but one minute of `tokensPerSecond` starting at `startSecond` (minutes end at `endSeconds`). */
function dayWith(startSecond: number, tokensPerSecond: number, dayStartSeconds = 0): DemandMinute[] {
  return Array.from({ length: 1440 }, (_, m) => ({
    endSeconds: dayStartSeconds + (m + 1) * 60,
    tokensPerSecond: m * 60 === startSecond ? tokensPerSecond : 0,
  }));
}

describe("hourlyFloors", () => {
  it("floors each hour at the busiest minute within it and half an hour either side, at least 1", () => {
    // 1,000 tok/s in 14:00–14:01 at 300 tok/s per replica: 4 replicas for hours 13 and 14 only.
    const floors = hourlyFloors(dayWith(14 * 3600, 1000), 300, 8);
    expect(floors).toHaveLength(24);
    expect(floors.map((f, h) => [h, f]).filter(([, f]) => f !== 1)).toEqual([
      [13, 4],
      [14, 4],
    ]);
  });

  it("reads the minute at 13:29 for hour 14's margin no more, and 13:30 yes", () => {
    expect(hourlyFloors(dayWith(13 * 3600 + 29 * 60, 1000), 300, 8)[14]).toBe(1);
    expect(hourlyFloors(dayWith(13 * 3600 + 30 * 60, 1000), 300, 8)[14]).toBe(4);
  });

  it("reads Unix seconds by their UTC hour", () => {
    const dayStart = Date.parse("2026-12-04T00:00:00Z") / 1000;
    expect(hourlyFloors(dayWith(14 * 3600, 1000, dayStart), 300, 8)[14]).toBe(4);
  });

  it("never exceeds maxReplicas and is 1 in hours with nothing read", () => {
    expect(hourlyFloors(dayWith(14 * 3600, 1000), 300, 3)[14]).toBe(3);
    expect(hourlyFloors([], 300, 3)).toEqual(new Array(24).fill(1));
  });

  it("refuses a target or a cap that is not a count, naming it", () => {
    expect(() => hourlyFloors([], 0, 4)).toThrow(/targetTokensPerSecondPerReplica: 0 /);
    expect(() => hourlyFloors([], 300, 0.5)).toThrow(/maxReplicas: 0.5 /);
  });
});
