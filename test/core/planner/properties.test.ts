/**
 * Invariants of `plan` over random specs, targets and observations:
 *   1. every committed vector lies inside the bounds and satisfies every ratio band;
 *   2. no commit grows one role and shrinks another of the same ratio component;
 *   3. Shadow never commits;
 *   4. equal inputs give equal outputs.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { bindingAnnotation } from "../../../src/core/api/model-deployment.js";
import { plan } from "../../../src/core/planner/plan.js";
import { bandSatisfied, ratioBands, ratioComponents } from "../../../src/core/planner/ratios.js";
import type { PlanInput } from "../../../src/core/planner/types.js";
import { inputOf, specOf, t0, targetOf, want } from "./fixtures.js";

interface Case {
  readonly input: PlanInput;
}

const arbCase = fc
  .record({
    size: fc.integer({ min: 1, max: 4 }),
    mins: fc.array(fc.integer({ min: 1, max: 6 }), { minLength: 4, maxLength: 4 }),
    spans: fc.array(fc.integer({ min: 0, max: 40 }), { minLength: 4, maxLength: 4 }),
    offsets: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 4, maxLength: 4 }),
    wants: fc.array(fc.integer({ min: 1, max: 60 }), { minLength: 4, maxLength: 4 }),
    ratioLinks: fc.array(fc.boolean(), { minLength: 3, maxLength: 3 }),
    slack: fc.array(
      fc.tuple(fc.double({ min: 0.3, max: 1, noNaN: true }), fc.double({ min: 1, max: 3, noNaN: true })),
      { minLength: 3, maxLength: 3 },
    ),
    upPolicy: fc.option(
      fc.record({
        type: fc.constantFrom("Pods" as const, "Percent" as const),
        value: fc.integer({ min: 0, max: 300 }),
      }),
      { nil: undefined },
    ),
    downPolicy: fc.option(
      fc.record({
        type: fc.constantFrom("Pods" as const, "Percent" as const),
        value: fc.integer({ min: 0, max: 100 }),
      }),
      { nil: undefined },
    ),
    historyAgeSeconds: fc.integer({ min: 0, max: 900 }),
    shadow: fc.boolean(),
    coverage: fc.array(fc.boolean(), { minLength: 4, maxLength: 4 }),
  })
  .map((r): Case => {
    const names = ["encode", "prefill", "decode", "server"].slice(0, r.size);
    const roles = names.map((name, i) => {
      const min = r.mins[i] ?? 1;
      const max = min + (r.spans[i] ?? 0);
      const current = min + Math.round((r.offsets[i] ?? 0) * (max - min));
      return { name, min, max, current };
    });
    // Bands always contain the current vector: min below, max above its ratio (3 decimals, rounded outwards).
    const ratios = names.slice(1).flatMap((name, i) => {
      if (r.ratioLinks[i] !== true) return [];
      const n = roles[i + 1] as (typeof roles)[number];
      const d = roles[i] as (typeof roles)[number];
      const ratio = n.current / d.current;
      const [lowF, highF] = r.slack[i] ?? [1, 1];
      const min = Math.floor(ratio * lowF * 1000) / 1000;
      const max = Math.ceil(ratio * highF * 1000) / 1000;
      return [
        {
          numeratorRole: name,
          denominatorRole: names[i] as string,
          ...(min > 0 ? { min: String(min) } : {}),
          max: String(max),
        },
      ];
    });
    const spec = specOf({
      mode: r.shadow ? "Shadow" : "Active",
      roles: roles.map((x) => ({ name: x.name, minReplicas: x.min, maxReplicas: x.max })),
      ratios,
      behavior: {
        scaleUp: r.upPolicy === undefined ? {} : { stepPolicy: r.upPolicy },
        scaleDown: {
          stabilizationWindowSeconds: 60,
          ...(r.downPolicy === undefined ? {} : { stepPolicy: r.downPolicy }),
        },
      },
    });
    const stamp = new Date(t0 - r.historyAgeSeconds * 1000).toISOString();
    const annotations = {
      [bindingAnnotation]: JSON.stringify({ scalerName: "llm", scalerUID: "scaler-uid", term: 1 }),
    };
    const input = inputOf({
      spec,
      target: targetOf(
        roles.map((x) => ({ name: x.name, replicas: x.current })),
        { annotations },
      ),
      observations: Object.fromEntries(
        roles.map((x, i) => [
          x.name,
          r.coverage[i] === false ? { ...want(r.wants[i] ?? 1, 3), sampledReplicas: 2 } : want(r.wants[i] ?? 1, 3),
        ]),
      ),
      status: {
        lastPassTime: new Date(t0 - 15_000).toISOString(),
        roles: roles.map((x, i) => ({
          name: x.name,
          currentReplicas: x.current,
          readyReplicas: 3,
          signalState: "Fresh" as const,
          stabilizationHistory: [{ timestamp: stamp, replicas: r.wants[i] ?? 1 }],
        })),
      },
    });
    return { input };
  });

describe("plan invariants", () => {
  it("committed vectors respect bounds and bands, and never mix directions in a component", () => {
    let commits = 0;
    fc.assert(
      fc.property(arbCase, ({ input }) => {
        const result = plan(input);
        const commit = result.commit;
        if (commit === undefined) return;
        commits++;
        const spec = input.scaler.spec;
        for (const role of spec.roles) {
          const count = commit.vector[role.name] ?? 0;
          expect(count).toBeGreaterThanOrEqual(role.minReplicas);
          expect(count).toBeLessThanOrEqual(role.maxReplicas);
        }
        const names = spec.roles.map((r) => r.name);
        const bands = ratioBands(spec, new Set(names));
        for (const band of bands)
          expect(bandSatisfied(band, commit.vector[band.numerator] ?? 0, commit.vector[band.denominator] ?? 0)).toBe(
            true,
          );
        for (const component of ratioComponents(names, bands)) {
          const moves = component.map((name) =>
            Math.sign((commit.vector[name] ?? 0) - (commit.baselineVector[name] ?? 0)),
          );
          expect(moves.includes(1) && moves.includes(-1)).toBe(false);
        }
      }),
      { numRuns: 400 },
    );
    // The property must not hold vacuously.
    expect(commits).toBeGreaterThan(100);
  });

  it("Shadow never commits", () => {
    fc.assert(
      fc.property(arbCase, ({ input }) => {
        const shadow = {
          ...input,
          scaler: { ...input.scaler, spec: { ...input.scaler.spec, mode: "Shadow" as const } },
        };
        expect(plan(shadow).commit).toBeUndefined();
      }),
      { numRuns: 200 },
    );
  });

  it("equal inputs give equal outputs", () => {
    fc.assert(
      fc.property(arbCase, ({ input }) => {
        const copy = JSON.parse(
          JSON.stringify(input, (key, v: unknown) => (key === "algorithm" ? undefined : v)),
        ) as PlanInput;
        expect(JSON.stringify(plan({ ...copy, algorithm: input.algorithm }))).toBe(JSON.stringify(plan(input)));
      }),
      { numRuns: 200 },
    );
  });
});
