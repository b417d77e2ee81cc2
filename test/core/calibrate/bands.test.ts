/** The banding rule of `mds-scaler calibrate` on constructed minutes whose answer is known. */
import { describe, expect, it } from "vitest";
import {
  bandWidth,
  brokenTargets,
  calibrateRole,
  minMinutesPerBand,
  roundDownFigure,
} from "../../../src/core/calibrate/bands.js";
import { minuteOf, type CalibrationMinute } from "../../../src/core/calibrate/minute.js";
import type { RoleObservation } from "../../../src/core/signals/types.js";

const targets = { ttftMilliseconds: 500, itlMilliseconds: 50 };

/** `n` minutes at `tokens`, `tokens` + 10, ... per replica, TTFT `ttft` ms, ITL 20 ms. */
function minutes(n: number, tokens: number, ttft: number, extra: Partial<CalibrationMinute> = {}): CalibrationMinute[] {
  return Array.from({ length: n }, (_, i) => ({
    endSeconds: 60 * (i + 1),
    readyReplicas: 2,
    tokensPerSecondPerReplica: tokens + 10 * i,
    ttftP95Milliseconds: ttft,
    itlP95Milliseconds: 20,
    ...extra,
  }));
}

describe("calibrateRole", () => {
  it("takes the median of the highest band that held below the first band that broke", () => {
    const r = calibrateRole(
      "Server",
      [...minutes(10, 1000, 250), ...minutes(10, 2000, 400), ...minutes(10, 3000, 2500), ...minutes(10, 4000, 250)],
      targets,
      "literal",
    );
    expect(r.bandWidthTokensPerSecond).toBe(500);
    expect(r.bands.map((b) => [b.fromTokensPerSecond, b.verdict])).toEqual([
      [1000, "held"],
      [2000, "held"],
      [3000, "broke"],
      [4000, "held"],
    ]);
    // The band above a broken one does not count, however well it held.
    expect(r.answer).toMatchObject({
      kind: "calibrated",
      tokensPerSecondPerReplica: 2040,
      band: 1,
      // Where the targets broke: the lower edge of the first band that broke.
      capacityTokensPerSecondPerReplica: 3000,
    });
    expect(r.queueTime).toBe("absent");
    expect(r.bands[2]?.broken).toEqual({ ttft: 10 });
    // ...but the answer says it held there.
    expect(r.answer.why).toContain("held again above it in 4000–4500 tok/s per replica (10 of 10 minutes)");
  });

  it("breaks a band where one minute in fewer than 100 broke (99 % means every minute)", () => {
    const r = calibrateRole(
      "Prefill",
      [...minutes(10, 1000, 250), ...minutes(9, 2000, 250), ...minutes(1, 2050, 900)],
      targets,
      "literal",
    );
    expect(r.bands[1]).toMatchObject({ minutes: 10, minutesWithinTargets: 9, verdict: "broke" });
    expect(r.answer).toMatchObject({ kind: "calibrated", tokensPerSecondPerReplica: 1040 });
  });

  it("on queueing, breaks a minute on TTFT only when waiting is a material part of it", () => {
    // 1,000 tok/s: TTFT above target, waiting 0 (its prompt's own prefill); 2,000: waiting 300 ms, above half of 500.
    const m = [
      ...minutes(6, 1000, 900, { queueP95Milliseconds: 0 }),
      ...minutes(6, 2000, 950, { queueP95Milliseconds: 300 }),
    ];
    const queueing = calibrateRole("Server", m, targets, "queueing");
    expect(queueing.queueTime).toBe("read");
    expect(queueing.reading).toBe("queueing");
    expect(queueing.bands.map((b) => b.verdict)).toEqual(["held", "broke"]);
    expect(queueing.bands[1]?.broken).toEqual({ ttft: 6 });
    expect(queueing.answer).toMatchObject({ kind: "calibrated", tokensPerSecondPerReplica: 1020 });
    // Read literally the same minutes never held.
    expect(calibrateRole("Server", m, targets, "literal").answer.kind).toBe("targets never held");
  });

  it("on queueing, reads TTFT literally in minutes without queue time", () => {
    const m = [
      ...minutes(6, 1000, 300),
      ...minutes(6, 2000, 900),
      ...minutes(6, 3000, 900, { queueP95Milliseconds: 0 }),
    ];
    const r = calibrateRole("Server", m, targets, "queueing");
    expect(r.bands.map((b) => b.verdict)).toEqual(["held", "broke", "held"]);
    expect(r.answer).toMatchObject({ kind: "calibrated", tokensPerSecondPerReplica: 1020 });
  });

  it("judges Decode roles on ITL alone", () => {
    const decode = [...minutes(5, 1000, 9999), ...minutes(5, 2000, 9999, { itlP95Milliseconds: 80 })].map(
      ({ ttftP95Milliseconds: _t, ...m }) => m,
    );
    const r = calibrateRole("Decode", decode, targets, "literal");
    expect(r.queueTime).toBe("not judged");
    expect(r.bands.map((b) => b.verdict)).toEqual(["held", "broke"]);
    expect(r.answer).toMatchObject({ kind: "calibrated", tokensPerSecondPerReplica: 1020 });
  });

  it("says not enough evidence, with the lower bound, when no band broke", () => {
    const r = calibrateRole("Server", [...minutes(10, 1000, 250), ...minutes(10, 2000, 250)], targets, "literal");
    expect(r.answer.kind).toBe("not enough evidence");
    expect(r.answer).toMatchObject({ heldUpToTokensPerSecondPerReplica: 2040 });
    expect(r.answer).not.toHaveProperty("tokensPerSecondPerReplica");
  });

  it("says not enough evidence with too few minutes, and when no band holds enough of them", () => {
    const few = calibrateRole("Server", minutes(minMinutesPerBand - 1, 1000, 250), targets, "literal");
    expect(few.answer).toMatchObject({ kind: "not enough evidence" });
    expect(few.answer.why).toContain(`${minMinutesPerBand - 1} minute(s)`);
    const spread = [100, 200, 300, 400, 500, 600, 700, 800, 900, 1000].flatMap((t) => minutes(2, t, 250));
    const thin = calibrateRole("Server", spread, targets, "literal");
    expect(thin.bands.every((b) => b.verdict === "too few minutes")).toBe(true);
    expect(thin.answer).toMatchObject({ kind: "not enough evidence" });
  });

  it("says the targets never held when the lowest judged band broke", () => {
    const r = calibrateRole("Server", [...minutes(2, 500, 250), ...minutes(8, 1000, 900)], targets, "literal");
    expect(r.answer.kind).toBe("targets never held");
    expect(r.answer.why).toContain("ttft above target in 8 minute(s)");
  });
});

describe("the parts of the rule", () => {
  it("picks round band widths for about ten bands", () => {
    expect(bandWidth(3000)).toBe(500);
    expect(bandWidth(9400)).toBe(1000);
    expect(bandWidth(1800)).toBe(200);
    expect(bandWidth(2400)).toBe(250);
    expect(bandWidth(10_000)).toBe(1000);
  });

  it("rounds a figure down to three significant figures", () => {
    expect(roundDownFigure(4159.9)).toBe(4150);
    expect(roundDownFigure(987.6)).toBe(987);
    expect(roundDownFigure(12)).toBe(12);
  });

  it("names the targets a minute broke", () => {
    const m = {
      endSeconds: 60,
      readyReplicas: 1,
      tokensPerSecondPerReplica: 1,
      ttftP95Milliseconds: 600,
      itlP95Milliseconds: 60,
      queueP95Milliseconds: 250,
    };
    expect(brokenTargets("Server", m, targets, "literal")).toEqual(["ttft", "itl"]);
    // 250 ms of waiting is not above half the 500 ms target: the TTFT breach is compute.
    expect(brokenTargets("Server", m, targets, "queueing")).toEqual(["itl"]);
    expect(brokenTargets("Server", { ...m, queueP95Milliseconds: 251 }, targets, "queueing")).toEqual(["ttft", "itl"]);
    expect(brokenTargets("Decode", m, targets, "literal")).toEqual(["itl"]);
    expect(brokenTargets("Prefill", { ...m, ttftP95Milliseconds: 500 }, targets, "literal")).toEqual([]);
  });
});

describe("minuteOf", () => {
  const observation: RoleObservation = {
    readyReplicas: 2,
    sampledReplicas: 2,
    signalState: "Fresh",
    promptTokensPerSecond: 3000,
    generationTokensPerSecond: 1000,
    ttftMilliseconds: 250,
    itlMilliseconds: 25,
  };
  const withQueue: RoleObservation = {
    ...observation,
    queueTimeMilliseconds: 500,
    queueTimeBracket: { lowerMilliseconds: 300, upperMilliseconds: 500, estimateMilliseconds: 400 },
    queueTimeExport: { pods: 2, of: 2 },
  };

  it("reads the kind's demand per ready replica and its judged latencies", () => {
    expect(minuteOf({ kind: "Server", observation, endSeconds: 60 })).toEqual({
      kind: "minute",
      minute: {
        endSeconds: 60,
        readyReplicas: 2,
        tokensPerSecondPerReplica: 2000,
        ttftP95Milliseconds: 250,
        itlP95Milliseconds: 25,
      },
    });
    expect(minuteOf({ kind: "Prefill", observation, endSeconds: 60 })).toMatchObject({
      minute: { tokensPerSecondPerReplica: 1500, ttftP95Milliseconds: 250 },
    });
    const decode = minuteOf({ kind: "Decode", observation: withQueue, endSeconds: 60 });
    expect(decode).toEqual({
      kind: "minute",
      minute: { endSeconds: 60, readyReplicas: 2, tokensPerSecondPerReplica: 500, itlP95Milliseconds: 25 },
    });
  });

  it("reads each p95 inside its bucket, as the latency guard compares it", () => {
    const bracketed: RoleObservation = {
      ...observation,
      ttftMilliseconds: 2500,
      ttftBracket: { lowerMilliseconds: 1000, upperMilliseconds: 2500, estimateMilliseconds: 1300 },
      itlBracket: { lowerMilliseconds: 20, upperMilliseconds: 25, estimateMilliseconds: 22 },
    };
    expect(minuteOf({ kind: "Server", observation: bracketed, endSeconds: 60 })).toMatchObject({
      minute: { ttftP95Milliseconds: 1300, itlP95Milliseconds: 22 },
    });
  });

  it("carries queue time only when every sampled pod exports it; a p95 in a bucket from zero is no waiting", () => {
    expect(minuteOf({ kind: "Server", observation: withQueue, endSeconds: 60 })).toMatchObject({
      minute: { queueP95Milliseconds: 400 },
    });
    const zeroBucket = {
      ...withQueue,
      queueTimeBracket: { lowerMilliseconds: 0, upperMilliseconds: 300, estimateMilliseconds: 285 },
    };
    expect(minuteOf({ kind: "Server", observation: zeroBucket, endSeconds: 60 })).toMatchObject({
      minute: { queueP95Milliseconds: 0 },
    });
    // Partial is unknown: one of two pods exports queue time, so the minute carries none.
    const partial = { ...withQueue, queueTimeExport: { pods: 1, of: 2 } };
    const reading = minuteOf({ kind: "Server", observation: partial, endSeconds: 60 });
    expect(reading.kind).toBe("minute");
    expect(reading).not.toHaveProperty("minute.queueP95Milliseconds");
  });

  it("skips a minute that is not evidence, with its reason", () => {
    const skipped = (o: { [K in keyof RoleObservation]?: RoleObservation[K] | undefined }): unknown =>
      minuteOf({ kind: "Server", observation: { ...observation, ...o } as RoleObservation, endSeconds: 60 });
    expect(skipped({ readyReplicas: 0, sampledReplicas: 0 })).toEqual({ kind: "skipped", reason: "no ready replica" });
    expect(skipped({ sampledReplicas: 1 })).toEqual({ kind: "skipped", reason: "partial coverage" });
    expect(skipped({ generationTokensPerSecond: undefined })).toEqual({
      kind: "skipped",
      reason: "no throughput figure",
    });
    expect(skipped({ promptTokensPerSecond: 0, generationTokensPerSecond: 0 })).toEqual({
      kind: "skipped",
      reason: "no traffic",
    });
    expect(skipped({ itlMilliseconds: undefined })).toEqual({ kind: "skipped", reason: "no latency observed" });
  });
});
