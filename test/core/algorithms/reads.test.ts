import { describe, expect, it } from "vitest";
import { defaultScalerSpec } from "../../../src/core/api/defaulting.js";
import type { ScalerSpec } from "../../../src/core/api/scaler.js";
import { fieldsRead } from "../../../src/core/algorithms/reads.js";

function spec(algorithm: Record<string, unknown>): ScalerSpec {
  const r = defaultScalerSpec({
    targetRef: { name: "t" },
    roles: [
      { name: "prefill", maxReplicas: 4 },
      { name: "decode", maxReplicas: 4 },
      { name: "server", maxReplicas: 4 },
    ],
    algorithm,
  });
  if (!r.ok) throw new Error(JSON.stringify(r.problems));
  return r.value;
}

describe("fields each algorithm reads, per role", () => {
  it("TokenThroughput: the demand a kind serves and the latency it is guarded on; undriven roles read nothing", () => {
    const s = spec({
      type: "TokenThroughput",
      tokenThroughput: { prefillTargetTokensPerSecond: "8000", decodeTargetTokensPerSecond: "2000" },
    });
    expect(fieldsRead(s, { name: "prefill", kind: "Prefill" })).toEqual(["promptTokens", "ttft"]);
    expect(fieldsRead(s, { name: "decode", kind: "Decode" })).toEqual(["generationTokens", "itl"]);
    // No server capacity: a Server role would follow a ratio.
    expect(fieldsRead(s, { name: "server", kind: "Server" })).toEqual([]);
    expect(fieldsRead(s, { name: "encode", kind: "Encode" })).toEqual([]);
  });

  it("Predictive reads as its TokenThroughput fallback does", () => {
    const s = spec({ type: "Predictive", predictive: { tokenThroughput: { serverTargetTokensPerSecond: "2000" } } });
    expect(fieldsRead(s, { name: "server", kind: "Server" })).toEqual([
      "promptTokens",
      "generationTokens",
      "ttft",
      "itl",
    ]);
    expect(fieldsRead(s, { name: "prefill", kind: "Prefill" })).toEqual([]);
  });

  it.each([
    ["QueueDepth", ["runningRequests", "waitingRequests"]],
    ["WaitingRequests", ["waitingRequests"]],
    ["TotalTokensPerSecond", ["promptTokens", "generationTokens"]],
  ])("Proportional on %s reads what the metric is made of, for targeted roles only", (metric, want) => {
    const s = spec({
      type: "Proportional",
      proportional: { metric, roleTargets: [{ name: "server", target: "8" }] },
    });
    expect(fieldsRead(s, { name: "server", kind: "Server" })).toEqual(want);
    expect(fieldsRead(s, { name: "decode", kind: "Decode" })).toEqual([]);
  });
});
