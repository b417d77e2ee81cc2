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
    );
    expect(r.bandWidthTokensPerSecond).toBe(500);
    expect(r.bands.map((b) => [b.fromTokensPerSecond, b.verdict])).toEqual([
      [1000, "held"],
      [2000, "held"],
      [3000, "broke"],
      [4000, "held"],
    ]);
    // The band above a broken one does not count, however well it held.
    expect(r.answer).toMatchObject({ kind: "calibrated", tokensPerSecondPerReplica: 2040, band: 1 });
    expect(r.queueTime).toBe("absent");
    expect(r.bands[2]?.broken).toEqual({ ttft: 10 });
  });

  it("breaks a band where one minute in fewer than 100 broke (99 % means every minute)", () => {
    const r = calibrateRole(
      "Prefill",
      [...minutes(10, 1000, 250), ...minutes(9, 2000, 250), ...minutes(1, 2050, 900)],
      targets,
    );
    expect(r.bands[1]).toMatchObject({ minutes: 10, minutesWithinTargets: 9, verdict: "broke" });
    expect(r.answer).toMatchObject({ kind: "calibrated", tokensPerSecondPerReplica: 1040 });
  });

  it("judges queue time against the TTFT target where a pod exported it", () => {
    const r = calibrateRole(
      "Server",
      [...minutes(6, 1000, 300, { queueP95Milliseconds: 10 }), ...minutes(6, 2000, 450, { queueP95Milliseconds: 600 })],
      targets,
    );
    expect(r.queueTime).toBe("read");
    expect(r.bands[1]?.broken).toEqual({ queue: 6 });
    expect(r.answer).toMatchObject({ kind: "calibrated", tokensPerSecondPerReplica: 1020 });
  });

  it("judges Decode roles on ITL alone", () => {
    const decode = [...minutes(5, 1000, 9999), ...minutes(5, 2000, 9999, { itlP95Milliseconds: 80 })].map(
      ({ ttftP95Milliseconds: _t, ...m }) => m,
    );
    const r = calibrateRole("Decode", decode, targets);
    expect(r.queueTime).toBe("not judged");
    expect(r.bands.map((b) => b.verdict)).toEqual(["held", "broke"]);
    expect(r.answer).toMatchObject({ kind: "calibrated", tokensPerSecondPerReplica: 1020 });
  });

  it("says not enough evidence, with the lower bound, when no band broke", () => {
    const r = calibrateRole("Server", [...minutes(10, 1000, 250), ...minutes(10, 2000, 250)], targets);
    expect(r.answer.kind).toBe("not enough evidence");
    expect(r.answer).toMatchObject({ heldUpToTokensPerSecondPerReplica: 2040 });
    expect(r.answer).not.toHaveProperty("tokensPerSecondPerReplica");
  });

  it("says not enough evidence with too few minutes, and when no band holds enough of them", () => {
    const few = calibrateRole("Server", minutes(minMinutesPerBand - 1, 1000, 250), targets);
    expect(few.answer).toMatchObject({ kind: "not enough evidence" });
    expect(few.answer.why).toContain(`${minMinutesPerBand - 1} minute(s)`);
    const spread = [100, 200, 300, 400, 500, 600, 700, 800, 900, 1000].flatMap((t) => minutes(2, t, 250));
    const thin = calibrateRole("Server", spread, targets);
    expect(thin.bands.every((b) => b.verdict === "too few minutes")).toBe(true);
    expect(thin.answer).toMatchObject({ kind: "not enough evidence" });
  });

  it("says the targets never held when the lowest judged band broke", () => {
    const r = calibrateRole("Server", [...minutes(2, 500, 250), ...minutes(8, 1000, 900)], targets);
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
      queueP95Milliseconds: 550,
    };
    expect(brokenTargets("Server", m, targets)).toEqual(["ttft", "queue", "itl"]);
    expect(brokenTargets("Decode", m, targets)).toEqual(["itl"]);
    expect(brokenTargets("Prefill", { ...m, ttftP95Milliseconds: 500, queueP95Milliseconds: 500 }, targets)).toEqual(
      [],
    );
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

  it("reads the kind's demand per ready replica and its judged latencies", () => {
    expect(minuteOf({ kind: "Server", observation, endSeconds: 60, queueP95Milliseconds: 5 })).toEqual({
      kind: "minute",
      minute: {
        endSeconds: 60,
        readyReplicas: 2,
        tokensPerSecondPerReplica: 2000,
        ttftP95Milliseconds: 250,
        itlP95Milliseconds: 25,
        queueP95Milliseconds: 5,
      },
    });
    expect(minuteOf({ kind: "Prefill", observation, endSeconds: 60 })).toMatchObject({
      minute: { tokensPerSecondPerReplica: 1500, ttftP95Milliseconds: 250 },
    });
    const decode = minuteOf({ kind: "Decode", observation, endSeconds: 60, queueP95Milliseconds: 5 });
    expect(decode).toEqual({
      kind: "minute",
      minute: { endSeconds: 60, readyReplicas: 2, tokensPerSecondPerReplica: 500, itlP95Milliseconds: 25 },
    });
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
