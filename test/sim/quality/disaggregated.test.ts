/**
 * Prefill/decode disaggregation in the quality fleet: a request is prefilled
 * on a Prefill replica, its KV crosses that replica's link, and a Decode
 * replica decodes it. Requests are conserved across the handoff, TTFT includes
 * the transfer, a decode shortage shows in ITL and a prefill shortage in TTFT,
 * and the real planner scales each role from its own observations.
 */
import { describe, expect, it } from "vitest";
import { defaultCapacity } from "../../../src/sim/engines/model.js";
import { disaggregatedRoles, type QualityFleet } from "../../../src/sim/quality/cluster.js";
import { mdsPolicy } from "../../../src/sim/quality/policies/mds.js";
import { staticVectorPolicy } from "../../../src/sim/quality/policies/static.js";
import type { Policy } from "../../../src/sim/quality/policy.js";
import { defaultPresetName, replicaPresets } from "../../../src/sim/quality/presets.js";
import { runPolicy, type RunOptions, type RunResult } from "../../../src/sim/quality/run.js";
import { disaggregatedScaler, roleNeeds } from "../../../src/sim/quality/scalers.js";
import { overlay } from "../../../src/sim/quality/traces.js";
import { slice } from "./fixtures.js";

// Four overlaid copies of 15 minutes of the Azure conversation trace: about 2.7 prefill and
// 3.1 decode replicas of fluid need, so one replica more or less in a role matters.
const trace = overlay(slice("azure-conv", 900), 4, 1);
const pd: RunOptions = { seed: 1, fleet: { roles: disaggregatedRoles } };

/** Keeps the fleet a policy ran on, to inspect the replicas after the run. */
function watched(policy: Policy): { policy: Policy; fleet: () => QualityFleet } {
  let fleet: QualityFleet | undefined;
  return {
    policy: {
      ...policy,
      start(f) {
        fleet = f;
        policy.start?.(f);
      },
      decide: (ctx) => policy.decide(ctx),
    },
    fleet: () => {
      expect(fleet).toBeDefined();
      return fleet as QualityFleet;
    },
  };
}

function ttftSeconds(r: RunResult): number[] {
  return r.records.flatMap((x) => (x.firstTokenSeconds === undefined ? [] : [x.firstTokenSeconds - x.arrivalSeconds]));
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

function meanItlSeconds(r: RunResult): number {
  const itl = r.records.flatMap((x) => (x.meanItlSeconds === undefined ? [] : [x.meanItlSeconds]));
  return itl.reduce((a, b) => a + b, 0) / itl.length;
}

describe("disaggregated quality fleet", () => {
  it("conserves requests across the handoff while the planner scales both roles", () => {
    const need = roleNeeds(trace, defaultCapacity);
    const spec = disaggregatedScaler({
      algorithm: "TokenThroughput",
      capacity: defaultCapacity,
      ratio: need.prefill / need.decode,
      maxReplicas: 32,
      ttftTargetMilliseconds: 1500,
    });
    const run = watched(mdsPolicy({ spec, initialReplicas: { prefill: 3, decode: 3 } }));
    const result = runPolicy(trace, run.policy, pd);
    const fleet = run.fleet();
    expect(result.requests).toBe(trace.requests.length);
    expect(result.completed + result.unfinished).toBe(result.requests);
    expect(result.unfinished).toBe(0);
    // Every prompt was prefilled once on a Prefill replica and decoded once on a Decode replica.
    const finishedOn = (role: string): number =>
      fleet.replicas.filter((r) => r.role === role).reduce((n, r) => n + r.engine.totals().finishedRequests, 0);
    expect(finishedOn("prefill")).toBe(result.requests);
    expect(finishedOn("decode")).toBe(result.requests);
    // Both roles moved, each from its own observations, and both are charged.
    expect(fleet.replicas.filter((r) => r.role === "prefill").length).toBeGreaterThan(3);
    expect(fleet.replicas.filter((r) => r.role === "decode").length).toBeGreaterThan(3);
    expect(result.scaleEvents).toBeGreaterThan(0);
    expect(result.gpuHoursByRole.prefill).toBeGreaterThan(0);
    expect(result.gpuHoursByRole.decode).toBeGreaterThan(0);
    expect((result.gpuHoursByRole.prefill ?? 0) + (result.gpuHoursByRole.decode ?? 0)).toBeCloseTo(result.gpuHours, 9);
    // No prefill replica stopped while a decode replica still waited for KV it held.
    for (const r of fleet.replicas)
      if (r.role === "prefill") expect(r.engine.ranks[0]?.gauges().prefillInflight).toBe(0);
  });

  it.each([
    ["prefill", { prefillTokensPerSecond: 4000 }],
    ["decode", { decodeTokensPerSecond: 750 }],
  ] as const)("each role follows its own demand: halving the %s rate grows that role", (role, slower) => {
    const capacity = { ...defaultCapacity, ...slower };
    const need = roleNeeds(trace, capacity);
    const spec = disaggregatedScaler({
      algorithm: "TokenThroughput",
      capacity,
      ratio: 1,
      maxReplicas: 32,
      ttftTargetMilliseconds: 1500,
    });
    const run = watched(mdsPolicy({ spec, initialReplicas: { prefill: 4, decode: 4 } }));
    const result = runPolicy(trace, run.policy, { ...pd, fleet: { ...pd.fleet, capacity } });
    const other = role === "prefill" ? "decode" : "prefill";
    expect(need[role]).toBeGreaterThan(1.5 * need[other]);
    expect(result.gpuHoursByRole[role]).toBeGreaterThan(1.3 * (result.gpuHoursByRole[other] ?? 0));
    expect(run.fleet().desiredOf(role)).toBeGreaterThan(run.fleet().desiredOf(other));
  });

  it("TTFT includes the KV transfer: every request's first token comes after its prefill and its transfer", () => {
    const slowLink = { bytesPerToken: replicaPresets[defaultPresetName].kvBytesPerToken, linkBytesPerSecond: 1e9 };
    const fast = runPolicy(trace, staticVectorPolicy({ prefill: 6, decode: 6 }), pd);
    const slow = runPolicy(trace, staticVectorPolicy({ prefill: 6, decode: 6 }), {
      ...pd,
      fleet: { ...pd.fleet, kvLink: slowLink },
    });
    for (const r of slow.records) {
      const transfer = (r.promptTokens * slowLink.bytesPerToken) / slowLink.linkBytesPerSecond;
      const prefill = r.promptTokens / defaultCapacity.prefillTokensPerSecond;
      expect((r.firstTokenSeconds as number) - r.arrivalSeconds, `request ${r.id}`).toBeGreaterThanOrEqual(
        prefill + transfer - 1e-9,
      );
    }
    // The mean prompt's 378 MB (Llama-3.1-70B, 320 KiB per token) take 0.38 s on a 1 GB/s link and
    // 38 ms at the default 10 GB/s.
    expect(median(ttftSeconds(slow)) - median(ttftSeconds(fast))).toBeGreaterThan(0.1);
  });

  // Decode replicas that admit every handoff (batch and KV limits far above the load), as a
  // decode pool sized by memory does: a shortage then slows every stream instead of queueing.
  const roomy = { ...pd, fleet: { ...pd.fleet, capacity: { maxRunningRequests: 1024, kvCacheTokens: 4_000_000 } } };

  it("a decode shortage raises ITL, not TTFT", () => {
    const balanced = runPolicy(trace, staticVectorPolicy({ prefill: 5, decode: 6 }), roomy);
    const shortDecode = runPolicy(trace, staticVectorPolicy({ prefill: 5, decode: 3 }), roomy);
    expect(balanced.attainment.both).toBeGreaterThan(0.99);
    expect(meanItlSeconds(shortDecode)).toBeGreaterThan(2 * meanItlSeconds(balanced));
    expect(shortDecode.attainment.itl).toBeLessThan(0.5);
    expect(shortDecode.attainment.ttft).toBeCloseTo(balanced.attainment.ttft, 2);
    expect(median(ttftSeconds(shortDecode))).toBeLessThan(1.1 * median(ttftSeconds(balanced)));
  });

  it("a prefill shortage raises TTFT, not ITL", () => {
    const balanced = runPolicy(trace, staticVectorPolicy({ prefill: 5, decode: 6 }), roomy);
    const shortPrefill = runPolicy(trace, staticVectorPolicy({ prefill: 3, decode: 6 }), roomy);
    expect(median(ttftSeconds(shortPrefill))).toBeGreaterThan(5 * median(ttftSeconds(balanced)));
    expect(shortPrefill.attainment.ttft).toBeLessThan(0.5);
    expect(shortPrefill.attainment.itl).toBeCloseTo(balanced.attainment.itl, 2);
    expect(meanItlSeconds(shortPrefill)).toBeLessThan(1.1 * meanItlSeconds(balanced));
  });

  it("rejects a fleet whose roles are neither one Server role nor a Prefill and a Decode role", () => {
    expect(() =>
      runPolicy(trace, staticVectorPolicy({ decode: 1 }), {
        seed: 1,
        fleet: { roles: [{ name: "decode", kind: "Decode" }] },
      }),
    ).toThrow(/fleet\.roles: .*got kinds \[Decode\]/);
    // A scaler with one role cannot drive a Prefill/Decode fleet.
    const one = disaggregatedScaler({
      algorithm: "TokenThroughput",
      capacity: defaultCapacity,
      ratio: 1,
      maxReplicas: 4,
    });
    const server = mdsPolicy({ spec: { ...one, roles: one.roles.slice(0, 1), ratios: [] }, initialReplicas: 1 });
    expect(() => runPolicy(trace, server, pd)).toThrow(/spec\.roles: .*prefill.*decode/);
    expect(() => runPolicy(trace, staticVectorPolicy({ prefill: 1 }), pd)).toThrow(
      /fleet\.initialReplicas: .*role "decode"/,
    );
  });
});
