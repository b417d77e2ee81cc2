import { describe, expect, it } from "vitest";
import {
  compactHistory,
  compactionBucketSeconds,
  continuousHistory,
  historyGapSeconds,
  historyHorizonSeconds,
  historySpans,
  maxHistorySamples,
  provenLastPassMs,
  recordHistory,
  scaleDownStep,
  scaleUpStep,
  stabilize,
  type HistorySample,
} from "../../../src/core/planner/pacing.js";
import { specOf, t0 } from "./fixtures.js";

const up = (scaleUp: object) =>
  specOf({ roles: [{ name: "s", maxReplicas: 100 }], behavior: { scaleUp } }).behavior.scaleUp;
const down = (scaleDown: object) =>
  specOf({ roles: [{ name: "s", maxReplicas: 100 }], behavior: { scaleDown } }).behavior.scaleDown;

describe("scaleUpStep", () => {
  it.each([
    { why: "defaults: max(4, 100% of 2) = 4", behavior: {}, current: 2, want: 4 },
    { why: "defaults: max(4, 100% of 10) = 10", behavior: {}, current: 10, want: 10 },
    {
      why: "zero stores the defaults, it does not disable",
      behavior: { maxStepReplicas: 0, maxStepPercent: 0 },
      current: 10,
      want: 10,
    },
    {
      why: "percent rounds up: 15% of 10 = 1.5 -> 2, but 1 replica floor wins? max(1, 2) = 2",
      behavior: { maxStepReplicas: 1, maxStepPercent: 15 },
      current: 10,
      want: 2,
    },
    { why: "Pods policy alone", behavior: { stepPolicy: { type: "Pods", value: 2 } }, current: 10, want: 2 },
    {
      why: "Percent policy alone, rounded up",
      behavior: { stepPolicy: { type: "Percent", value: 25 } },
      current: 9,
      want: 3,
    },
    { why: "a zero policy forbids growth", behavior: { stepPolicy: { type: "Pods", value: 0 } }, current: 9, want: 0 },
  ])("$why", ({ behavior, current, want }) => {
    expect(scaleUpStep(up(behavior), current)).toEqual({ value: want, reason: "ScaleUpLimit" });
  });
});

describe("scaleDownStep", () => {
  it.each([
    { why: "one replica per pass by default", behavior: {}, current: 10, want: 1 },
    { why: "Pods policy", behavior: { stepPolicy: { type: "Pods", value: 3 } }, current: 10, want: 3 },
    { why: "Percent policy rounds up", behavior: { stepPolicy: { type: "Percent", value: 10 } }, current: 11, want: 2 },
    { why: "zero forbids shrinking", behavior: { stepPolicy: { type: "Percent", value: 0 } }, current: 11, want: 0 },
  ])("$why", ({ behavior, current, want }) => {
    expect(scaleDownStep(down(behavior), current)).toEqual({ value: want, reason: "ScaleDownLimit" });
  });
});

const h = (pairs: [number, number][]): HistorySample[] =>
  pairs.map(([s, r]) => ({ timestampMs: t0 + s * 1000, replicas: r }));

describe("stabilize", () => {
  const windows = { scaleUpSeconds: 60, scaleDownSeconds: 300 };
  it.each([
    {
      why: "growth waits until history spans the up window",
      history: h([[0, 8]]),
      now: 30,
      current: 2,
      wanted: 8,
      want: { value: 2, reason: "ScaleUpStabilization" },
    },
    {
      why: "then grows to the lowest recommendation in the window",
      history: h([
        [0, 8],
        [30, 5],
        [60, 8],
      ]),
      now: 60,
      current: 2,
      wanted: 8,
      want: { value: 5, reason: "ScaleUpStabilization" },
    },
    {
      why: "a sustained rise grows fully",
      history: h([
        [0, 8],
        [30, 9],
        [60, 8],
      ]),
      now: 60,
      current: 2,
      wanted: 8,
      want: { value: 8, reason: "" },
    },
    {
      why: "shrinking waits until history spans the down window",
      history: h([
        [0, 2],
        [60, 2],
      ]),
      now: 60,
      current: 6,
      wanted: 2,
      want: { value: 6, reason: "ScaleDownStabilization" },
    },
    {
      why: "then the highest recommendation in the window is the floor",
      history: h([
        [0, 2],
        [100, 5],
        [300, 2],
      ]),
      now: 300,
      current: 6,
      wanted: 2,
      want: { value: 5, reason: "ScaleDownStabilization" },
    },
    {
      why: "old peaks leave the window",
      history: h([
        [0, 9],
        [10, 2],
        [310, 2],
      ]),
      now: 310,
      current: 6,
      wanted: 2,
      want: { value: 2, reason: "" },
    },
  ])("$why", ({ history, now, current, wanted, want }) => {
    expect(stabilize(history, t0 + now * 1000, current, wanted, windows)).toEqual(want);
  });

  it("a zero up window grows at once", () => {
    expect(stabilize(h([[0, 8]]), t0, 2, 8, { scaleUpSeconds: 0, scaleDownSeconds: 300 }).value).toBe(8);
  });
});

describe("history", () => {
  it("keeps one sample at or before the horizon and drops older ones", () => {
    let history: HistorySample[] = [];
    for (let s = 0; s <= 600; s += 15)
      history = recordHistory(history, { timestampMs: t0 + s * 1000, replicas: 1 }, 300);
    expect(history[0]?.timestampMs).toBe(t0 + 300 * 1000);
    expect(historySpans(history, t0 + 600 * 1000, 300)).toBe(true);
  });

  it("stays within 256 samples at 5 s over an 1800 s window and still sees the extremes", () => {
    let history: HistorySample[] = [];
    const horizon = 1800;
    for (let s = 0; s <= 4000; s += 5) {
      // One spike to 50 at 3000 s and one dip to 1 at 3500 s among 10s.
      const replicas = s === 3000 ? 50 : s === 3500 ? 1 : 10;
      history = recordHistory(history, { timestampMs: t0 + s * 1000, replicas }, horizon);
      expect(history.length).toBeLessThanOrEqual(maxHistorySamples);
    }
    const now = t0 + 4000 * 1000;
    expect(historySpans(history, now, horizon)).toBe(true);
    // The spike is inside the 1800 s down window: the floor holds at 50.
    expect(stabilize(history, now, 60, 10, { scaleUpSeconds: 600, scaleDownSeconds: 1800 })).toEqual({
      value: 50,
      reason: "ScaleDownStabilization",
    });
    // The dip is inside the 600 s up window: growth stops at 1 -> stays at current.
    expect(stabilize(history, now, 5, 10, { scaleUpSeconds: 600, scaleDownSeconds: 1800 }).value).toBe(5);
  });

  it("compaction is idempotent and keeps the oldest sample", () => {
    const history = Array.from({ length: 361 }, (_, i) => ({ timestampMs: t0 + i * 5000, replicas: i % 7 }));
    const once = compactHistory(history, 1800);
    expect(once[0]).toEqual(history[0]);
    expect(compactHistory(once, 1800)).toEqual(once);
  });

  it("drops samples from the future", () => {
    const history = recordHistory(h([[100, 9]]), { timestampMs: t0, replicas: 1 }, 300);
    expect(history).toEqual(h([[0, 1]]));
  });
});

describe("compaction buckets", () => {
  it("are a 120th of the horizon, rounded up, at least one second", () => {
    expect([0, 120, 1200, 1201, 1800].map(compactionBucketSeconds)).toEqual([1, 1, 10, 11, 15]);
  });

  it("keep the oldest sample, then each epoch-aligned bucket's lowest and highest at its latest time and stamp", () => {
    // A 1200 s horizon gives 10 s buckets; base is a multiple of 10 s since the epoch.
    const base = 1_700_000_000_000;
    const history: HistorySample[] = [
      { timestampMs: base - 5_000, replicas: 7, timestamp: "oldest" },
      { timestampMs: base + 1_000, replicas: 4, timestamp: "a" },
      { timestampMs: base + 4_000, replicas: 2 },
      { timestampMs: base + 9_000, replicas: 6, timestamp: "c" },
      { timestampMs: base + 12_000, replicas: 3 },
      { timestampMs: base + 20_000, replicas: 5, timestamp: "e" },
      { timestampMs: base + 21_000, replicas: 5 },
    ];
    expect(compactHistory(history, 1200)).toEqual([
      { timestampMs: base - 5_000, replicas: 7, timestamp: "oldest" },
      { timestampMs: base + 9_000, replicas: 2, timestamp: "c" },
      { timestampMs: base + 9_000, replicas: 6, timestamp: "c" },
      { timestampMs: base + 12_000, replicas: 3 },
      { timestampMs: base + 21_000, replicas: 5 },
    ]);
  });
});

describe("when compaction runs", () => {
  // 1 s apart under a 1200 s horizon (10 s buckets), alternating values: compaction would change them.
  const samples = (n: number): HistorySample[] =>
    Array.from({ length: n }, (_, i) => ({ timestampMs: t0 + i * 1000, replicas: 1 + (i % 2) }));

  it("a history of exactly 256 samples is kept as it is; one more is compacted", () => {
    const full = samples(maxHistorySamples);
    const last = full.at(-1) as HistorySample;
    expect(recordHistory(full.slice(0, -1), last, 1200)).toEqual(full);
    const next = { timestampMs: last.timestampMs + 1000, replicas: 1 };
    expect(recordHistory(full, next, 1200).length).toBeLessThan(maxHistorySamples);
  });

  it("a compacted pass of exactly 256 entries is not compacted again", () => {
    // 1 s buckets (120 s horizon), one sample each: the first pass keeps all 256.
    const history = samples(maxHistorySamples);
    expect(compactHistory(history, 120)).toEqual(history);
  });

  it("a sample stamped like the newest one is kept beside it", () => {
    const history = recordHistory(h([[0, 9]]), { timestampMs: t0, replicas: 1 }, 300);
    expect(history).toEqual(
      h([
        [0, 9],
        [0, 1],
      ]),
    );
  });
});

describe("compaction backstop", () => {
  it("widens buckets by doubling: 600 samples 1 s apart over a 120 s horizon land in 4 s buckets", () => {
    const base = 1_700_000_000_000; // a multiple of 4 s since the epoch
    const history = Array.from({ length: 600 }, (_, i) => ({ timestampMs: base + i * 1000, replicas: 3 }));
    const out = compactHistory(history, 120);
    expect(out[0]).toEqual(history[0]);
    // Each later entry is the last second of its 4 s bucket (or the newest sample).
    expect(out.slice(1).map((s) => (s.timestampMs - base) % 4000)).toEqual(Array<number>(150).fill(3000));
  });

  it("an untrimmed history longer than the horizon still fits and keeps its oldest sample", () => {
    const history = Array.from({ length: 2000 }, (_, i) => ({ timestampMs: t0 + i * 5000, replicas: i % 5 }));
    const out = compactHistory(history, 300);
    expect(out.length).toBeLessThanOrEqual(maxHistorySamples);
    expect(out[0]).toEqual(history[0]);
    expect(Math.max(...out.map((s) => s.replicas))).toBe(4);
    expect(Math.min(...out.map((s) => s.replicas))).toBe(0);
  });
});

describe("the gap rule", () => {
  const samples: HistorySample[] = [
    { timestampMs: t0 - 300_000, replicas: 4 },
    { timestampMs: t0 - 15_000, replicas: 3 },
  ];
  it.each([
    { interval: 5, want: 60 },
    { interval: 15, want: 60 },
    { interval: 20, want: 60 },
    { interval: 21, want: 63 },
    { interval: 60, want: 180 },
  ])("a gap is longer than max(3 x $interval s, 60 s) = $want s", ({ interval, want }) => {
    expect(historyGapSeconds(interval)).toBe(want);
  });

  it.each([
    { why: "a pause of exactly the gap keeps the history", lastPassMs: t0 - 60_000, kept: 2 },
    { why: "a longer pause drops it", lastPassMs: t0 - 60_001, kept: 0 },
    { why: "a status that never recorded a pass drops it", lastPassMs: undefined, kept: 0 },
    { why: "a pass stamped after now (clock skew) is no gap", lastPassMs: t0 + 5_000, kept: 2 },
  ])("$why", ({ lastPassMs, kept }) => {
    expect(continuousHistory(samples, lastPassMs, t0, 60)).toHaveLength(kept);
  });
});

describe("the last pass a status proves", () => {
  const at = (s: number, replicas = 2): HistorySample => ({ timestampMs: t0 + s * 1000, replicas });
  it("lastPassTime wins where present, even over a newer sample", () => {
    expect(provenLastPassMs(t0 - 120_000, [[at(-15)]], t0)).toBe(t0 - 120_000);
  });

  it.each([
    { why: "the newest sample of one role", histories: [[at(-300), at(-30), at(-15)]], want: t0 - 15_000 },
    {
      why: "the newest sample of any role",
      histories: [[at(-300), at(-45)], [at(-200), at(-15)], []],
      want: t0 - 15_000,
    },
    { why: "whatever the order of the samples", histories: [[at(-15), at(-300)]], want: t0 - 15_000 },
    { why: "a sample stamped exactly now", histories: [[at(-300), at(0)]], want: t0 },
    { why: "a sample stamped after now proves nothing", histories: [[at(-90), at(5)]], want: t0 - 90_000 },
    { why: "only samples after now: no pass proven", histories: [[at(5)]], want: undefined },
    { why: "no history at all: no pass proven", histories: [[], []], want: undefined },
    { why: "no role at all: no pass proven", histories: [], want: undefined },
  ])("without lastPassTime: $why", ({ histories, want }) => {
    expect(provenLastPassMs(undefined, histories, t0)).toBe(want);
  });

  it("with the gap rule: a newest sample older than the gap drops the history, a recent one keeps it", () => {
    const stale = [at(-400, 4), at(-61, 4)];
    expect(continuousHistory(stale, provenLastPassMs(undefined, [stale], t0), t0, 60)).toEqual([]);
    const recent = [at(-400, 4), at(-60, 4)];
    expect(continuousHistory(recent, provenLastPassMs(undefined, [recent], t0), t0, 60)).toEqual(recent);
  });
});

describe("windows: edges the stabilization relies on", () => {
  const windows = { scaleUpSeconds: 0, scaleDownSeconds: 300 };
  it("the horizon is the longer window", () => {
    const spec = specOf({
      roles: [{ name: "s", maxReplicas: 10 }],
      behavior: { scaleUp: { stabilizationWindowSeconds: 600 }, scaleDown: { stabilizationWindowSeconds: 300 } },
    });
    expect(historyHorizonSeconds(spec)).toBe(600);
  });

  it("a zero scale-up window grows at once, without history", () => {
    expect(stabilize([], t0, 2, 6, windows)).toEqual({ value: 6, reason: "" });
    expect(stabilize([{ timestampMs: t0, replicas: 6 }], t0, 2, 6, windows)).toEqual({ value: 6, reason: "" });
  });

  it("an unchanged recommendation is no move and names no window", () => {
    expect(stabilize([], t0, 4, 4, windows)).toEqual({ value: 4, reason: "" });
    // Even before the history spans a scale-up window.
    expect(stabilize([], t0, 4, 4, { scaleUpSeconds: 60, scaleDownSeconds: 300 })).toEqual({ value: 4, reason: "" });
  });

  it("an empty history spans no window, not even a zero one", () => {
    expect(historySpans([], t0, 0)).toBe(false);
  });

  it("a sample stamped exactly now counts in the window", () => {
    const history: HistorySample[] = [
      { timestampMs: t0 - 400_000, replicas: 2 },
      { timestampMs: t0, replicas: 9 },
      { timestampMs: t0, replicas: 2 },
    ];
    expect(stabilize(history, t0, 10, 2, windows)).toEqual({ value: 9, reason: "ScaleDownStabilization" });
  });

  it("a sample stamped after now does not raise the scale-down floor", () => {
    const history: HistorySample[] = [
      { timestampMs: t0 - 400_000, replicas: 2 },
      { timestampMs: t0, replicas: 2 },
      { timestampMs: t0 + 60_000, replicas: 9 },
    ];
    expect(stabilize(history, t0, 4, 2, windows)).toEqual({ value: 2, reason: "" });
  });

  it("a sample exactly at the window's start still counts", () => {
    const history: HistorySample[] = [
      { timestampMs: t0 - 300_000, replicas: 3 },
      { timestampMs: t0, replicas: 2 },
    ];
    expect(stabilize(history, t0, 4, 2, windows)).toEqual({ value: 3, reason: "ScaleDownStabilization" });
  });
});
