/** Ratio coupling: the preferred ratio, and roles that follow their driver. */
import { describe, expect, it } from "vitest";
import { preferredRatio, withCoupledRoles } from "../../../src/core/algorithms/coupling.js";
import { algorithmReasons } from "../../../src/core/algorithms/reasons.js";
import type { RoleRecommendation } from "../../../src/core/algorithms/types.js";
import { observation, role } from "./fixtures.js";

describe("ratio coupling", () => {
  const driver = (replicas: number, hold?: string): RoleRecommendation => ({
    role: "prefill",
    scaled: true,
    replicas,
    reason: "TokenThroughput",
    ...(hold === undefined ? {} : { scaleDownHold: { reason: hold } }),
  });
  const roles = [role("prefill", "Prefill", 4, observation()), role("encode", "Encode", 10, observation())];

  it("the preferred ratio: the one bound given, else the middle", () => {
    const base = { numeratorRole: "encode", denominatorRole: "prefill" };
    expect(preferredRatio({ ...base, max: "2" })).toBe(2);
    expect(preferredRatio({ ...base, min: "0.5" })).toBe(0.5);
    expect(preferredRatio({ ...base, min: "0.5", max: "1.5" })).toBe(1);
    expect(preferredRatio(base)).toBeUndefined();
  });

  it("skips ratios that give no positive value and takes the next", () => {
    const ratios = [
      { numeratorRole: "encode", denominatorRole: "prefill" },
      { numeratorRole: "encode", denominatorRole: "prefill", target: "0" },
      { numeratorRole: "encode", denominatorRole: "prefill", target: "0.5" },
    ];
    const [, encode] = withCoupledRoles(roles, ratios, new Map([["prefill", driver(5)]]));
    expect(encode).toEqual({ role: "encode", scaled: true, replicas: 3, reason: algorithmReasons.ratioCoupled });
  });

  it("follows an unheld driver down; a held driver holds it at its count", () => {
    const ratios = [{ numeratorRole: "encode", denominatorRole: "prefill", target: "0.5" }];
    const [, down] = withCoupledRoles(roles, ratios, new Map([["prefill", driver(2)]]));
    expect(down).toEqual({ role: "encode", scaled: true, replicas: 1, reason: algorithmReasons.ratioCoupled });
    const [, held] = withCoupledRoles(roles, ratios, new Map([["prefill", driver(2, "Panic")]]));
    expect(held).toEqual({
      role: "encode",
      scaled: true,
      replicas: 10,
      reason: algorithmReasons.ratioCoupled,
      scaleDownHold: { reason: "Panic" },
    });
  });
});
