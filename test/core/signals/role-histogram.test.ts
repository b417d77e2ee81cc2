import { describe, expect, it } from "vitest";
import { observeRole } from "../../../src/core/signals/observe.js";
import { roleSumHolds, roleSumsHold } from "../../../src/core/signals/role-histogram.js";
import type { HistogramWindow, PodSample, RoleHistogram, RoleObservation } from "../../../src/core/signals/types.js";
import { histogram, nowMs, pod } from "./pods.js";

/** Two pods' TTFT: a with 8 of 10 at 0.1 s, the rest at 0.5 s; b with 10 at 0.1 s. The role's p95: 0.5 s. */
const a = histogram(
  [
    [0.1, 8],
    [0.5, 10],
    [Infinity, 10],
  ],
  1.4,
);
const b = histogram(
  [
    [0.1, 10],
    [0.5, 10],
    [Infinity, 10],
  ],
  1,
);
const withoutBuckets = (h: HistogramWindow): HistogramWindow => ({ ...h, buckets: [] });

/** The role's sum of `a` and `b`, covering `covered`. */
function summed(covered: readonly string[] = ["a", "b"], inf = 20): RoleHistogram {
  return {
    pods: covered.map((name) => ({ pod: name, engine: "vllm" as const })),
    buckets: [
      { upperBound: 0.1, count: 18 },
      { upperBound: 0.5, count: 20 },
      { upperBound: Infinity, count: inf },
    ],
  };
}

/** The pods as the `roles` plan reads them: count and sum, no buckets of their own. */
const podsOf = (...extra: PodSample[]): PodSample[] => [
  pod("a", { stable: { ttftSeconds: withoutBuckets(a) } }),
  pod("b", { stable: { ttftSeconds: withoutBuckets(b) } }),
  ...extra,
];

function observe(pods: readonly PodSample[], role: RoleHistogram | undefined): RoleObservation {
  return observeRole({
    kind: "Server",
    samples: {
      pods,
      ...(role === undefined
        ? {}
        : { roleHistograms: { stable: { ttftSeconds: role }, panic: { ttftSeconds: role } } }),
    },
    readyReplicas: pods.length,
    nowMs,
    staleAfterSeconds: 60,
    reads: [],
  });
}

describe("a role's summed buckets stand for its pods only where they are the pods' merge", () => {
  it("reads the same latency from the role's sum as from the pods' own buckets", () => {
    const perPod = observe(
      [pod("a", { stable: { ttftSeconds: a } }), pod("b", { stable: { ttftSeconds: b } })],
      undefined,
    );
    expect(perPod.ttftMilliseconds).toBe(500);
    const fromSum = observe(podsOf(), summed());
    expect(fromSum).toEqual(perPod);
    expect(roleSumsHold({ pods: podsOf(), roleHistograms: { stable: { ttftSeconds: summed() } } }, podsOf())).toBe(
      true,
    );
  });

  it.each([
    { name: "a pod in the sum that is stale", covered: ["a", "b", "c"], extra: [pod("c", { ageSeconds: 120 })] },
    {
      name: "a pod in the sum whose window has a reset",
      covered: ["a", "b", "c"],
      extra: [pod("c", { stable: { established: false, ttftSeconds: withoutBuckets(b) } })],
    },
    { name: "a pod in the sum that no gauge named (deleted, still in the window)", covered: ["a", "b", "gone"] },
    { name: "a pod the merge adds that the sum does not cover", covered: ["a"] },
    { name: "a pod listed for both engines", covered: ["a", "b", "b"] },
    {
      name: "an established pod without the histogram (a measured zero the merge would add)",
      covered: ["a", "b"],
      extra: [pod("c")],
    },
  ])("not proven, and read as unknown rather than as a latency: $name", ({ covered, extra = [] }) => {
    const pods = podsOf(...extra);
    expect(roleSumHolds(summed(covered), pods, "stable", "ttftSeconds")).toBe(false);
    const observation = observe(pods, summed(covered));
    expect(observation.ttftMilliseconds).toBeUndefined();
    expect(observation.ttftBracket).toBeUndefined();
  });

  it("an unproven panic window is unknown latency, not a reason to read the stable window", () => {
    const observation = observeRole({
      kind: "Server",
      samples: {
        pods: podsOf(),
        roleHistograms: { stable: { ttftSeconds: summed() }, panic: { ttftSeconds: summed(["a"]) } },
      },
      readyReplicas: 2,
      nowMs,
      staleAfterSeconds: 60,
      reads: [],
    });
    expect(observation.ttftMilliseconds).toBeUndefined();
    expect(observe(podsOf(), summed()).ttftMilliseconds).toBe(500);
  });

  it("not proven when the sum's +Inf bucket is not the pods' counts (a pod's buckets dropped, its count kept)", () => {
    expect(roleSumHolds(summed(["a", "b"], 10), podsOf(), "stable", "ttftSeconds")).toBe(false);
    expect(roleSumHolds(summed(["a", "b"], 20 + 1e-12), podsOf(), "stable", "ttftSeconds")).toBe(true);
  });

  it("not proven on another engine than the one the merge reads the pod from", () => {
    const sglang = {
      ...summed(),
      pods: [
        { pod: "a", engine: "sglang" as const },
        { pod: "b", engine: "vllm" as const },
      ],
    };
    expect(roleSumHolds(sglang, podsOf(), "stable", "ttftSeconds")).toBe(false);
  });

  it("not proven past the 64-pod cap: the 65th pod is in the sum, not in the merge", () => {
    const names = Array.from({ length: 65 }, (_, i) => `p${String(i).padStart(2, "0")}`);
    const pods = names.map((name) => pod(name, { stable: { ttftSeconds: withoutBuckets(b) } }));
    const role: RoleHistogram = { pods: names.map((name) => ({ pod: name, engine: "vllm" })), buckets: [] };
    expect(observe(pods, role).ttftMilliseconds).toBeUndefined();
    expect(observe(pods.slice(0, 64), { ...role, pods: role.pods.slice(0, 64) }).ttftMilliseconds).toBe(100);
  });

  describe("the `native` plan: the pods' sums not asked, the role's sum carrying them", () => {
    /** The pods as `native` reads them: their counts alone. */
    const countsOnly = (): PodSample[] =>
      [
        ["a", a],
        ["b", b],
      ].map(([name, h]) => {
        const { count } = h as HistogramWindow;
        return pod(name as string, { stable: { ttftSeconds: { buckets: [], count } } });
      });
    /** `a` and `b` with their sum, 2.4 s, and every observation in `+Inf`: the p95 is the mean, 120 ms. */
    const inInf = (sum: number | undefined): RoleHistogram => ({
      pods: summed().pods,
      buckets: [{ upperBound: Infinity, count: 20 }],
      ...(sum === undefined ? {} : { sum }),
    });

    it("reads the same latency, the mean from the role's sum where the p95 falls in +Inf", () => {
      expect(observe(countsOnly(), { ...summed(), sum: 2.4 })).toEqual(observe(podsOf(), summed()));
      const fromRole = observe(countsOnly(), inInf(2.4));
      expect(fromRole.ttftMilliseconds).toBe(120);
      expect(fromRole).toEqual(observe(podsOf(), inInf(undefined)));
      expect(fromRole.ttftBracket).toEqual({
        lowerMilliseconds: 0,
        upperMilliseconds: Infinity,
        estimateMilliseconds: 120,
      });
    });

    it.each([
      { name: "NaN (a pod observed a NaN, its sum NaN for the life of its process)", sum: Number.NaN },
      { name: "infinite", sum: Infinity },
      { name: "negative", sum: -1 },
      { name: "absent", sum: undefined },
    ])("not proven where the role's sum is $name: the pods are asked their own", ({ sum }) => {
      expect(roleSumHolds(inInf(sum), countsOnly(), "stable", "ttftSeconds")).toBe(false);
      const observation = observe(countsOnly(), inInf(sum));
      expect(observation.ttftMilliseconds).toBeUndefined();
      expect(observation.ttftBracket).toBeUndefined();
    });

    it("a pod with its own sum needs none from the role (the `roles` plan)", () => {
      expect(roleSumHolds(inInf(Number.NaN), podsOf(), "stable", "ttftSeconds")).toBe(true);
      expect(observe(podsOf(), inInf(Number.NaN)).ttftMilliseconds).toBe(120);
    });
  });

  it("a sum without buckets stands for pods that have none: the mean, as the merge reads it", () => {
    const role: RoleHistogram = { pods: summed().pods, buckets: [] };
    expect(observe(podsOf(), role).ttftMilliseconds).toBe(120);
  });
});
