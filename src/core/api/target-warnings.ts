/**
 * Admission warnings that need the target ModelDeployment (never refusals;
 * those are `target-checks.ts`): the scaler is admitted, and as written it
 * would not do what its fields say, so `kubectl apply` says why.
 *
 * - `target-bounds-current`: a scaled role's bounds exclude the count the
 *   target runs now. The specification stops planning there (`BoundsConflict`,
 *   the gate's rule `countOutsideBounds` in `../planner/bounds.ts`): raising
 *   `minReplicas` above the running count does not scale the target up, it
 *   blocks the scaler until the target is scaled into the bounds. The count
 *   may change before the controller's next pass, so this warns, and the
 *   controller's `Blocked` condition says the same at run time.
 * - `target-queue-time-judged`: `queueTimeTargetMilliseconds` is written and
 *   no scaled role is of a kind judged on queue time (Prefill, Server;
 *   `judgedOnQueueTime`), so the field changes nothing.
 *
 * Kept within the 256 ASCII characters Kubernetes shows of a warning, and
 * without quotes, which the warning header escapes. Names are DNS labels.
 */
import { judgedOnQueueTime } from "../algorithms/queue-time-target.js";
import { tokenThroughputBlockOf } from "../algorithms/windows.js";
import { countOutsideBounds } from "../planner/bounds.js";
import type { ModelDeployment } from "./model-deployment.js";
import { problem, type PathSegment, type Problem } from "./problem.js";
import type { ScalerSpec } from "./scaler.js";

interface Context {
  readonly spec: ScalerSpec;
  readonly target: ModelDeployment;
}

function boundsExcludeCurrent({ spec, target }: Context): Problem[] {
  const running = new Map(target.spec.roles.map((t) => [t.name, t.replicas]));
  return spec.roles.flatMap((role, index) => {
    const replicas = running.get(role.name);
    if (replicas === undefined) return [];
    const side = countOutsideBounds(replicas, role);
    if (side === undefined) return [];
    const field = side === "below" ? "minReplicas" : "maxReplicas";
    return [
      problem(
        "target-bounds-current",
        ["spec", "roles", index, field],
        role[field],
        `excludes the ${replicas} replicas role ${role.name} runs now: planning stops (BoundsConflict) until the target's count is in [${role.minReplicas}, ${role.maxReplicas}]; scale the target first or widen the bounds`,
      ),
    ];
  });
}

/** The written queue-time target and its path, in the TokenThroughput block the algorithm reads. */
function queueTimeTarget(spec: ScalerSpec): { readonly value: string; readonly path: PathSegment[] } | undefined {
  const block = tokenThroughputBlockOf(spec);
  const value = block.params?.queueTimeTargetMilliseconds;
  return value === undefined ? undefined : { value, path: ["spec", ...block.path, "queueTimeTargetMilliseconds"] };
}

function queueTimeTargetJudged({ spec, target }: Context): Problem[] {
  const written = queueTimeTarget(spec);
  if (written === undefined) return [];
  const scaled = new Set(spec.roles.map((r) => r.name));
  const kinds = [...new Set(target.spec.roles.filter((t) => scaled.has(t.name)).map((t) => t.kind))];
  if (kinds.some(judgedOnQueueTime)) return [];
  return [
    problem(
      "target-queue-time-judged",
      written.path,
      written.value,
      `changes nothing: no scaled role of ${target.metadata.name} is Prefill or Server, the kinds that wait for a first token (scaled: ${kinds.join(", ") || "none"})`,
    ),
  ];
}

/** Every warning of this file, in the order reported. */
export const targetWarnings = [
  {
    id: "target-bounds-current",
    summary: "A scaled role's bounds contain the count the target runs now (else planning stops with BoundsConflict).",
    check: boundsExcludeCurrent,
  },
  {
    id: "target-queue-time-judged",
    summary: "`queueTimeTargetMilliseconds` is written only where a scaled role is Prefill or Server.",
    check: queueTimeTargetJudged,
  },
] as const;

/** The target warnings of a defaulted spec; pre: `target` parsed with `ModelDeploymentSchema`. */
export function warnAgainstTarget(spec: ScalerSpec, target: ModelDeployment): Problem[] {
  return targetWarnings.flatMap((w) => w.check({ spec, target }));
}
