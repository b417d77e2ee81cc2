/**
 * Which rule kept the demo's fleet below what a late first token needed, by
 * name and setting, so a reader of the summary knows what would have to change.
 * Each late first token is charged to the look at (or before) its arrival
 * (`lateByArrival`); that look, and the first look after the next pass could
 * have seen the arrival, decide the rule:
 *
 * 1. replica start-up: a committed replica was not ready yet (the cold start);
 * 2. maxReplicas: a role was at its ceiling, by its status reason or because
 *    the next pass asked for more than the ceiling it already stood at;
 * 3. scale-up pacing: a role's status reason was `ScaleUpLimit`;
 * 4. no reading yet: a role had no decision from a reading of the fleet;
 * 5. reaction time: the next pass asked for more than the fleet the arrival
 *    met, so the demand came between passes (`sampling.intervalSeconds`) and
 *    was read only over the panic window after it;
 * 6. the per-replica target: the next pass judged the fleet the arrival met
 *    enough, so only a lower per-replica target (more headroom) would have
 *    grown it.
 *
 * Pure: the looks are passed in.
 */
import { quantityValue } from "../src/core/api/quantity.js";
import type { ParsedScalerSpec } from "../src/core/api/scaler.js";
import type { RoleView } from "./observer.js";

/** The settings the rules are named with, as the scaler's defaulted spec and the demo's world set them. */
export interface DemoRules {
  readonly coldStartSeconds: number;
  readonly intervalSeconds: number;
  readonly panicWindowSeconds: number | undefined;
  readonly maxReplicasByRole: Readonly<Record<string, number>>;
  /** How one pass may grow a role, in the spec's words (step policy, or both default bounds). */
  readonly scaleUpStep: string;
  /** The per-replica targets by role kind field, e.g. `prefillTargetTokensPerSecond 3640`. */
  readonly perReplicaTargets: string;
}

/** One look of the observer: when, and each role as the target and the scaler's status showed it. */
export interface Look {
  readonly atMs: number;
  readonly roles: readonly RoleView[];
}

/** Reasons that mean the scaler had not yet decided from a reading of the fleet. */
const unread: ReadonlySet<string> = new Set(["", "NoReadyReplicas", "WaitingForMetrics"]);

/** The rule names and settings of a scaler's defaulted spec in the demo's world. */
export function demoRules(spec: ParsedScalerSpec, coldStartSeconds: number): DemoRules {
  const up = spec.behavior.scaleUp;
  const algorithm = spec.algorithm;
  const tt = algorithm.type === "TokenThroughput" ? algorithm.tokenThroughput : undefined;
  const targets = Object.entries(tt ?? {})
    .filter(([key, value]) => key.endsWith("TargetTokensPerSecond") && value !== undefined)
    .map(([key, value]) => `${key} ${quantityValue(value as string | number)}`);
  return {
    coldStartSeconds,
    intervalSeconds: spec.sampling.intervalSeconds,
    panicWindowSeconds: tt?.panicWindowSeconds,
    maxReplicasByRole: Object.fromEntries(spec.roles.map((r) => [r.name, r.maxReplicas])),
    scaleUpStep:
      up.stepPolicy === undefined
        ? `maxStepReplicas ${up.maxStepReplicas}, maxStepPercent ${up.maxStepPercent}`
        : `stepPolicy ${up.stepPolicy.type} ${up.stepPolicy.value}`,
    perReplicaTargets: targets.join(", ") || `${algorithm.type}'s per-replica figure`,
  };
}

/** The first look at or after `atMs`; the last look when none is that late. */
function lookFrom(looks: readonly Look[], atMs: number): Look | undefined {
  return looks.find((l) => l.atMs >= atMs) ?? looks.at(-1);
}

/**
 * The rule that kept the fleet below a late first token's need, for a token that arrived at `looks[index]`.
 * "The next pass" is the first look at least one pass interval and one look (1 s) after the arrival's look.
 */
export function ruleAt(looks: readonly Look[], index: number, rules: DemoRules): string {
  const met = looks[index];
  if (met === undefined) return "no look yet: the demo had not read the scaler";
  const starting = met.roles.filter((r) => r.ready !== undefined && r.committed !== undefined && r.ready < r.committed);
  if (starting.length > 0)
    return `replica start-up: committed replicas not ready yet, a replica takes ${rules.coldStartSeconds} s to start`;
  const ceiling = (r: RoleView): number | undefined => rules.maxReplicasByRole[r.name];
  const atMax = met.roles.filter((r) => r.reason === "MaxReplicas");
  if (atMax.length > 0) return maxReplicasRule(atMax, rules);
  if (met.roles.some((r) => r.reason === "ScaleUpLimit"))
    return `scale-up pacing: one pass adds at most what behavior.scaleUp allows (${rules.scaleUpStep})`;
  if (met.roles.some((r) => unread.has(r.reason)))
    return "no reading yet: the scaler had not read the fleet when they arrived";
  const next = lookFrom(looks, met.atMs + (rules.intervalSeconds + 1) * 1000);
  const wanted = met.roles.filter((r) => {
    const later = next?.roles.find((x) => x.name === r.name)?.recommended;
    return later !== undefined && r.committed !== undefined && later > r.committed;
  });
  const capped = wanted.filter((r) => r.committed !== undefined && r.committed >= (ceiling(r) ?? Infinity));
  if (capped.length > 0) return maxReplicasRule(capped, rules);
  if (wanted.length > 0)
    return (
      `reaction time: they came between passes (sampling.intervalSeconds ${rules.intervalSeconds}` +
      `${rules.panicWindowSeconds === undefined ? "" : `, demand read over panicWindowSeconds ${rules.panicWindowSeconds}`}), ` +
      "and met the fleet the pass before had sized"
    );
  return `the per-replica target: the next pass judged the fleet they met enough (${rules.perReplicaTargets})`;
}

function maxReplicasRule(roles: readonly RoleView[], rules: DemoRules): string {
  return `maxReplicas: ${roles.map((r) => `${r.name} at its maxReplicas of ${rules.maxReplicasByRole[r.name] ?? "?"}`).join(", ")}`;
}
