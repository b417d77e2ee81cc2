import { describe, expect, it } from "vitest";
import { cellOf, roleKey, type PassAcc, type PodAcc } from "../../../src/adapters/prometheus/pass-acc.js";
import { windowOf } from "../../../src/adapters/prometheus/pass-read.js";
import type { ScalerSamplingInput } from "../../../src/adapters/prometheus/source.js";
import { longerAndShorter, readShorterFromLonger } from "../../../src/adapters/prometheus/window-resets.js";

function scaler(deployment: string, windows: { stable?: number; panic?: number } = {}): ScalerSamplingInput {
  return {
    key: `team/${deployment}`,
    namespace: "team",
    deployment,
    roles: ["prefill", "decode"],
    stableWindowSeconds: windows.stable ?? 180,
    panicWindowSeconds: windows.panic ?? 60,
    intervalSeconds: 15,
  };
}

function emptyAcc(): PassAcc {
  return {
    pods: [],
    podsByName: new Map(),
    roles: new Map(),
    summed: new Map(),
    native: false,
    classic: new Map(),
  };
}

/** A pod with the resets and groups each window read (`undefined`: no counter sampled there). */
function addPod(
  acc: PassAcc,
  deployment: string,
  role: string,
  pod: string,
  windows: Record<number, { resets?: number; present?: readonly string[] }>,
): PodAcc {
  const p: PodAcc = { namespace: "team", deployment, role, pod, targets: new Map(), windows: new Map() };
  for (const [w, read] of Object.entries(windows)) {
    const win = windowOf(p, Number(w));
    if (win === undefined) throw new Error(`window ${w}`);
    if (read.resets !== undefined) win.resets = read.resets;
    for (const g of read.present ?? []) win.present.add(g);
  }
  acc.pods.push(p);
  return p;
}

describe("the shorter window's resets", () => {
  it("orders a scaler's windows whichever is the panic one", () => {
    expect(longerAndShorter(scaler("a"))).toEqual({ longer: 180, shorter: 60 });
    expect(longerAndShorter(scaler("a", { stable: 30, panic: 120 }))).toEqual({ longer: 120, shorter: 30 });
    expect(longerAndShorter(scaler("a", { stable: 60, panic: 60 }))).toEqual({ longer: 60, shorter: 60 });
  });

  it("asks again only the roles a pod of which saw a reset in the longer window", () => {
    const acc = emptyAcc();
    addPod(acc, "a", "prefill", "a-p-0", { 180: { resets: 0 }, 60: {} });
    addPod(acc, "a", "decode", "a-d-0", { 180: { resets: 0 }, 60: {} });
    addPod(acc, "a", "decode", "a-d-1", { 180: { resets: 2 }, 60: {} });
    addPod(acc, "b", "prefill", "b-p-0", { 180: { resets: 1 }, 60: {} });
    // Equal windows: the one window's resets were asked.
    addPod(acc, "c", "prefill", "c-p-0", { 60: { resets: 1 } });
    const scalers = [scaler("a"), scaler("b"), scaler("c", { stable: 60, panic: 60 })];
    expect(readShorterFromLonger(scalers, acc).asked.map((s) => [s.deployment, s.roles])).toEqual([
      ["a", ["decode"]],
      ["b", ["prefill"]],
    ]);
  });

  it("gives the other roles' shorter windows the longer window's zero and groups, replacing what was there", () => {
    const acc = emptyAcc();
    const quiet = addPod(acc, "a", "prefill", "a-p-0", {
      180: { resets: 0, present: ["sglang/first_use", "sglang/startup"] },
      // Read for another scaler whose longer window is 60 s (a query's selection is a cross product).
      60: { resets: 0, present: ["sglang/startup"] },
    });
    const unsampled = addPod(acc, "a", "prefill", "a-p-1", { 180: {}, 60: { resets: 0 } });
    const noShorter = addPod(acc, "a", "prefill", "a-p-2", { 180: { resets: 0, present: ["vllm/counters"] } });
    const reset = addPod(acc, "a", "decode", "a-d-0", { 180: { resets: 3, present: ["vllm/counters"] }, 60: {} });
    const s = scaler("a");
    readShorterFromLonger([s], acc);
    expect(quiet.windows.get(60)?.resets).toBe(0);
    expect([...(quiet.windows.get(60)?.present ?? [])]).toEqual(["sglang/first_use", "sglang/startup"]);
    // No counter sampled in the longer window: none in the shorter one.
    expect(unsampled.windows.get(60)?.resets).toBeUndefined();
    expect(unsampled.windows.get(60)?.present.size).toBe(0);
    // A pod without a shorter window (nothing of it answered there) gets none.
    expect(noShorter.windows.has(60)).toBe(false);
    // The role asked again is left for its answers.
    expect(reset.windows.get(60)?.resets).toBeUndefined();
    expect(reset.windows.get(60)?.present.size).toBe(0);
  });

  it("empties the asked roles' shorter windows and names the cells their answers are read into", () => {
    const acc = emptyAcc();
    const pod = addPod(acc, "a", "decode", "a-d-0", {
      180: { resets: 3, present: ["vllm/counters"] },
      60: { resets: 0, present: ["vllm/counters"] },
    });
    expect([...readShorterFromLonger([scaler("a")], acc).cells]).toEqual([cellOf(roleKey("team", "a", "decode"), 60)]);
    expect(pod.windows.get(60)?.resets).toBeUndefined();
    expect(pod.windows.get(60)?.present.size).toBe(0);
    expect(pod.windows.get(180)?.resets).toBe(3);
  });
});
