/**
 * The quality fleet's admission, routing and GPU accounting: a request is
 * admitted when it arrives (not at the next 0.25 s step), the token router
 * sends a request to the replica owing fewer tokens even when it holds more
 * requests (the request router does the opposite), and GPU-hours are
 * replica-hours times the preset's GPUs per replica.
 */
import { describe, expect, it } from "vitest";
import { QualityFleet, type RoutingRule } from "../../../src/sim/quality/cluster.js";
import { staticPolicy } from "../../../src/sim/quality/policies/static.js";
import { replicaPresets } from "../../../src/sim/quality/presets.js";
import { runPolicy } from "../../../src/sim/quality/run.js";
import type { Trace, TraceRequest } from "../../../src/sim/quality/traces.js";

function trace(requests: TraceRequest[], spanSeconds = 10): Trace {
  return { name: "hand-made", requests, spanSeconds, notes: [] };
}

describe("quality fleet", () => {
  it("admits a request arriving between steps within 10 ms: a lone short request's TTFT is its prefill time", () => {
    // Arrivals 0.13 s and 0.24 s after a step boundary, where the old fleet added 0.12 and 0.01 s.
    for (const arrivalSeconds of [2.38, 4.49]) {
      const promptTokens = 400;
      const result = runPolicy(trace([{ arrivalSeconds, promptTokens, outputTokens: 3 }]), staticPolicy(1), {
        seed: 1,
      });
      const record = result.records[0];
      const prefillSeconds = promptTokens / replicaPresets["llama-3.1-70b-4xh100"].capacity.prefillTokensPerSecond;
      const ttft = (record?.firstTokenSeconds as number) - arrivalSeconds;
      expect(ttft, `arrival at ${arrivalSeconds} s`).toBeGreaterThanOrEqual(prefillSeconds - 1e-9);
      expect(ttft, `arrival at ${arrivalSeconds} s`).toBeLessThanOrEqual(prefillSeconds + 0.01);
    }
  });

  /** Two ready replicas: server-0 with one long prompt, server-1 with three short ones; then one more request. */
  function routeAfterUnevenLoad(routing: RoutingRule): Map<string, number> {
    const fleet = new QualityFleet({ seed: 1, initialReplicas: 2, routing });
    const arrivals: TraceRequest[] = [
      { arrivalSeconds: 0.01, promptTokens: 60_000, outputTokens: 10 },
      { arrivalSeconds: 0.02, promptTokens: 100, outputTokens: 100 },
      { arrivalSeconds: 0.03, promptTokens: 100, outputTokens: 100 },
      { arrivalSeconds: 0.04, promptTokens: 100, outputTokens: 100 },
      { arrivalSeconds: 0.05, promptTokens: 100, outputTokens: 100 },
    ];
    fleet.advance(0);
    fleet.step(0, 0.25, arrivals);
    const held = new Map<string, number>();
    for (const r of fleet.replicas) held.set(r.name, r.engine.outstanding());
    return held;
  }

  it("routes by outstanding tokens: the replica with more requests but fewer tokens owed takes the next one", () => {
    // Tokens: the long prompt goes to server-0, then every short one to server-1 (fewer tokens owed),
    // the fifth too although server-1 then holds three requests against one.
    const tokens = routeAfterUnevenLoad("leastOutstandingTokens");
    expect(tokens.get("server-0")).toBe(1);
    expect(tokens.get("server-1")).toBe(4);
    // Requests: the counts alternate, so the long prompt's replica gets every second request.
    const requests = routeAfterUnevenLoad("leastOutstandingRequests");
    expect(requests.get("server-0")).toBe(3);
    expect(requests.get("server-1")).toBe(2);
  });

  it("GPU-hours are replica-hours times the GPUs per replica", () => {
    const t = trace([{ arrivalSeconds: 1, promptTokens: 100, outputTokens: 5 }], 3600);
    const seventy = runPolicy(t, staticPolicy(2), { seed: 1 });
    expect(seventy.gpusPerReplica).toBe(4);
    expect(seventy.replicaHours).toBeCloseTo(2, 9);
    expect(seventy.gpuHours).toBeCloseTo(8, 9);
    const eight = runPolicy(t, staticPolicy(2), { seed: 1, fleet: { preset: "llama-3.1-8b-1xh100" } });
    expect(eight.gpuHours).toBeCloseTo(2, 9);
    const eightOnTwo = runPolicy(t, staticPolicy(2), {
      seed: 1,
      fleet: { preset: "llama-3.1-8b-1xh100", gpusPerReplica: 2 },
    });
    expect(eightOnTwo.gpuHours).toBeCloseTo(4, 9);
    expect(eightOnTwo.gpuHoursByRole["server"]).toBeCloseTo(4, 9);
  });

  it("names the field and the value of a bad preset, routing rule or GPU count", () => {
    expect(() => new QualityFleet({ seed: 1, initialReplicas: 1, preset: "llama-3.1-8b-1xa100" })).toThrow(
      /fleet\.preset: .*"llama-3\.1-8b-1xa100"/,
    );
    expect(() => new QualityFleet({ seed: 1, initialReplicas: 1, routing: "random" as RoutingRule })).toThrow(
      /fleet\.routing: .*"random"/,
    );
    expect(() => new QualityFleet({ seed: 1, initialReplicas: 1, gpusPerReplica: 0 })).toThrow(
      /fleet\.gpusPerReplica: .*0/,
    );
  });
});
