import { describe, expect, it } from "vitest";
import type { ProportionalMetric } from "../../../src/core/api/scaler.js";
import type { RoleObservation } from "../../../src/core/signals/types.js";
import { algorithmReasons } from "../../../src/core/algorithms/reasons.js";
import { proportional, proportionalMetricTotal } from "../../../src/core/algorithms/proportional.js";
import { fieldsRead } from "../../../src/core/algorithms/reads.js";
import { brief, observation, recommendationOf, role, run, spec, t0Ms } from "./fixtures.js";

function proportionalSpec(metric: ProportionalMetric, target: string, tolerance?: string) {
  return spec({
    algorithm: {
      type: "Proportional",
      proportional: {
        metric,
        ...(tolerance === undefined ? {} : { tolerance }),
        roleTargets: [{ name: "server", target }],
      },
    },
  });
}

function recommend(metric: ProportionalMetric, target: string, current: number, obs: RoleObservation) {
  return brief(
    recommendationOf(run(proportionalSpec(metric, target), [role("server", "Server", current, obs)]), "server"),
  );
}

describe("Proportional", () => {
  it.each([
    {
      name: "load on target: hold",
      running: 10,
      waiting: 6,
      current: 2,
      want: { replicas: 2, reason: "WithinTolerance", hold: undefined },
    },
    {
      name: "10% over target is inside the default tolerance",
      running: 17.6,
      waiting: 0,
      current: 2,
      want: { replicas: 2, reason: "WithinTolerance", hold: undefined },
    },
    {
      name: "10% under target is inside",
      running: 14.4,
      waiting: 0,
      current: 2,
      want: { replicas: 2, reason: "WithinTolerance", hold: undefined },
    },
    {
      name: "over the band: ceil(total / target)",
      running: 20,
      waiting: 10,
      current: 2,
      want: { replicas: 4, reason: "Proportional", hold: undefined },
    },
    {
      name: "under the band: ceil(total / target)",
      running: 4,
      waiting: 5,
      current: 4,
      want: { replicas: 2, reason: "Proportional", hold: undefined },
    },
    {
      name: "no load: at least one replica",
      running: 0,
      waiting: 0,
      current: 3,
      want: { replicas: 1, reason: "Proportional", hold: undefined },
    },
  ])("QueueDepth, target 8 with ready = current: $name", ({ running, waiting, current, want }) => {
    expect(
      recommend(
        "QueueDepth",
        "8",
        current,
        observation({ runningRequests: running, waitingRequests: waiting }, current),
      ),
    ).toEqual(want);
  });

  it("an exact tolerance boundary is inside despite float noise (22 / 2 / 10 = 1.1)", () => {
    const s = proportionalSpec("RunningRequests", "10");
    expect(
      brief(recommendationOf(run(s, [role("server", "Server", 2, observation({ runningRequests: 22 }))]), "server"))
        .reason,
    ).toBe("WithinTolerance");
  });

  it("a custom tolerance widens the deadband", () => {
    const s = proportionalSpec("RunningRequests", "10", "0.5");
    const r = run(s, [role("server", "Server", 2, observation({ runningRequests: 29 }))]);
    expect(brief(recommendationOf(r, "server"))).toEqual({ replicas: 2, reason: "WithinTolerance", hold: undefined });
  });

  it.each([
    { metric: "QueueDepth", fields: { runningRequests: 30, waitingRequests: 10 }, want: 5 },
    { metric: "RunningRequests", fields: { runningRequests: 30, waitingRequests: 10 }, want: 4 },
    { metric: "WaitingRequests", fields: { runningRequests: 30, waitingRequests: 10 }, want: 2 },
    { metric: "PromptTokensPerSecond", fields: { promptTokensPerSecond: 1, panicPromptTokensPerSecond: 40 }, want: 5 },
    { metric: "PromptTokensPerSecond", fields: { promptTokensPerSecond: 40 }, want: 5 },
    {
      metric: "GenerationTokensPerSecond",
      fields: { generationTokensPerSecond: 1, panicGenerationTokensPerSecond: 24 },
      want: 3,
    },
    {
      metric: "TotalTokensPerSecond",
      fields: {
        panicPromptTokensPerSecond: 20,
        panicGenerationTokensPerSecond: 20,
        promptTokensPerSecond: 1,
        generationTokensPerSecond: 1,
      },
      want: 5,
    },
  ] as const)(
    "$metric reads its metric (rates from the short window, else the stable one) → $want",
    ({ metric, fields, want }) => {
      expect(recommend(metric, "8", 1, observation(fields, 1)).replicas).toBe(want);
    },
  );

  it("rate targets are per replica, independent of how many are ready", () => {
    // 8000 tok/s at 2000 per replica is 4 replicas whether 2 or 4 are ready.
    expect(
      recommend("PromptTokensPerSecond", "2000", 2, observation({ panicPromptTokensPerSecond: 8000 }, 2)).replicas,
    ).toBe(4);
    expect(
      recommend("PromptTokensPerSecond", "2000", 4, observation({ panicPromptTokensPerSecond: 8000 }, 4)).reason,
    ).toBe("WithinTolerance");
  });

  it.each([
    {
      name: "no ready replica",
      current: 3,
      obs: observation({ runningRequests: 100, waitingRequests: 100 }, 0),
      want: { replicas: 3, reason: "NoReadyReplicas", hold: "NoReadyReplicas" },
    },
    {
      name: "the metric is missing",
      current: 3,
      obs: observation({ runningRequests: 5 }, 3),
      want: { replicas: 3, reason: "WaitingForMetrics", hold: "WaitingForMetrics" },
    },
    {
      name: "Stale",
      current: 3,
      obs: { readyReplicas: 3, sampledReplicas: 0, signalState: "Stale" as const },
      want: { replicas: 3, reason: "WaitingForMetrics", hold: "WaitingForMetrics" },
    },
    {
      name: "Missing with gauges that call for fewer: hold",
      current: 3,
      obs: observation({ signalState: "Missing", runningRequests: 1, waitingRequests: 0 }, 3),
      want: { replicas: 3, reason: "WaitingForMetrics", hold: "WaitingForMetrics" },
    },
    {
      name: "Missing with gauges that call for more: grow, still no scale-down",
      current: 3,
      obs: observation({ signalState: "Missing", runningRequests: 60, waitingRequests: 4 }, 3),
      want: { replicas: 8, reason: "Proportional", hold: "WaitingForMetrics" },
    },
  ])("$name", ({ current, obs, want }) => {
    expect(recommend("QueueDepth", "8", current, obs)).toEqual(want);
  });

  it("above the band while replicas are still starting, the count does not fall below the current one", () => {
    // current 10, ready 5, total 60 → load 12 > 8, but ceil(60 / 8) = 8 would cancel starting replicas.
    expect(recommend("RunningRequests", "8", 10, observation({ runningRequests: 60 }, 5))).toEqual({
      replicas: 10,
      reason: "Proportional",
      hold: undefined,
    });
  });

  it("below the band with more ready than desired, the count does not rise above the current one", () => {
    // current 5, ready 10 (a retirement in flight), total 60 → load 6 < 8: no growth.
    expect(recommend("RunningRequests", "8", 5, observation({ runningRequests: 60 }, 10))).toEqual({
      replicas: 5,
      reason: "Proportional",
      hold: undefined,
    });
  });

  it("couples an untargeted role to a targeted one through a direct ratio, and leaves others unscaled", () => {
    const s = spec(
      {
        algorithm: {
          type: "Proportional",
          proportional: { metric: "RunningRequests", roleTargets: [{ name: "prefill", target: "4" }] },
        },
        ratios: [{ numeratorRole: "encode", denominatorRole: "prefill", target: "0.5" }],
      },
      ["encode", "prefill", "other"],
    );
    const result = run(s, [
      role("encode", "Encode", 1, observation()),
      role("prefill", "Prefill", 2, observation({ runningRequests: 20 })),
      role("other", "Decode", 3, observation({ runningRequests: 1000 })),
    ]);
    expect(result.roles.map((r) => [r.role, r.scaled, r.replicas, r.reason])).toEqual([
      ["encode", true, 3, "RatioCoupled"],
      ["prefill", true, 5, "Proportional"],
      ["other", false, 3, "NoTarget"],
    ]);
    expect(result.predictors).toEqual([]);
  });
});

describe("proportional metric totals", () => {
  it.each([
    ["QueueDepth", { runningRequests: 3 }],
    ["QueueDepth", { waitingRequests: 3 }],
    ["TotalTokensPerSecond", { panicPromptTokensPerSecond: 3 }],
    ["TotalTokensPerSecond", { panicGenerationTokensPerSecond: 3 }],
  ] as const)("%s with only %j is unknown", (metric, fields) => {
    expect(proportionalMetricTotal(metric, observation(fields))).toBeUndefined();
  });

  it("a composite metric adds its parts", () => {
    expect(proportionalMetricTotal("QueueDepth", observation({ runningRequests: 3, waitingRequests: 4 }))).toBe(7);
    const rates = observation({ panicPromptTokensPerSecond: 3, panicGenerationTokensPerSecond: 4 });
    expect(proportionalMetricTotal("TotalTokensPerSecond", rates)).toBe(7);
  });
});

describe("proportional recommendations", () => {
  const proportionalSpec = spec(
    {
      algorithm: {
        proportional: {
          metric: "RunningRequests",
          roleTargets: [
            { name: "a", target: "10" },
            { name: "b", target: "10" },
          ],
        },
      },
    },
    ["a", "b", "c"],
  );

  it("a recommendation without a hold carries no hold field, and the algorithm keeps no predictor", () => {
    const result = run(proportionalSpec, [
      role("a", "Server", 2, observation({ runningRequests: 60 })),
      role("b", "Server", 2, observation({ runningRequests: 20 })),
      role("c", "Server", 2, observation()),
    ]);
    expect(result.predictors).toEqual([]);
    expect(result.roles[0]).toEqual({ role: "a", scaled: true, replicas: 6, reason: "Proportional" });
    expect(result.roles[1]).not.toHaveProperty("scaleDownHold");
    expect(result.roles[2]).toMatchObject({ role: "c", scaled: false, reason: algorithmReasons.noTarget });
  });

  it("without its parameter block no role is driven", () => {
    const bare = { ...proportionalSpec, algorithm: { type: "Proportional" as const } };
    const result = proportional.recommend({
      spec: bare,
      roles: [role("a", "Server", 2, observation({ runningRequests: 60 }))],
      predictors: [],
      nowMs: t0Ms,
    });
    expect(result.roles).toEqual([{ role: "a", scaled: false, replicas: 2, reason: algorithmReasons.noTarget }]);
  });

  it("reads nothing without its parameter block", () => {
    const bare = { ...proportionalSpec, algorithm: { type: "Proportional" as const } };
    expect(fieldsRead(bare, { name: "a", kind: "Server" })).toEqual([]);
  });

  it("reads its metric's fields for every targeted role and none for the others", () => {
    expect(fieldsRead(proportionalSpec, { name: "a", kind: "Server" })).toEqual(["runningRequests"]);
    expect(fieldsRead(proportionalSpec, { name: "b", kind: "Server" })).toEqual(["runningRequests"]);
    expect(fieldsRead(proportionalSpec, { name: "c", kind: "Server" })).toEqual([]);
  });
});
