import { describe, expect, it } from "vitest";
import { defaultCapacity } from "../../../src/sim/engines/model.js";
import { sightedPolicy } from "../../../src/sim/quality/policies/sighted.js";
import { runPolicy } from "../../../src/sim/quality/run.js";
import { searchSighted } from "../../../src/sim/quality/sighted-search.js";
import type { Trace, TraceRequest } from "../../../src/sim/quality/traces.js";

/** A prefill-bound trace: one request per second of `promptTokens`, tripled from `stepAt` to `stepEnd`. */
function stepTrace(promptTokens: number, stepAt: number, stepEnd: number, spanSeconds: number): Trace {
  const requests: TraceRequest[] = [];
  for (let s = 0; s < spanSeconds; s++) {
    const copies = s >= stepAt && s < stepEnd ? 3 : 1;
    for (let c = 0; c < copies; c++) requests.push({ arrivalSeconds: s + c / 3, promptTokens, outputTokens: 2 });
  }
  return { name: "step", requests, spanSeconds, notes: [] };
}

const capacity = { ...defaultCapacity, prefillTokensPerSecond: 1000, decodeTokensPerSecond: 1000 };

describe("the sighted scaler (the reactive bound's family)", () => {
  // 600 prompt tokens a second against 1,000 a replica: 0.6 replicas, then 1.8 from 600 s to 900 s.
  const trace = stepTrace(600, 600, 900, 1800);
  /** The desired count the scaler with headroom 2, a minute measured and this hold had set at each second. */
  const replay = (holdSeconds: number): ((second: number) => number | undefined) => {
    const run = runPolicy(
      trace,
      sightedPolicy(trace, capacity, { headroom: 2, measureSeconds: 60, holdSeconds, initialReplicas: 2 }),
      { seed: 1, fleet: { capacity, coldStartSeconds: { min: 60, max: 60 } } },
    );
    return (second) => [...run.series].reverse().find((p) => p.atSeconds <= second)?.desiredReplicas;
  };

  it("asks for the headroom times the need of the arrivals it has seen, and no more before they arrive", () => {
    const desiredAt = replay(15);
    expect(desiredAt(590)).toBe(2); // ceil(2 × 0.6)
    expect(desiredAt(899)).toBe(4); // ceil(2 × 1.8), a minute after the step
    expect(desiredAt(1790)).toBe(2); // back once the step has left the measured minute
  });

  it("keeps the largest need of its hold window", () => {
    const desiredAt = replay(300);
    expect(desiredAt(1100)).toBe(4); // 200 s after the step ended, still held
    expect(desiredAt(1400)).toBe(2); // 500 s after, let go
  });
});

describe("the reactive bound's search", () => {
  const trace = stepTrace(600, 600, 900, 1800);
  /** A stand-in for the replay: attainment rises with the headroom the label names and reaches 99 % from 1.4. */
  const fakeRun = (policy: { name: string }) => {
    const h = Number(/h=([\d.]+)/.exec(policy.name)?.[1]);
    return { policy: policy.name, attainment: { both: h >= 1.4 ? 0.995 : 0.9, ttft: 1, itl: 1 }, gpuHours: h };
  };

  it("finds the cheapest headroom reaching the goal by grid, then bisection, for each window it is given", () => {
    const search = searchSighted(fakeRun, trace, capacity, { initialReplicas: 1, maxReplicas: 8 }, 0.99, [
      { measureSeconds: 15, holdSeconds: 300 },
    ]);
    // 1, 1.25 miss and 1.5 holds; three bisections narrow (1.25, 1.5] to 1.40625.
    expect(search.best?.policy).toBe("sighted h=1.406 measure=15s hold=300s");
    expect(search.rows).toHaveLength(6);
  });

  it("searches the whole grid of windows unless told otherwise", () => {
    const search = searchSighted(fakeRun, trace, capacity, { initialReplicas: 1, maxReplicas: 8 });
    const windows = new Set(search.rows.map((r) => r.policy.replace(/^sighted h=[\d.]+ /, "")));
    expect([...windows].sort()).toEqual([
      "measure=15s hold=15s",
      "measure=15s hold=300s",
      "measure=60s hold=15s",
      "measure=60s hold=300s",
    ]);
  });
});
