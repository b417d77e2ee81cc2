/**
 * Invariants of admission, over generated input:
 * - validation never throws, whatever the JSON;
 * - defaulting is idempotent: defaulting a defaulted object changes nothing;
 * - whatever validates parses into the typed spec, with the type inferred and
 *   every quantity readable.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { defaultScaler } from "../../../src/core/api/defaulting.js";
import { parseQuantityExact } from "../../../src/core/api/quantity.js";
import { ScalerSchema, algorithmTypes } from "../../../src/core/api/scaler.js";
import { validateScaler } from "../../../src/core/api/validation.js";
import { baseScaler, target } from "./helpers.js";

/** Mostly valid values with some invalid ones, so both sides of admission are reached. */
const mostly = <T>(valid: fc.Arbitrary<T>, invalid: fc.Arbitrary<unknown>) =>
  fc.oneof({ arbitrary: valid, weight: 8 }, { arbitrary: invalid, weight: 1 });
const roleName = mostly(fc.constantFrom("prefill", "decode", "encode", "server"), fc.constantFrom("Bad_Name", ""));
const quantity = mostly(
  fc.constantFrom<unknown>("0.5", "1", "2", "500m", "1e3", "2Ki", 3, "1500m"),
  fc.constantFrom<unknown>(0, "0", "-1", "abc", 0.5, " 1", true),
);
const count = mostly(fc.integer({ min: 1, max: 16 }), fc.constantFrom<unknown>(0, 1025, -1, 2.5, "3"));
const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });

/** Drops undefined fields so generated objects look like parsed YAML. */
function compact(value: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined));
}

const valid = <T>(values: readonly T[], invalid: readonly unknown[]) =>
  mostly(fc.constantFrom(...values), fc.constantFrom(...invalid));

const role = fc
  .record({
    name: roleName,
    lo: fc.integer({ min: 1, max: 8 }),
    span: fc.integer({ min: 0, max: 8 }),
    withMin: fc.boolean(),
    broken: fc.option(count, { freq: 8, nil: undefined }),
  })
  .map(({ name, lo, span, withMin, broken }) =>
    compact({ name, minReplicas: withMin ? lo : undefined, maxReplicas: broken ?? lo + span }),
  );
/** A name of a generated role most of the time, so references resolve. */
const nameFrom = (names: readonly unknown[]) =>
  names.length === 0 ? roleName : mostly(fc.constantFrom(...names), roleName);
const ratioFor = (names: readonly unknown[]) =>
  fc
    .record({
      numeratorRole: nameFrom(names),
      denominatorRole: nameFrom(names),
      target: maybe(quantity),
      min: maybe(quantity),
      max: maybe(quantity),
    })
    .map(compact);
const tokenBlock = fc
  .record({
    prefillTargetTokensPerSecond: maybe(quantity),
    decodeTargetTokensPerSecond: maybe(quantity),
    serverTargetTokensPerSecond: maybe(quantity),
    stableWindowSeconds: maybe(valid([30, 180, 600], [29, 601])),
    panicThreshold: maybe(quantity),
  })
  .map(compact);
const algorithmFor = (names: readonly unknown[]) =>
  fc.oneof(
    fc.constant({}),
    fc.record({ type: maybe(valid(algorithmTypes, ["Other"])), tokenThroughput: maybe(tokenBlock) }).map(compact),
    fc
      .record({
        type: maybe(fc.constantFrom(...algorithmTypes)),
        proportional: fc
          .record({
            metric: valid(["QueueDepth", "TotalTokensPerSecond"], ["Nope"]),
            tolerance: maybe(quantity),
            roleTargets: fc.array(fc.record({ name: nameFrom(names), target: quantity }), {
              minLength: 1,
              maxLength: 3,
            }),
          })
          .map(compact),
      })
      .map(compact),
    fc.record({
      predictive: fc
        .record({
          tokenThroughput: maybe(tokenBlock),
          serverTokenCapacityPerReplica: maybe(quantity),
          qLevel: maybe(quantity),
          minPoints: maybe(valid([1, 6, 64], [0, 65])),
        })
        .map(compact),
    }),
  );
const stepPolicy = fc.record({ type: valid(["Pods", "Percent"], ["Other"]), value: valid([0, 1, 10], [-1]) });
const spec = mostly(
  fc.uniqueArray(role, { selector: (r) => r.name, minLength: 1, maxLength: 3 }),
  fc.array(role, { maxLength: 3 }),
).chain((roles) => {
  const names = (roles as Record<string, unknown>[]).map((r) => r.name);
  return fc
    .record({
      targetRef: fc.constant({ name: "llm-serving" }),
      mode: maybe(valid(["Shadow", "Active"], ["Off"])),
      roles: fc.constant(roles),
      ratios: maybe(fc.array(ratioFor(names), { maxLength: 2 })),
      algorithm: maybe(algorithmFor(names)),
      behavior: maybe(
        fc
          .record({
            scaleUp: maybe(
              fc.record({ maxStepReplicas: maybe(valid([0, 4], [-1])), stepPolicy: maybe(stepPolicy) }).map(compact),
            ),
            scaleDown: maybe(
              fc
                .record({ stabilizationWindowSeconds: maybe(valid([0, 300], [1801])), stepPolicy: maybe(stepPolicy) })
                .map(compact),
            ),
          })
          .map(compact),
      ),
      rebalance: maybe(
        fc
          .record({
            policy: maybe(fc.constantFrom("Opposing", "Priority", "Disabled")),
            priority: maybe(fc.uniqueArray(nameFrom(names), { maxLength: 2 })),
          })
          .map(compact),
      ),
    })
    .map(compact);
});
const scaler = spec.map((s) => ({
  apiVersion: "worker.gpustack.ai/v1",
  kind: "ModelDeploymentScaler",
  metadata: { name: "llm-serving" },
  spec: s,
}));

describe("validateScaler never throws", () => {
  it("on arbitrary values", () => {
    fc.assert(
      fc.property(fc.anything(), (input) => {
        const result = validateScaler(input);
        expect(typeof result.ok).toBe("boolean");
      }),
      { numRuns: 500 },
    );
  });

  it("on arbitrary JSON in every position of a scaler, old object and all", () => {
    fc.assert(
      fc.property(
        fc.jsonValue(),
        fc.constantFrom("spec", "roles", "ratios", "algorithm", "behavior", "rebalance", "targetRef"),
        (json, where) => {
          const obj = baseScaler() as Record<string, Record<string, unknown>>;
          if (where === "spec") obj.spec = json as Record<string, unknown>;
          else (obj.spec as Record<string, unknown>)[where] = json;
          const result = validateScaler(obj, {
            old: { spec: json as object },
            target: target("encode-prefill-decode"),
          });
          expect(result.ok || result.problems.length > 0).toBe(true);
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe("defaulting and validation properties", () => {
  it("defaulting is idempotent", () => {
    fc.assert(
      fc.property(scaler, (input) => {
        const once = defaultScaler(input);
        if (!once.ok) return;
        const twice = defaultScaler(once.value);
        expect(twice).toEqual(once);
      }),
      { numRuns: 1000 },
    );
  });

  it("whatever validates parses into the typed spec", () => {
    let admitted = 0;
    fc.assert(
      fc.property(scaler, (input) => {
        const result = validateScaler(input);
        if (!result.ok) {
          expect(result.problems.length).toBeGreaterThan(0);
          return;
        }
        admitted++;
        const reparsed = ScalerSchema.parse(result.value);
        expect(algorithmTypes).toContain(result.value.spec.algorithm.type);
        expect(reparsed.spec.roles.every((r) => r.minReplicas <= r.maxReplicas)).toBe(true);
        for (const r of result.value.spec.ratios ?? []) {
          for (const q of [r.min, r.max, r.target])
            if (q !== undefined) expect(parseQuantityExact(q)?.num).toBeGreaterThan(0n);
        }
        expect(validateScaler(result.value).ok).toBe(true);
      }),
      { numRuns: 1000 },
    );
    // The generator must reach the admitted side, or the property says nothing.
    expect(admitted).toBeGreaterThan(50);
  });
});
