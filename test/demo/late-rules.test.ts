/** Which rule kept the demo's fleet below a late first token's need (`ruleAt`). */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { validateScaler } from "../../src/core/api/validation.js";
import { demoRules, ruleAt, type DemoRules, type Look } from "../../demo/late-rules.js";
import type { RoleView } from "../../demo/observer.js";

const root = join(import.meta.dirname, "..", "..");

const role = (name: string, committed: number, ready: number, reason: string, recommended = committed): RoleView => ({
  name,
  committed,
  ready,
  recommended,
  constrained: committed,
  reason,
  signalState: "Fresh",
  demandTokensPerSecond: 1000,
});

const rules: DemoRules = {
  coldStartSeconds: 3,
  intervalSeconds: 5,
  panicWindowSeconds: 10,
  maxReplicasByRole: { prefill: 16, decode: 16 },
  scaleUpStep: "maxStepReplicas 4, maxStepPercent 100",
  perReplicaTargets: "prefillTargetTokensPerSecond 3640, decodeTargetTokensPerSecond 154",
};

/** One look a second from `atMs`, each with the roles given. */
const looks = (...roles: (readonly RoleView[])[]): Look[] =>
  roles.map((r, i) => ({ atMs: 10_000 + 1000 * i, roles: r }));

describe("the rule that kept the fleet below a late first token's need", () => {
  const steady = [role("prefill", 4, 4, "TokenThroughput"), role("decode", 2, 2, "TokenThroughput")];
  const quiet = Array.from({ length: 6 }, () => steady);

  it("is the replica start-up while a committed replica is not ready, named with the cold start", () => {
    const starting = [role("prefill", 8, 4, "Panic"), role("decode", 2, 2, "TokenThroughput")];
    expect(ruleAt(looks(starting), 0, rules)).toBe(
      "replica start-up: committed replicas not ready yet, a replica takes 3 s to start",
    );
  });

  it("is maxReplicas when a role's reason says so, naming the role and its ceiling", () => {
    const capped = [role("prefill", 16, 16, "MaxReplicas"), role("decode", 2, 2, "TokenThroughput")];
    expect(ruleAt(looks(capped), 0, rules)).toBe("maxReplicas: prefill at its maxReplicas of 16");
  });

  it("is maxReplicas when the next pass asked for more than the ceiling a role already stood at", () => {
    const atCeiling = [role("prefill", 16, 16, "TokenThroughput"), role("decode", 2, 2, "TokenThroughput")];
    const later = [role("prefill", 16, 16, "MaxReplicas", 30), role("decode", 2, 2, "TokenThroughput")];
    expect(ruleAt(looks(atCeiling, ...quiet.slice(1), later), 0, rules)).toBe(
      "maxReplicas: prefill at its maxReplicas of 16",
    );
  });

  it("is the scale-up pacing when a role's reason is ScaleUpLimit, with the step the spec allows", () => {
    const paced = [role("prefill", 8, 8, "ScaleUpLimit"), role("decode", 2, 2, "TokenThroughput")];
    expect(ruleAt(looks(paced), 0, rules)).toBe(
      "scale-up pacing: one pass adds at most what behavior.scaleUp allows (maxStepReplicas 4, maxStepPercent 100)",
    );
  });

  it("is no reading yet while a role has no decision from the fleet's series", () => {
    const waiting = [role("prefill", 2, 2, "WaitingForMetrics"), role("decode", 2, 2, "")];
    expect(ruleAt(looks(waiting), 0, rules)).toMatch(/^no reading yet/);
  });

  it("is the reaction time when the first look a pass after the arrival asked for more than the fleet it met", () => {
    // Arrival at 10 s; a pass interval and a look later is 16 s, the seventh look.
    const later = [role("prefill", 4, 4, "Panic", 9), role("decode", 2, 2, "TokenThroughput")];
    const text = ruleAt(looks(...quiet, later), 0, rules);
    expect(text).toBe(
      "reaction time: they came between passes (sampling.intervalSeconds 5, demand read over panicWindowSeconds 10), and met the fleet the pass before had sized",
    );
    // A request for more seen before a full pass had passed does not count: the look at 15 s is too early.
    const early = looks(...quiet.slice(0, 5), later, steady, steady);
    expect(ruleAt(early, 0, rules)).toMatch(/^the per-replica target/);
  });

  it("is the per-replica target when the next pass kept the fleet it met", () => {
    expect(ruleAt(looks(...quiet, steady), 0, rules)).toBe(
      "the per-replica target: the next pass judged the fleet they met enough (prefillTargetTokensPerSecond 3640, decodeTargetTokensPerSecond 154)",
    );
    // Without a later look, the last one is the next pass as far as the run saw.
    expect(ruleAt(looks(steady), 0, rules)).toMatch(/^the per-replica target/);
    expect(ruleAt([], 0, rules)).toMatch(/^no look yet/);
  });

  it("takes its names and figures from the demo's scaler file, as the schema defaults it", () => {
    const checked = validateScaler(parse(readFileSync(join(root, "docs", "examples", "demo", "scaler.yaml"), "utf8")));
    if (!checked.ok) throw new Error("the demo scaler is invalid");
    const named = demoRules(checked.value.spec, 3);
    const scaler = parse(readFileSync(join(root, "docs", "examples", "demo", "scaler.yaml"), "utf8")) as {
      spec: {
        roles: { name: string; maxReplicas: number }[];
        algorithm: { tokenThroughput: { prefillTargetTokensPerSecond: string; decodeTargetTokensPerSecond: string } };
      };
    };
    const tt = scaler.spec.algorithm.tokenThroughput;
    expect(named).toEqual({
      coldStartSeconds: 3,
      intervalSeconds: 5,
      panicWindowSeconds: 10,
      maxReplicasByRole: Object.fromEntries(scaler.spec.roles.map((r) => [r.name, r.maxReplicas])),
      scaleUpStep: "maxStepReplicas 4, maxStepPercent 100",
      perReplicaTargets: `prefillTargetTokensPerSecond ${tt.prefillTargetTokensPerSecond}, decodeTargetTokensPerSecond ${tt.decodeTargetTokensPerSecond}`,
    });
  });
});
