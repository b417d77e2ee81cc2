/**
 * Admission checks that need the target ModelDeployment. They are skipped
 * while the target is absent: a scaler may precede its target, and the
 * controller reports `TargetNotFound` until it appears.
 *
 * Naming rule checked by `target-name-length`: the operator names replica
 * `k` (zero-based ordinal) of role `r` in deployment `d` as the group
 * `d-r-k`, and member `i` (zero-based) of that group as `d-r-k-i`. Both are
 * label values, so both must fit 63 characters. The longest names occur at
 * the highest ordinal, `maxReplicas - 1`, and the highest member index,
 * `size - 1` (size defaults to 1). The member name is always the longer one,
 * so it is the name checked.
 */
import type { ModelDeployment, RoleKind, TargetRole } from "./model-deployment.js";
import { problem, type PathSegment, type Problem } from "./problem.js";
import { hasField, readField, type RoleView, type SpecView } from "./rules/view.js";

/** Kubernetes label values are at most 63 characters. */
export const labelValueMaxChars = 63;

/** The longest generated member name of a role at its maximum replica count. */
export function longestMemberName(deployment: string, role: string, maxReplicas: number, size = 1): string {
  return `${deployment}-${role}-${maxReplicas - 1}-${Math.max(size, 1) - 1}`;
}

/** Capacity fields per role kind; Encode has none (it follows a ratio). */
const capacityFields: Readonly<Record<Exclude<RoleKind, "Encode">, { target: string; forecast: string }>> = {
  Server: { target: "serverTargetTokensPerSecond", forecast: "serverTokenCapacityPerReplica" },
  Prefill: { target: "prefillTargetTokensPerSecond", forecast: "prefillTokenCapacityPerReplica" },
  Decode: { target: "decodeTargetTokensPerSecond", forecast: "decodeTokenCapacityPerReplica" },
};

interface Scaled {
  readonly view: RoleView & { readonly name: string };
  readonly target: TargetRole;
}

interface Context {
  readonly spec: SpecView;
  readonly target: ModelDeployment;
  readonly scaled: readonly Scaled[];
}

function namePath(r: RoleView): PathSegment[] {
  return ["spec", "roles", r.index, "name"];
}

function targetName(ctx: Context): string {
  return ctx.target.metadata.name;
}

function checkTargetName(ctx: Context): Problem[] {
  const name = ctx.spec.targetRefName;
  return name === undefined || name === targetName(ctx)
    ? []
    : [
        problem(
          "target-name",
          ["spec", "targetRef", "name"],
          name,
          `does not name the supplied target ${JSON.stringify(targetName(ctx))}`,
        ),
      ];
}

function checkEveryTargetRoleBounded(ctx: Context): Problem[] {
  const bounded = new Set(ctx.spec.roles.map((r) => r.name));
  return ctx.target.spec.roles
    .filter((t) => !bounded.has(t.name))
    .map((t) =>
      problem(
        "target-roles-bounded",
        ["spec", "roles"],
        t.name,
        `has no entry for target role ${JSON.stringify(t.name)}; every target role needs bounds`,
      ),
    );
}

function checkScaledRolesExist(ctx: Context): Problem[] {
  const onTarget = new Set(ctx.target.spec.roles.map((t) => t.name));
  return ctx.spec.roles.flatMap((r) =>
    r.name === undefined || onTarget.has(r.name)
      ? []
      : [
          problem(
            "target-roles-exist",
            namePath(r),
            r.name,
            `is not a role of ModelDeployment ${JSON.stringify(targetName(ctx))}`,
          ),
        ],
  );
}

function checkUnmanagedRoles(ctx: Context): Problem[] {
  return ctx.target.spec.roles.flatMap((t) => {
    const why =
      t.command !== undefined
        ? "has a custom command, so its serving signals are unmanaged"
        : t.elasticEp !== undefined
          ? "uses elasticEp, whose width grows one collective rather than adding replicas"
          : undefined;
    if (why === undefined) return [];
    const listed = ctx.scaled.find((s) => s.target.name === t.name);
    const path: PathSegment[] = listed === undefined ? ["spec", "targetRef", "name"] : namePath(listed.view);
    return [
      problem(
        "target-unmanaged-roles",
        path,
        listed === undefined ? targetName(ctx) : t.name,
        `target role ${JSON.stringify(t.name)} ${why}; the scaler refuses it`,
      ),
    ];
  });
}

function checkCapacities(ctx: Context): Problem[] {
  const { type, tokenThroughput, predictive } = ctx.spec.algorithm;
  if (type !== "TokenThroughput" && type !== "Predictive") return [];
  const problems: Problem[] = [];
  const kinds = new Map<Exclude<RoleKind, "Encode">, string>();
  for (const s of ctx.scaled)
    if (s.target.kind !== "Encode" && !kinds.has(s.target.kind)) kinds.set(s.target.kind, s.view.name);
  const requireField = (block: unknown, path: PathSegment[], key: string, kind: string, role: string): void => {
    if (!hasField(block, key))
      problems.push(
        problem(
          "target-capacities",
          [...path, key],
          undefined,
          `is required: scaled role ${JSON.stringify(role)} has kind ${kind}`,
        ),
      );
  };
  for (const [kind, role] of kinds) {
    const fields = capacityFields[kind];
    if (type === "TokenThroughput") {
      requireField(tokenThroughput, ["spec", "algorithm", "tokenThroughput"], fields.target, kind, role);
    } else {
      requireField(
        readField(predictive, "tokenThroughput"),
        ["spec", "algorithm", "predictive", "tokenThroughput"],
        fields.target,
        kind,
        role,
      );
      requireField(predictive, ["spec", "algorithm", "predictive"], fields.forecast, kind, role);
    }
  }
  return problems;
}

function checkEncodeCoupled(ctx: Context): Problem[] {
  const { type } = ctx.spec.algorithm;
  if (type !== "TokenThroughput" && type !== "Predictive") return [];
  const kindOf = new Map(ctx.scaled.map((s) => [s.view.name, s.target.kind]));
  const servesTokens = (role: string | undefined): boolean => {
    const kind = role === undefined ? undefined : kindOf.get(role);
    return kind === "Prefill" || kind === "Decode";
  };
  return ctx.scaled.flatMap((s) => {
    if (s.target.kind !== "Encode") return [];
    const coupled = ctx.spec.ratios.some(
      (r) =>
        (r.numeratorRole === s.view.name && servesTokens(r.denominatorRole)) ||
        (r.denominatorRole === s.view.name && servesTokens(r.numeratorRole)),
    );
    return coupled
      ? []
      : [
          problem(
            "target-encode-coupled",
            namePath(s.view),
            s.view.name,
            "is an Encode role and needs a direct ratio to a Prefill or Decode role",
          ),
        ];
  });
}

function checkNameLength(ctx: Context): Problem[] {
  return ctx.scaled.flatMap((s) => {
    if (s.view.maxReplicas === undefined) return [];
    const name = longestMemberName(targetName(ctx), s.view.name, s.view.maxReplicas, s.target.size ?? 1);
    if (name.length <= labelValueMaxChars) return [];
    return [
      problem(
        "target-name-length",
        ["spec", "roles", s.view.index, "maxReplicas"],
        s.view.maxReplicas,
        `gives the member name ${JSON.stringify(name)} (${name.length} characters), above the ${labelValueMaxChars}-character label limit; shorten the deployment or role name or lower maxReplicas`,
      ),
    ];
  });
}

/** Every check of this file, in the order problems are reported. */
export const targetChecks = [
  { id: "target-name", summary: "The supplied target is the one `targetRef.name` names.", check: checkTargetName },
  {
    id: "target-roles-bounded",
    summary: "Every target role has an entry in `roles[]`.",
    check: checkEveryTargetRoleBounded,
  },
  {
    id: "target-roles-exist",
    summary: "Every entry of `roles[]` is a role of the target.",
    check: checkScaledRolesExist,
  },
  {
    id: "target-unmanaged-roles",
    summary: "Target roles with a custom `command` or `elasticEp` are refused.",
    check: checkUnmanagedRoles,
  },
  {
    id: "target-capacities",
    summary:
      "TokenThroughput: a target per scaled non-Encode kind; Predictive: both the fallback target and the forecast capacity.",
    check: checkCapacities,
  },
  {
    id: "target-encode-coupled",
    summary: "With token algorithms, an Encode role has a direct ratio to a Prefill or Decode role.",
    check: checkEncodeCoupled,
  },
  {
    id: "target-name-length",
    summary: "Generated member names at `maxReplicas` fit the 63-character label limit.",
    check: checkNameLength,
  },
] as const;

/** Runs every target check; pre: `target` parsed with `ModelDeploymentSchema`. */
export function checkAgainstTarget(spec: SpecView, target: ModelDeployment): Problem[] {
  const byName = new Map(target.spec.roles.map((t) => [t.name, t]));
  const seen = new Set<string>();
  const scaled: Scaled[] = [];
  for (const r of spec.roles) {
    if (r.name === undefined || seen.has(r.name)) continue;
    seen.add(r.name);
    const t = byName.get(r.name);
    if (t !== undefined) scaled.push({ view: { ...r, name: r.name }, target: t });
  }
  const ctx: Context = { spec, target, scaled };
  return targetChecks.flatMap((c) => c.check(ctx));
}
