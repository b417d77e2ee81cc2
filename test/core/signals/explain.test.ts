import { describe, expect, it } from "vitest";
import { explainSignalState } from "../../../src/core/signals/explain.js";
import { observeRole } from "../../../src/core/signals/observe.js";
import type { PodSample, RoleObservation, RoleSamples } from "../../../src/core/signals/types.js";
import { nowMs, pod } from "./pods.js";

function explain(samples: RoleSamples, ready = samples.pods.length): string {
  const input = { kind: "Server" as const, samples, readyReplicas: ready, nowMs, staleAfterSeconds: 60, reads: [] };
  return explainSignalState({ samples, observation: observeRole(input), nowMs, staleAfterSeconds: 60 });
}

const working: PodSample = pod("p0", { runningRequests: 2, stable: { promptTokensPerSecond: 10 } });

describe("explainSignalState", () => {
  it.each([
    { name: "query failure", samples: { pods: [], queryFailed: { reason: "timeout" } }, want: /failed: timeout/ },
    { name: "nobody answered", samples: { pods: [] }, want: /no pod of this role answered/ },
    { name: "stale", samples: { pods: [pod("p0", { ageSeconds: 600 })] }, want: /older than 60 s/ },
    {
      name: "no baseline",
      samples: { pods: [pod("p0", { stable: { established: false } })] },
      want: /no fresh pod has an established/,
    },
    { name: "no token rate", samples: { pods: [pod("p0", { stable: {} })] }, want: /no established pod reports/ },
    { name: "working", samples: { pods: [working] }, want: /^current readings with work$/ },
  ])("$name", ({ samples, want }) => {
    expect(explain(samples)).toMatch(want);
  });

  it("names incomplete coverage", () => {
    expect(explain({ pods: [working] }, 3)).toMatch(/1 of 3 ready replicas sampled/);
  });
});

describe("explainSignalState: established windows and Idle", () => {
  const missing: RoleObservation = { readyReplicas: 2, sampledReplicas: 0, signalState: "Missing" };

  it("counts established windows among fresh pods only, a pod at the limit being fresh", () => {
    const staleEstablished = pod("old", { ageSeconds: 61, stable: { promptTokensPerSecond: 1 } });
    const freshReset = pod("new", { stable: { established: false } });
    const explain = (pods: readonly PodSample[]): string =>
      explainSignalState({ samples: { pods }, observation: missing, nowMs, staleAfterSeconds: 60 });
    expect(explain([staleEstablished, freshReset])).toMatch(/^no fresh pod has an established stable window/);
    const atLimit = pod("edge", { ageSeconds: 60, stable: {} });
    expect(explain([atLimit, freshReset])).toMatch(/^no established pod reports a prompt or generation token rate/);
  });

  it("explains Idle", () => {
    const idle: RoleObservation = { readyReplicas: 1, sampledReplicas: 1, signalState: "Idle" };
    expect(explainSignalState({ samples: { pods: [pod("a")] }, observation: idle, nowMs, staleAfterSeconds: 60 })).toBe(
      "every demand figure is a measured zero",
    );
  });
});
