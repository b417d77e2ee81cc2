/**
 * Phase 5 on hand-built role plans (`components.ts`): a component's direction,
 * each role's allowed interval, the reason that explains a planned count, and
 * the `Blocked` messages of a component.
 */
import { describe, expect, it } from "vitest";
import type { RolePlan } from "../../../src/core/planner/role-plans.js";
import {
  allowedBox,
  componentDirection,
  explain,
  planComponent,
  planComponents,
} from "../../../src/core/planner/components.js";

interface PlanFixture {
  readonly name?: string;
  readonly current: number;
  readonly rec?: number;
  readonly clamped?: { value: number; reason: string };
  readonly stabilized?: { value: number; reason: string };
  readonly scaled?: boolean;
  readonly up?: number;
  readonly down?: number;
  readonly range?: { min: number; max: number };
  readonly upHold?: RolePlan["upHold"];
  readonly downHold?: RolePlan["downHold"];
  readonly noRecommendation?: boolean;
}

function rolePlan(f: PlanFixture): RolePlan {
  const name = f.name ?? "r";
  const rec = f.rec ?? f.current;
  return {
    name,
    role: { name, kind: "Server", replicas: f.current },
    current: f.current,
    range: f.range ?? { min: 1, max: 8 },
    observation: undefined,
    recommendation:
      f.noRecommendation === true ? undefined : { role: name, scaled: true, replicas: rec, reason: "Algo" },
    scaled: f.scaled ?? true,
    coupled: false,
    clamped: f.clamped ?? { value: rec, reason: "" },
    stabilized: f.stabilized ?? f.clamped ?? { value: rec, reason: "" },
    history: [],
    upHold: f.upHold,
    downHold: f.downHold,
    upStepReplicas: f.up ?? 4,
    downStepReplicas: f.down ?? 1,
    lastScaleUpTime: undefined,
  };
}

describe("componentDirection", () => {
  it("up when a driven member's clamped recommendation grows, else down", () => {
    expect(componentDirection([rolePlan({ current: 2, rec: 3 }), rolePlan({ current: 2, rec: 1 })])).toBe("up");
    expect(componentDirection([rolePlan({ current: 2, rec: 2 }), rolePlan({ current: 2, rec: 1 })])).toBe("down");
    expect(componentDirection([rolePlan({ current: 2, rec: 3, scaled: false })])).toBe("down");
  });
});

describe("allowedBox", () => {
  it.each([
    { why: "an undriven role stays", f: { current: 3, scaled: false }, dir: "up", box: { lo: 3, hi: 3 } },
    { why: "up: step above, nothing below", f: { current: 3 }, dir: "up", box: { lo: 3, hi: 7 } },
    { why: "down: step below, nothing above", f: { current: 3 }, dir: "down", box: { lo: 2, hi: 3 } },
    { why: "bounds cap the step", f: { current: 6 }, dir: "up", box: { lo: 6, hi: 8 } },
    { why: "the minimum caps the step", f: { current: 1, down: 2 }, dir: "down", box: { lo: 1, hi: 1 } },
    {
      why: "a growth hold closes the top",
      f: { current: 3, upHold: { reason: "PendingAdmission" as const, message: "" } },
      dir: "up",
      box: { lo: 3, hi: 3 },
    },
    {
      why: "a scale-down hold closes the bottom",
      f: { current: 3, downHold: { reason: "AbortCooldown" as const, message: "" } },
      dir: "down",
      box: { lo: 3, hi: 3 },
    },
    {
      why: "a count below the minimum stays inside its box",
      f: { current: 1, range: { min: 2, max: 8 } },
      dir: "down",
      box: { lo: 1, hi: 1 },
    },
    {
      why: "a count above the maximum stays inside its box",
      f: { current: 9, range: { min: 1, max: 8 } },
      dir: "up",
      box: { lo: 9, hi: 9 },
    },
  ] as const)("$why", ({ f, dir, box }) => {
    expect(allowedBox(rolePlan(f), dir)).toStrictEqual(box);
  });
});

describe("explain", () => {
  const box = { lo: 2, hi: 4 };
  it.each([
    { why: "the recommendation itself", f: { current: 3, rec: 4 }, planned: 4, want: "Algo" },
    { why: "an undriven role", f: { current: 3, rec: 5, scaled: false }, planned: 3, want: "Algo" },
    {
      why: "an undriven role, whatever a clamp says",
      f: { current: 3, rec: 5, scaled: false, clamped: { value: 3, reason: "MaxReplicas" } },
      planned: 3,
      want: "Algo",
    },
    {
      why: "a recommendation reached, whatever a clamp says",
      f: { current: 3, rec: 4, clamped: { value: 4, reason: "MaxReplicas" } },
      planned: 4,
      want: "Algo",
    },
    {
      why: "a window's wish reached inside the box",
      f: { current: 3, rec: 1, stabilized: { value: 2, reason: "" } },
      planned: 2,
      want: "Algo",
    },
    {
      why: "no recommendation at all",
      f: { current: 3, noRecommendation: true, scaled: false },
      planned: 3,
      want: "NotScaled",
    },
    {
      why: "no vector satisfied the bands",
      f: { current: 3, rec: 5 },
      planned: 3,
      how: "conflict",
      want: "RatioConflict",
    },
    {
      why: "a bound clamped it",
      f: { current: 3, rec: 12, clamped: { value: 8, reason: "MaxReplicas" } },
      planned: 8,
      want: "MaxReplicas",
    },
    {
      why: "a clamp without a reason falls through",
      f: { current: 3, rec: 5, clamped: { value: 4, reason: "" }, stabilized: { value: 4, reason: "Win" } },
      planned: 4,
      want: "Win",
    },
    {
      why: "a window held it",
      f: { current: 3, rec: 1, stabilized: { value: 3, reason: "ScaleDownStabilization" } },
      planned: 3,
      want: "ScaleDownStabilization",
    },
    {
      why: "a growth hold stopped it",
      f: { current: 3, rec: 6, upHold: { reason: "PendingAdmission" as const, message: "" } },
      planned: 4,
      want: "PendingAdmission",
    },
    { why: "the step stopped growth", f: { current: 3, rec: 6 }, planned: 4, want: "ScaleUpLimit" },
    { why: "the component shrinks", f: { current: 3, rec: 6 }, planned: 4, dir: "down", want: "ComponentScalingDown" },
    {
      why: "a scale-down hold stopped it",
      f: { current: 3, rec: 1, downHold: { reason: "AbortCooldown" as const, message: "" } },
      planned: 2,
      want: "AbortCooldown",
    },
    { why: "the step stopped shrinking", f: { current: 3, rec: 1 }, planned: 2, dir: "down", want: "ScaleDownLimit" },
    { why: "the component grows", f: { current: 3, rec: 1 }, planned: 2, want: "ComponentScalingUp" },
    { why: "the bands moved it", f: { current: 3, rec: 3 }, planned: 2, how: "moved", want: "RatioCoupled" },
    {
      why: "otherwise the window's reason",
      f: { current: 3, rec: 1, stabilized: { value: 2, reason: "Win" } },
      planned: 3,
      want: "Win",
    },
    {
      why: "otherwise the algorithm's",
      f: { current: 3, rec: 1, stabilized: { value: 3, reason: "" } },
      planned: 2,
      want: "Algo",
    },
  ] as const)("$why: $want", (c) => {
    const how = "how" in c ? c.how : "exact";
    const dir = "dir" in c ? c.dir : "up";
    expect(explain(rolePlan(c.f), c.planned, box, dir, how)).toBe(c.want);
  });
});

describe("planComponent", () => {
  it("reports a pacing hold on Blocked with the role, reason and counts", () => {
    const out = planComponent([rolePlan({ name: "s", current: 3, rec: 8 })], []);
    expect(out.vector).toStrictEqual({ s: 7 });
    expect(out.reasons).toStrictEqual(new Map([["s", "ScaleUpLimit"]]));
    expect(out.blocked).toStrictEqual(new Map([["PacingBounded", "s: ScaleUpLimit holds 7 of 8 recommended"]]));
  });

  it("an abort cooldown is reported as ScaleDownAborted", () => {
    const out = planComponent(
      [rolePlan({ name: "s", current: 3, rec: 1, downHold: { reason: "AbortCooldown", message: "" } })],
      [],
    );
    expect(out.blocked).toStrictEqual(
      new Map([["ScaleDownAborted", "s: scale-down waits for the cooldown after an aborted retirement"]]),
    );
  });

  it("reports nothing for an undriven role or a recommendation reached", () => {
    expect(planComponent([rolePlan({ name: "s", current: 3, rec: 8, scaled: false })], []).blocked.size).toBe(0);
    expect(planComponent([rolePlan({ name: "s", current: 3, rec: 4 })], []).blocked.size).toBe(0);
  });

  it("when no vector satisfies the bands, every role holds and RatioConflict names the bands", () => {
    const out = planComponent(
      [
        rolePlan({ name: "p", current: 2, rec: 2, upHold: { reason: "PendingAdmission", message: "" } }),
        rolePlan({ name: "d", current: 2, rec: 6, up: 4 }),
      ],
      [{ numerator: "d", denominator: "p", max: 1 }],
    );
    expect(out.vector).toStrictEqual({ p: 2, d: 2 });
    expect(out.blocked.get("RatioConflict")).toBe(undefined);
    const stuck = planComponent(
      [
        rolePlan({ name: "p", current: 2, rec: 2, scaled: false }),
        rolePlan({ name: "d", current: 5, rec: 5, scaled: false }),
      ],
      [
        { numerator: "d", denominator: "p", max: 2 },
        { numerator: "p", denominator: "d", min: 0.1 },
        { numerator: "d", denominator: "zz", min: 1 },
      ],
    );
    expect(stuck.vector).toStrictEqual({ p: 2, d: 5 });
    expect(stuck.blocked.get("RatioConflict")).toBe(
      "no vector satisfies d/p <= 2, p/d >= 0.1 within pacing and guards; p, d hold",
    );
    expect(stuck.reasons).toStrictEqual(
      new Map([
        ["p", "Algo"],
        ["d", "Algo"],
      ]),
    );
  });

  it("bands of other components are ignored", () => {
    const out = planComponent(
      [rolePlan({ name: "s", current: 3, rec: 5 })],
      [{ numerator: "a", denominator: "b", max: 1 }],
    );
    expect(out.vector).toStrictEqual({ s: 5 });
  });
});

describe("planComponents", () => {
  it("plans each component, keeps roles it does not plan, and keeps the first message per reason", () => {
    const plans = new Map([
      ["a", rolePlan({ name: "a", current: 3, rec: 8 })],
      ["b", rolePlan({ name: "b", current: 2, rec: 8 })],
    ]);
    const out = planComponents(["a", "b"], plans, [], { a: 3, b: 2, other: 7 });
    expect(out.vector).toStrictEqual({ a: 7, b: 6, other: 7 });
    expect(out.reasons).toStrictEqual(
      new Map([
        ["a", "ScaleUpLimit"],
        ["b", "ScaleUpLimit"],
      ]),
    );
    expect(out.blocked).toStrictEqual(new Map([["PacingBounded", "a: ScaleUpLimit holds 7 of 8 recommended"]]));
  });
});
