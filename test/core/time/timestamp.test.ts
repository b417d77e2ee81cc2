import { describe, expect, it } from "vitest";
import { formatTimestamp, parseOptionalTimestampMs, parseTimestampMs } from "../../../src/core/time/timestamp.js";

describe("parseTimestampMs", () => {
  it.each([
    "2026-01-01T00:00:00.000Z",
    "2026-12-31T23:59:59.999Z",
    "2026-01-01T00:00:00Z",
    "2026-12-31T23:59:59Z",
    "2026-11-31T00:00:00Z",
    "2026-11-29T12:00:00.5Z",
    "2026-11-29T12:00:00.000z",
    "2026-11-29 12:00:00.000Z",
    "2026-11-29T13:00:00+01:00",
  ])("reads %s as Date.parse does", (text) => {
    expect(parseTimestampMs(text)).toBe(Date.parse(text));
  });

  it.each([
    ["month 0", "2026-00-10T00:00:00Z"],
    ["month 13", "2026-13-01T00:00:00Z"],
    ["day 0", "2026-11-00T00:00:00.000Z"],
    ["day 32", "2026-11-32T00:00:00.000Z"],
    ["hour 24", "2026-11-29T24:00:00Z"],
    ["hour 24 with milliseconds", "2026-11-29T24:00:00.000Z"],
    ["a character below 0 in the seconds", "2026-11-29T12:00:5/.000Z"],
    ["a character below 0 in the milliseconds", "2026-11-29T12:00:00.00/Z"],
    ["text after the zone", "2026-11-29T12:00:00.000ZZ"],
    ["text after the short form's zone", "2026-11-29T12:00:00Zjunk"],
    ["one character after the short form's zone", "2026-11-29T12:00:00Zx"],
    ["minute 60", "2026-11-29T12:60:00Z"],
    ["second 60", "2026-11-29T12:00:60Z"],
    ["a letter in the seconds", "2026-11-29T12:00:0a.000Z"],
    ["a letter in the milliseconds", "2026-11-29T12:00:00.00aZ"],
    ["a letter in the year", "2o26-11-29T12:00:00Z"],
    ["another date separator", "2026/11-29T12:00:00.000Z"],
    ["another second date separator", "2026-11/29T12:00:00.000Z"],
    ["another time separator", "2026-11-29x12:00:00.000Z"],
    ["dots for colons", "2026-11-29T12.00:00.000Z"],
    ["a dot for the second colon", "2026-11-29T12:00.00.000Z"],
    ["a comma before the fraction", "2026-11-29T12:00:00,000Z"],
    ["a sign for the zone", "2026-11-29T12:00:00.000+"],
    ["a sign for the short form's zone", "2026-11-29T12:00:00+"],
    ["no time at all", "yesterday"],
  ])("refuses %s", (_why, text) => {
    expect(parseTimestampMs(text)).toBeUndefined();
  });

  it("round-trips what formatTimestamp writes", () => {
    for (const ms of [0, 1_795_953_600_000, 1_798_761_599_999]) {
      expect(parseTimestampMs(formatTimestamp(ms))).toBe(ms);
    }
  });

  it("an absent optional time is undefined", () => {
    expect(parseOptionalTimestampMs(undefined)).toBeUndefined();
    expect(parseOptionalTimestampMs("2026-11-29T12:00:00Z")).toBe(Date.UTC(2026, 10, 29, 12));
  });
});
