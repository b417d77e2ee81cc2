/**
 * Queue time in the observation: the p95 of the same pods and window as TTFT,
 * and how many of the pods that count export it (all is a reading, none is
 * "not exported", some is partial and so unknown to the guard).
 */
import { describe, expect, it } from "vitest";
import { observeRole } from "../../../src/core/signals/observe.js";
import type { PodSample, RoleObservation, RoleSamples } from "../../../src/core/signals/types.js";
import { histogram, nowMs, pod } from "./pods.js";

function observe(pods: readonly PodSample[], samples: RoleSamples = { pods }): RoleObservation {
  return observeRole({ kind: "Server", samples, readyReplicas: pods.length, nowMs, staleAfterSeconds: 60, reads: [] });
}

/** vLLM buckets (0.3, 0.5, 0.8 s): 100 requests, 96 waited at most 300 ms. */
const short = histogram(
  [
    [0.3, 96],
    [0.5, 100],
    [Infinity, 100],
  ],
  4,
);
/** 100 requests, 90 at most 300 ms, 99 at most 500 ms. */
const long = histogram(
  [
    [0.3, 90],
    [0.5, 99],
    [Infinity, 100],
  ],
  20,
);
const ttft = histogram(
  [
    [0.5, 10],
    [1, 100],
    [Infinity, 100],
  ],
  80,
);

const serving = (name: string, queue = short) =>
  pod(name, { stable: { promptTokensPerSecond: 100, ttftSeconds: ttft, queueTimeSeconds: queue } });

describe("queue time", () => {
  it("is the p95 over the role's pods, with its bracket, and every pod exports it", () => {
    const got = observe([serving("a"), serving("b", long)]);
    // 200 requests, 95 % = 190: 186 at 0.3 s, 199 at 0.5 s → (300, 500], 4/13 of the way: 361.5 ms.
    expect(got.queueTimeMilliseconds).toBe(500);
    expect(got.queueTimeBracket?.lowerMilliseconds).toBe(300);
    expect(got.queueTimeBracket?.estimateMilliseconds).toBeCloseTo(300 + (200 * 4) / 13, 6);
    expect(got.queueTimeExport).toEqual({ pods: 2, of: 2 });
  });

  it("a pod without it makes the export partial; the others' figures still show", () => {
    const bare = pod("c", { stable: { promptTokensPerSecond: 100, ttftSeconds: ttft } });
    const got = observe([serving("a"), bare]);
    expect(got.queueTimeExport).toEqual({ pods: 1, of: 2 });
    expect(got.queueTimeMilliseconds).toBe(300);
  });

  it("no pod exporting it is 'not exported' (0 of n), not a measured zero", () => {
    const bare = (name: string) => pod(name, { stable: { promptTokensPerSecond: 100, ttftSeconds: ttft } });
    const got = observe([bare("a"), bare("b")]);
    expect(got.queueTimeExport).toEqual({ pods: 0, of: 2 });
    expect(got.queueTimeMilliseconds).toBeUndefined();
  });

  it("a pod whose stable window is not established does not count either way", () => {
    const reset = pod("c", { stable: { established: false, promptTokensPerSecond: 100 } });
    expect(observe([serving("a"), reset]).queueTimeExport).toEqual({ pods: 1, of: 1 });
    expect(observe([reset]).queueTimeExport).toBeUndefined();
  });

  it("a failed or partial TTFT request leaves queue time unknown, never a zero", () => {
    // An SGLang pod whose first-use series would otherwise read as measured zeros.
    const fresh = pod("a", {
      engine: "sglang",
      stable: {
        effectivePrefillTokensPerSecond: 0,
        counterPresence: { firstUseFamily: false, startupCounter: true },
      },
    });
    const partial = observe([fresh], { pods: [fresh], unknownFamilies: { ttft: "ttft query failed: timeout" } });
    expect(partial.queueTimeExport).toEqual({ pods: 0, of: 1 });
    // Answered in full, the absent first-use series is a measured zero: exported, no observation.
    const full = observe([fresh]);
    expect(full.queueTimeExport).toEqual({ pods: 1, of: 1 });
    expect(full.queueTimeMilliseconds).toBeUndefined();
  });
});
