/**
 * The latency guard against the engines' default bucket tables: a p95 known
 * only as "in (lower, upper]" is compared by its position inside the bucket,
 * so SGLang's coarse 0.4 → 0.6 s TTFT bucket no longer holds a role whose p95
 * is 410 ms against 500 ms, and vLLM's 0.5 → 0.75 s bucket lets the 1.2 band
 * (hold without growth) apply.
 */
import { describe, expect, it } from "vitest";
import type { RoleKind } from "../../../src/core/api/model-deployment.js";
import { observeRole } from "../../../src/core/signals/observe.js";
import type { HistogramWindow, RoleObservation } from "../../../src/core/signals/types.js";
import {
  sglangItlBucketsSeconds,
  sglangTtftBucketsSeconds,
  vllmItlBucketsSeconds,
  vllmTtftBucketsSeconds,
} from "../../../src/sim/engines/buckets.js";
import { brief, recommendationOf, role, run, spec } from "./fixtures.js";

const nowMs = Date.UTC(2026, 10, 29, 12, 0, 0);

/** `count` latencies spread evenly over [from, to] seconds. */
function spread(count: number, from: number, to: number): number[] {
  return Array.from({ length: count }, (_, i) => from + ((to - from) * (i + 0.5)) / count);
}

/** The histogram an engine with these boundaries exports for these latencies. */
function histogramOf(latencies: readonly number[], bounds: readonly number[]): HistogramWindow {
  const buckets = [...bounds, Infinity].map((upperBound) => ({
    upperBound,
    count: latencies.filter((l) => l <= upperBound).length,
  }));
  return { buckets, count: latencies.length, sum: latencies.reduce((a, b) => a + b, 0) };
}

function trueP95Ms(latencies: readonly number[]): number {
  const sorted = [...latencies].sort((a, b) => a - b);
  return (sorted[Math.ceil(0.95 * sorted.length) - 1] ?? NaN) * 1000;
}

/** One pod, light demand (throughput alone would shrink 3 replicas to 1), the given latency histogram. */
function observed(kind: RoleKind, histogram: HistogramWindow): RoleObservation {
  const field = kind === "Decode" ? "itlSeconds" : "ttftSeconds";
  const rates = { established: true, promptTokensPerSecond: 100, generationTokensPerSecond: 100, [field]: histogram };
  return observeRole({
    kind,
    samples: {
      pods: ["a", "b", "c"].map((name) => ({
        pod: name,
        engine: "sglang" as const,
        lastSampleUnixSeconds: nowMs / 1000,
        runningRequests: 1,
        windows: { stable: rates, panic: rates },
      })),
    },
    readyReplicas: 3,
    nowMs,
    staleAfterSeconds: 60,
    reads: [],
  });
}

function decide(kind: RoleKind, obs: RoleObservation) {
  const s = spec({
    algorithm: {
      type: "TokenThroughput",
      tokenThroughput: {
        prefillTargetTokensPerSecond: "2000",
        decodeTargetTokensPerSecond: "2000",
        ttftTargetMilliseconds: "500",
        itlTargetMilliseconds: "50",
      },
    },
  });
  return brief(recommendationOf(run(s, [role("server", kind, 3, obs)]), "server"));
}

const shrink = { replicas: 1, reason: "TokenThroughput", hold: undefined };
const hold = { replicas: 3, reason: "LatencyGuardHold", hold: "LatencyGuardHold" };
const grow = { replicas: 4, reason: "LatencyGuardScaleUp", hold: "LatencyGuardScaleUp" };

describe("latency guard and bucket resolution (TTFT target 500 ms, ITL target 50 ms)", () => {
  it.each([
    {
      name: "SGLang TTFT p95 ≈ 410 ms in (400, 600]: within target, shrinks (the boundary alone read 600 ms and held)",
      kind: "Prefill" as const,
      bounds: sglangTtftBucketsSeconds,
      latencies: [...spread(940, 0.25, 0.35), ...spread(60, 0.401, 0.45)],
      p95: [405, 415],
      reported: 600,
      want: shrink,
    },
    {
      name: "SGLang TTFT p95 ≈ 560 ms in (400, 600]: above target, holds",
      kind: "Prefill" as const,
      bounds: sglangTtftBucketsSeconds,
      latencies: [...spread(880, 0.25, 0.35), ...spread(120, 0.5, 0.6)],
      p95: [550, 565],
      reported: 600,
      want: hold,
    },
    {
      name: "SGLang TTFT p95 ≈ 700 ms in (600, 800]: wholly above 1.2 × target, grows",
      kind: "Prefill" as const,
      bounds: sglangTtftBucketsSeconds,
      latencies: [...spread(900, 0.25, 0.35), ...spread(100, 0.61, 0.79)],
      p95: [690, 705],
      reported: 800,
      want: grow,
    },
    {
      name: "vLLM TTFT p95 ≈ 580 ms in (500, 750]: inside the 1.2 band, holds without growing (the boundary read 750 ms and grew)",
      kind: "Prefill" as const,
      bounds: vllmTtftBucketsSeconds,
      latencies: [...spread(930, 0.25, 0.35), ...spread(70, 0.51, 0.74)],
      p95: [570, 585],
      reported: 750,
      want: hold,
    },
    {
      name: "vLLM TTFT p95 ≈ 670 ms in (500, 750]: above 1.2 × target, grows",
      kind: "Prefill" as const,
      bounds: vllmTtftBucketsSeconds,
      latencies: [...spread(900, 0.25, 0.35), ...spread(100, 0.6, 0.74)],
      p95: [660, 675],
      reported: 750,
      want: grow,
    },
    {
      name: "vLLM TTFT p95 ≈ 240 ms in (100, 250]: within target, shrinks",
      kind: "Prefill" as const,
      bounds: vllmTtftBucketsSeconds,
      latencies: spread(1000, 0.05, 0.25),
      p95: [235, 245],
      reported: 250,
      want: shrink,
    },
    {
      name: "SGLang ITL p95 ≈ 41 ms in (40, 60]: within target, shrinks (the boundary read 60 ms and held)",
      kind: "Decode" as const,
      bounds: sglangItlBucketsSeconds,
      latencies: [...spread(940, 0.02, 0.035), ...spread(60, 0.0401, 0.045)],
      p95: [40, 42],
      reported: 60,
      want: shrink,
    },
    {
      name: "vLLM ITL p95 ≈ 55 ms in (50, 75]: the bucket is wholly above the target, holds",
      kind: "Decode" as const,
      bounds: vllmItlBucketsSeconds,
      latencies: [...spread(930, 0.02, 0.04), ...spread(70, 0.051, 0.07)],
      p95: [55, 58],
      reported: 75,
      want: hold,
    },
  ])("$name", ({ kind, bounds, latencies, p95, reported, want }) => {
    const truth = trueP95Ms(latencies);
    expect(truth).toBeGreaterThanOrEqual(p95[0] ?? 0);
    expect(truth).toBeLessThanOrEqual(p95[1] ?? 0);
    const obs = observed(kind, histogramOf(latencies, bounds));
    // The status still reports the bucket boundary, as the specification says.
    expect(kind === "Decode" ? obs.itlMilliseconds : obs.ttftMilliseconds).toBe(reported);
    expect(decide(kind, obs)).toEqual(want);
  });
});
