/**
 * One planning pass: (scaler, target, observations, now) -> (status, commit).
 * The controller, the simulator, `mds-scaler plan` and the tests all call
 * this function; nothing else decides replica counts.
 *
 * Order of a pass:
 *   1. binding: may the scaler plan, may it commit, under which term;
 *   2. bounds and ratio bands must contain the current vector;
 *   3. the algorithm recommends; history records the recommendation;
 *   4. every role gets an allowed interval (bounds, pacing, guards) and a
 *      stabilized wish; each ratio component picks one direction and is
 *      projected onto its bands;
 *   5. recoveries take precedence over that plan, one write per pass: an
 *      aborted retirement is restored, a timed-out cohort is rolled back, a
 *      rebalance transaction advances, or a donor is released;
 *   6. otherwise the planned vector is committed when it differs.
 */
import type { ModelDeployment, TargetRole, TargetRoleStatus } from "../api/model-deployment.js";
import type {
  LastScaleDown,
  PendingCohort,
  RebalanceStatus,
  ReplicaVector,
  RoleStatus,
  ScalerStatus,
} from "../api/scaler.js";
import type { AlgorithmResult, AlgorithmRoleInput, RoleRecommendation } from "../algorithms/types.js";
import { decideBinding, type BindingOutcome } from "../binding/binding.js";
import type { RoleObservation } from "../signals/types.js";
import { algorithmFor } from "./algorithm.js";
import { checkBounds, clampToBounds, type RoleBoundsRange } from "./bounds.js";
import { blockedCondition, setConditions, type BlockedReason, type ConditionUpdate } from "./conditions.js";
import { decisionID } from "./decision.js";
import {
  activeRetirement,
  cohortState,
  growthHold,
  parseTimeMs,
  restoreVector,
  rollbackVector,
  scaleDownAborted,
  scaleDownHold,
  type CohortState,
  type Hold,
} from "./guards.js";
import {
  continuousHistory,
  historyGapSeconds,
  historyHorizonSeconds,
  recordHistory,
  scaleDownStep,
  scaleUpStep,
  stabilize,
  type HistorySample,
} from "./pacing.js";
import {
  describeBand,
  projectComponent,
  ratioBands,
  ratioComponents,
  violatedBands,
  type RatioBand,
} from "./ratios.js";
import { chooseDonation, donorReleased, seekingDonor, stepViolation, transactionInFlight } from "./rebalance.js";
import { controlPlaneMoved, historyFromStatus, historyToStatus, observedRoleStatus } from "./status.js";
import type { Commit, CommitReason, PlanInput, PlanResult } from "./types.js";

const iso = (ms: number): string => new Date(ms).toISOString();

/** Reasons that mean a step limit or guard held the recommendation (`Blocked=PacingBounded`). */
const pacingReasons: ReadonlySet<string> = new Set([
  "ScaleUpLimit",
  "ScaleDownLimit",
  "ScaleUpStabilization",
  "ScaleDownStabilization",
  "PendingAdmission",
  "NoReadyReplicas",
  "IncompleteCoverage",
  "RetirementActive",
  "DecodePostScaleUpGrace",
  "Panic",
  "LatencyGuardHold",
  "PredictiveConsolidationHold",
  "WaitingForMetrics",
]);

/** Status without anything that belonged to a replaced target. */
function withoutTargetState(status: ScalerStatus | undefined): ScalerStatus {
  if (status === undefined) return {};
  const {
    lastCommit: _c,
    pendingCohort: _p,
    rebalance: _r,
    lastScaleDown: _s,
    predictors: _pr,
    roles: _ro,
    binding: _b,
    ...rest
  } = status;
  return rest;
}

function vectorOf(roles: readonly TargetRole[]): ReplicaVector {
  const out: ReplicaVector = {};
  for (const role of roles) out[role.name] = role.replicas;
  return out;
}

function sameVector(a: ReplicaVector, b: ReplicaVector): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const key of keys) if (a[key] !== b[key]) return false;
  return true;
}

function missingObservation(status: TargetRoleStatus | undefined): RoleObservation {
  return { readyReplicas: status?.ready ?? 0, sampledReplicas: 0, signalState: "Missing" };
}

/** Everything one pass needs about one role. */
interface RolePlan {
  readonly name: string;
  readonly role: TargetRole;
  readonly current: number;
  readonly range: RoleBoundsRange;
  readonly observation: RoleObservation | undefined;
  readonly recommendation: RoleRecommendation | undefined;
  readonly scaled: boolean;
  /** Driven only by a ratio to a driven role (`RatioCoupled`): its own signals gate nothing. */
  readonly coupled: boolean;
  /** Bounds-clamped recommendation (what history records). */
  readonly clamped: { readonly value: number; readonly reason: string };
  /** After the stabilization windows. */
  readonly stabilized: { readonly value: number; readonly reason: string };
  readonly history: HistorySample[];
  readonly upHold: Hold | undefined;
  readonly downHold: Hold | undefined;
  readonly upStepReplicas: number;
  readonly downStepReplicas: number;
  readonly lastScaleUpTime: string | undefined;
}

interface ComponentOutcome {
  readonly vector: ReplicaVector;
  /** Role -> reason for roles whose planned count differs from the raw recommendation. */
  readonly reasons: Map<string, string>;
  readonly blocked: Map<BlockedReason, string>;
}

/** Where a role's planned count came from when it is not the raw recommendation. */
function explain(
  plan: RolePlan,
  planned: number,
  lo: number,
  hi: number,
  direction: "up" | "down",
  projected: "exact" | "moved" | "conflict",
): string {
  const raw = plan.recommendation?.replicas;
  const algorithmReason = plan.recommendation?.reason ?? "NotScaled";
  if (raw === planned) return algorithmReason;
  if (!plan.scaled) return algorithmReason;
  if (projected === "conflict") return "RatioConflict";
  if (planned === plan.clamped.value && plan.clamped.reason !== "") return plan.clamped.reason;
  if (planned === plan.stabilized.value && plan.stabilized.reason !== "") return plan.stabilized.reason;
  const wanted = plan.stabilized.value;
  const boxed = Math.min(Math.max(wanted, lo), hi);
  if (planned === boxed && planned !== wanted) {
    if (wanted > hi) {
      if (plan.upHold !== undefined) return plan.upHold.reason;
      if (direction === "down") return "ComponentScalingDown";
      return "ScaleUpLimit";
    }
    if (plan.downHold !== undefined) return plan.downHold.reason;
    if (direction === "up") return "ComponentScalingUp";
    return "ScaleDownLimit";
  }
  if (projected === "moved") return "RatioCoupled";
  return plan.stabilized.reason !== "" ? plan.stabilized.reason : algorithmReason;
}

/** Plans one ratio component: one direction, allowed intervals, projection. */
function planComponent(members: readonly RolePlan[], bands: readonly RatioBand[]): ComponentOutcome {
  // The spec: "an upward recommendation gives the component an upward direction". The
  // bounds-clamped recommendation, not the paced count: a role whose growth waits for its
  // window still keeps its partners from shrinking, and a role pinned at its maximum does not.
  const direction: "up" | "down" = members.some((m) => m.scaled && m.clamped.value > m.current) ? "up" : "down";
  const boxes = members.map((m) => {
    if (!m.scaled) return { lo: m.current, hi: m.current };
    let hi = Math.min(m.range.max, m.current + m.upStepReplicas);
    let lo = Math.max(m.range.min, m.current - m.downStepReplicas);
    if (m.upHold !== undefined || direction === "down") hi = m.current;
    if (m.downHold !== undefined || direction === "up") lo = m.current;
    return { lo: Math.min(lo, m.current), hi: Math.max(hi, m.current) };
  });
  const names = new Set(members.map((m) => m.name));
  const componentBands = bands.filter((b) => names.has(b.numerator) && names.has(b.denominator));
  const roles = members.map((m, i) => ({
    name: m.name,
    lo: boxes[i]?.lo ?? m.current,
    hi: boxes[i]?.hi ?? m.current,
    target: m.scaled ? m.stabilized.value : m.current,
    current: m.current,
  }));
  const result =
    componentBands.length === 0
      ? { vector: roles.map((r) => Math.min(Math.max(r.target, r.lo), r.hi)), nodes: 0, limitReached: false }
      : projectComponent(roles, componentBands);
  const vector: ReplicaVector = {};
  const reasons = new Map<string, string>();
  const blocked = new Map<BlockedReason, string>();
  const conflict = result.vector === undefined;
  if (conflict) {
    blocked.set(
      "RatioConflict",
      `no vector satisfies ${componentBands.map(describeBand).join(", ")} within pacing and guards; ${[...names].join(", ")} hold`,
    );
  }
  members.forEach((m, i) => {
    const planned = conflict ? m.current : (result.vector?.[i] ?? m.current);
    vector[m.name] = planned;
    const box = boxes[i] ?? { lo: m.current, hi: m.current };
    const boxed = Math.min(Math.max(roles[i]?.target ?? m.current, box.lo), box.hi);
    const reason = explain(
      m,
      planned,
      box.lo,
      box.hi,
      direction,
      conflict ? "conflict" : planned === boxed ? "exact" : "moved",
    );
    reasons.set(m.name, reason);
    if (pacingReasons.has(reason) && planned !== m.recommendation?.replicas && m.scaled) {
      blocked.set(
        "PacingBounded",
        `${m.name}: ${reason} holds ${planned} of ${m.recommendation?.replicas ?? planned} recommended`,
      );
    }
    if (reason === "AbortCooldown")
      blocked.set("ScaleDownAborted", `${m.name}: scale-down waits for the cooldown after an aborted retirement`);
  });
  return { vector, reasons, blocked };
}

interface Recovery {
  readonly vector: ReplicaVector;
  readonly reason: CommitReason;
  readonly roleReason: string;
}

/** Plans one pass. Pure: the same input gives the same output. */
export function plan(input: PlanInput): PlanResult {
  const { scaler, target, nowMs } = input;
  const spec = scaler.spec;
  const generation = scaler.metadata.generation;
  const previous = scaler.status;

  let binding: BindingOutcome = decideBinding(
    {
      name: scaler.metadata.name,
      uid: scaler.metadata.uid ?? "",
      generation: generation ?? 0,
      mode: spec.mode,
      suspend: spec.suspend,
      deleting: scaler.metadata.deletionTimestamp !== undefined,
      status: previous,
    },
    target === undefined
      ? undefined
      : { uid: target.metadata.uid ?? "", name: target.metadata.name, annotations: target.metadata.annotations ?? {} },
  );
  if (binding.commit && input.bindingTerm !== undefined) binding = { ...binding, term: input.bindingTerm };
  const bindingUpdates: ConditionUpdate[] = [
    { type: "Bound", ...binding.bound },
    { type: "Active", ...binding.active },
  ];

  if (!binding.plan || target === undefined) {
    const status: ScalerStatus = {
      ...(previous ?? {}),
      ...(generation === undefined ? {} : { observedGeneration: generation }),
      conditions: setConditions(previous?.conditions, bindingUpdates, generation, nowMs),
    };
    return { status, statusChanged: controlPlaneMoved(previous, status), bindingWrite: binding.write };
  }
  return planTarget(input, target, binding, bindingUpdates);
}

function planTarget(
  input: PlanInput,
  target: ModelDeployment,
  binding: BindingOutcome,
  bindingUpdates: readonly ConditionUpdate[],
): PlanResult {
  const { scaler, nowMs } = input;
  const spec = scaler.spec;
  const generation = scaler.metadata.generation;
  const previous = scaler.status;
  const base: ScalerStatus = binding.clearTargetState ? withoutTargetState(previous) : { ...(previous ?? {}) };
  const nowIso = iso(nowMs);
  const targetRoles = target.spec.roles;
  const roleStatuses = new Map((target.status?.roles ?? []).map((r) => [r.name, r] as const));
  const current = vectorOf(targetRoles);
  const previousRoles = new Map((base.roles ?? []).map((r) => [r.name, r] as const));
  const bindingStatus = {
    targetUID: target.metadata.uid ?? "",
    targetName: target.metadata.name,
    ...(binding.commit && binding.term !== undefined ? { term: binding.term } : {}),
  };

  const observedRoles = (): RoleStatus[] =>
    targetRoles.map((role) => {
      const before = previousRoles.get(role.name);
      return {
        ...observedRoleStatus(role.name, role.replicas, input.observations[role.name], roleStatuses.get(role.name)),
        ...(before?.lastScaleUpTime === undefined ? {} : { lastScaleUpTime: before.lastScaleUpTime }),
        ...(before?.stabilizationHistory === undefined ? {} : { stabilizationHistory: before.stabilizationHistory }),
      };
    });

  const stop = (reason: "BoundsConflict" | "RatioConflict", message: string): PlanResult => {
    const status: ScalerStatus = {
      ...base,
      ...(generation === undefined ? {} : { observedGeneration: generation }),
      binding: bindingStatus,
      roles: observedRoles(),
      conditions: setConditions(
        base.conditions,
        [
          ...bindingUpdates,
          { type: "MetricsReady", status: "False", reason, message: `signals were not evaluated: ${message}` },
          { type: "Blocked", status: "True", reason, message },
        ],
        generation,
        nowMs,
      ),
    };
    return { status, statusChanged: controlPlaneMoved(previous, status), bindingWrite: binding.write };
  };

  // 2. The policy must contain the current vector before the planner moves it.
  const boundsCheck = checkBounds(spec, targetRoles);
  if (!boundsCheck.ok) return stop("BoundsConflict", boundsCheck.message);
  const bounds = boundsCheck.bounds;
  const planned = new Set(targetRoles.map((r) => r.name));
  const bands = ratioBands(spec, planned);
  const broken = violatedBands(current, bands);
  if (broken.length > 0) {
    return stop(
      "RatioConflict",
      `the current vector violates ${broken.map(describeBand).join(", ")}; widen the ratios to include it`,
    );
  }

  // 3. Recommendations and their history.
  const orderedRoles = [...targetRoles].sort((a, b) => specIndex(spec.roles, a.name) - specIndex(spec.roles, b.name));
  const algorithmRoles: AlgorithmRoleInput[] = orderedRoles.map((role) => ({
    name: role.name,
    kind: role.kind,
    currentReplicas: role.replicas,
    observation: input.observations[role.name] ?? missingObservation(roleStatuses.get(role.name)),
  }));
  const algorithm = input.algorithm ?? algorithmFor(spec.algorithm.type);
  const result: AlgorithmResult =
    algorithm === undefined
      ? {
          roles: orderedRoles.map((r) => ({
            role: r.name,
            scaled: false,
            replicas: r.replicas,
            reason: "AlgorithmUnavailable",
          })),
          predictors: base.predictors ?? [],
        }
      : algorithm.recommend({ spec, roles: algorithmRoles, predictors: base.predictors ?? [], nowMs });
  const recommendations = new Map(result.roles.map((r) => [r.role, r] as const));

  // Recovery state read before planning: abort cooldown, cohort, episode.
  const retirement = activeRetirement(target);
  const lastScaleDownBefore = base.lastScaleDown;
  const cooldownUntilMs =
    lastScaleDownBefore?.outcome === "Aborted" ? parseTimeMs(lastScaleDownBefore.cooldownUntil) : undefined;
  const cohort: CohortState | undefined =
    base.pendingCohort === undefined
      ? undefined
      : cohortState(base.pendingCohort, current, roleStatuses, nowMs, spec.sampling.pendingTimeoutSeconds);
  let rebalance: RebalanceStatus | undefined = base.rebalance;
  const targetGeneration = target.metadata.generation;
  const externalChange =
    base.lastCommit !== undefined &&
    targetGeneration !== undefined &&
    targetGeneration !== base.lastCommit.targetGeneration;
  if (
    rebalance !== undefined &&
    !transactionInFlight(rebalance) &&
    (rebalance.exhaustionEpisodeGeneration !== (generation ?? 0) || externalChange)
  ) {
    // A spec edit or someone else's change to the target starts a new exhaustion episode.
    rebalance = undefined;
  }
  const receiverPool =
    rebalance?.receiverRole === undefined ? undefined : targetRoles.find((r) => r.name === rebalance?.receiverRole);
  const exhaustedUntilMs =
    seekingDonor(rebalance) && rebalance?.startedAt !== undefined
      ? (parseTimeMs(rebalance.startedAt) ?? nowMs) + spec.sampling.pendingTimeoutSeconds * 1000
      : undefined;
  const exhaustedRole = (role: TargetRole): boolean =>
    rebalance?.receiverRole === role.name ||
    (receiverPool?.instanceType !== undefined &&
      receiverPool.instanceType !== "" &&
      role.instanceType === receiverPool.instanceType);

  // 4. Per-role plan.
  const horizonSeconds = historyHorizonSeconds(spec);
  const windows = {
    scaleUpSeconds: spec.behavior.scaleUp.stabilizationWindowSeconds,
    scaleDownSeconds: spec.behavior.scaleDown.stabilizationWindowSeconds,
  };
  const lastPassMs = parseTimeMs(base.lastPassTime);
  const gapSeconds = historyGapSeconds(spec.sampling.intervalSeconds);
  const rolePlans = new Map<string, RolePlan>();
  for (const role of orderedRoles) {
    const range = bounds.get(role.name) as RoleBoundsRange;
    const rec = recommendations.get(role.name);
    const scaled = rec?.scaled === true;
    const observation = input.observations[role.name];
    const before = previousRoles.get(role.name);
    const clamped = scaled
      ? clampToBounds(rec?.replicas ?? role.replicas, range)
      : { value: role.replicas, reason: "" };
    const pastHistory = continuousHistory(
      historyFromStatus(before?.stabilizationHistory),
      lastPassMs,
      nowMs,
      gapSeconds,
    );
    const coupled = rec?.reason === ratioCoupledReason;
    const heldForSignals = scaled && holdsForSignals(rec, observation, coupled);
    const history =
      scaled && !heldForSignals
        ? recordHistory(pastHistory, { timestampMs: nowMs, replicas: clamped.value }, horizonSeconds)
        : [...pastHistory];
    const stabilized = scaled
      ? stabilize(history, nowMs, role.replicas, clamped.value, windows)
      : { value: role.replicas, reason: "" };
    const lastScaleUpTime = before?.lastScaleUpTime;
    rolePlans.set(role.name, {
      name: role.name,
      role,
      current: role.replicas,
      range,
      observation,
      recommendation: rec,
      scaled,
      clamped,
      stabilized,
      history,
      upHold: growthHold({
        cohortPending: cohort?.kind === "Pending",
        roleStatus: roleStatuses.get(role.name),
        currentReplicas: role.replicas,
        exhaustedUntilMs: exhaustedRole(role) ? exhaustedUntilMs : undefined,
        nowMs,
      }),
      coupled,
      downHold: scaleDownHold({
        kind: role.kind,
        observation: coupled ? (observation ?? missingObservation(roleStatuses.get(role.name))) : observation,
        needsOwnSignals: !coupled,
        algorithmHold: rec?.scaleDownHold,
        retirement,
        abortCooldownUntilMs: cooldownUntilMs,
        lastScaleUpMs: parseTimeMs(lastScaleUpTime),
        decodeGraceSeconds: spec.behavior.scaleDown.decodePostScaleUpGraceSeconds,
        nowMs,
      }),
      upStepReplicas: scaleUpStep(spec.behavior.scaleUp, role.replicas).value,
      downStepReplicas: scaleDownStep(spec.behavior.scaleDown, role.replicas).value,
      lastScaleUpTime,
    });
  }

  const plannedVector: ReplicaVector = { ...current };
  const reasons = new Map<string, string>();
  const blocked = new Map<BlockedReason, string>();
  for (const component of ratioComponents(
    orderedRoles.map((r) => r.name),
    bands,
  )) {
    const outcome = planComponent(
      component.map((name) => rolePlans.get(name) as RolePlan),
      bands,
    );
    Object.assign(plannedVector, outcome.vector);
    for (const [role, reason] of outcome.reasons) reasons.set(role, reason);
    for (const [reason, message] of outcome.blocked) if (!blocked.has(reason)) blocked.set(reason, message);
  }

  const undriven = orderedRoles.filter((r) => recommendations.get(r.name)?.reason === noTargetReason);
  if (undriven.length > 0) {
    blocked.set(
      "BoundsConflict",
      `bounds are missing: ${undriven.map((r) => `${r.name} needs ${missingDriverField(spec, r.kind, r.name)}`).join("; ")}`,
    );
  }

  // 5. Recoveries: at most one write per pass, and they come first.
  let recovery: Recovery | undefined;
  let lastScaleDown: LastScaleDown | undefined = lastScaleDownBefore;
  let pendingCohort: PendingCohort | undefined = cohort?.kind === "Admitted" ? undefined : base.pendingCohort;
  let holdAll: string | undefined;

  if (scaleDownAborted(lastScaleDownBefore, target, current) && lastScaleDownBefore !== undefined) {
    const cooldownMs = spec.behavior.scaleDown.cooldownAfterAbortSeconds * 1000;
    recovery = {
      vector: restoreVector(lastScaleDownBefore, current),
      reason: "ScaleDownAborted",
      roleReason: "ScaleDownAborted",
    };
    lastScaleDown = {
      ...lastScaleDownBefore,
      outcome: "Aborted",
      abortedAt: nowIso,
      cooldownUntil: iso(nowMs + cooldownMs),
    };
    blocked.set(
      "ScaleDownAborted",
      `the retirement of ${lastScaleDownBefore.role} was aborted; restored the pre-scale-down vector, scale-down cools down until ${iso(nowMs + cooldownMs)}`,
    );
    if (transactionInFlight(rebalance) && rebalance !== undefined) {
      // The donor kept its replica: the transaction is over, the episode remembers the attempt.
      rebalance = withoutTransaction(rebalance, "DonationAttempted");
    }
  } else if (cohort?.kind === "TimedOut" && base.pendingCohort !== undefined) {
    const cohortBefore = base.pendingCohort;
    recovery = {
      vector: rollbackVector(cohortBefore, current),
      reason: "ResourceExhausted",
      roleReason: "ResourceExhausted",
    };
    pendingCohort = undefined;
    const receiver =
      orderedRoles.map((r) => r.name).find((name) => cohort.unadmittedRoles.includes(name)) ??
      cohort.unadmittedRoles[0] ??
      "";
    const sameEpisode = rebalance !== undefined && !transactionInFlight(rebalance);
    rebalance = {
      receiverRole: receiver,
      startedAt: nowIso,
      exhaustionEpisodeGeneration: generation ?? 0,
      donationAttempted: sameEpisode ? (rebalance?.donationAttempted ?? false) : false,
      reason: "ResourceExhausted",
    };
    blocked.set(
      "ResourceExhausted",
      `${cohort.unadmittedRoles.join(", ")} not admitted within ${spec.sampling.pendingTimeoutSeconds}s; restored the baseline vector`,
    );
  } else if (transactionInFlight(rebalance) && rebalance !== undefined) {
    const tx = rebalance;
    const receiver = tx.receiverRole ?? "";
    if (donorReleased(tx, target, roleStatuses)) {
      const receiverVector: ReplicaVector = { ...current, [receiver]: (current[receiver] ?? 0) + 1 };
      const violation = stepViolation(receiverVector, bounds, bands);
      if (violation === undefined) {
        recovery = { vector: receiverVector, reason: "ReceiverAcquire", roleReason: "ReceiverAcquire" };
        rebalance = { ...tx, receiverTargetReplicas: receiverVector[receiver] ?? 0, reason: "ReceiverAcquire" };
      } else {
        rebalance = withoutTransaction(tx, "RebalanceBlocked");
        blocked.set("RebalanceBlocked", `receiver step cancelled: ${violation}`);
      }
    } else {
      holdAll = `rebalance: waiting for ${tx.donorRole ?? "the donor"} to release a replica before ${receiver} grows`;
      blocked.set("PacingBounded", holdAll);
    }
  } else if (
    seekingDonor(rebalance) &&
    rebalance !== undefined &&
    exhaustedUntilMs !== undefined &&
    nowMs < exhaustedUntilMs
  ) {
    const episode = rebalance;
    const receiver = episode.receiverRole ?? "";
    const receiverPlan = rolePlans.get(receiver);
    const stillWants =
      receiverPlan !== undefined && receiverPlan.scaled && receiverPlan.clamped.value > receiverPlan.current;
    if (stillWants) {
      const choice = chooseDonation({
        policy: spec.rebalance.policy,
        priority: spec.rebalance.priority,
        receiver,
        roles: orderedRoles.map((r) => {
          const p = rolePlans.get(r.name);
          return {
            name: r.name,
            instanceType: r.instanceType,
            currentReplicas: r.replicas,
            recommendedReplicas: p?.scaled === true ? p.clamped.value : undefined,
          };
        }),
        bounds,
        bands,
        current,
        donationAttempted: episode.donationAttempted === true,
      });
      if (spec.rebalance.policy === "Disabled") {
        blocked.set(
          "ResourceExhausted",
          `${receiver} needs capacity that was not admitted; rebalance.policy is Disabled`,
        );
      } else if (choice.kind === "NotApplicable") {
        rebalance = { ...episode, reason: "RebalanceNotApplicable" };
        blocked.set("RebalanceNotApplicable", choice.message);
      } else if (choice.kind === "Blocked") {
        rebalance = { ...episode, reason: choice.rebalanceReason };
        blocked.set("RebalanceBlocked", choice.message);
      } else if (retirement !== undefined || (cooldownUntilMs !== undefined && nowMs < cooldownUntilMs)) {
        blocked.set(
          "ResourceExhausted",
          `${choice.donor} will donate to ${receiver} once no retirement or abort cooldown is active`,
        );
      } else {
        const donorCount = choice.donorVector[choice.donor] ?? 0;
        recovery = { vector: choice.donorVector, reason: "DonorRelease", roleReason: "DonorRelease" };
        rebalance = {
          receiverRole: receiver,
          donorRole: choice.donor,
          donorTargetReplicas: donorCount,
          receiverTargetReplicas: choice.receiverVector[receiver] ?? 0,
          startedAt: nowIso,
          exhaustionEpisodeGeneration: episode.exhaustionEpisodeGeneration ?? generation ?? 0,
          donationAttempted: true,
          reason: "DonorRelease",
        };
        lastScaleDown = {
          role: choice.donor,
          ordinal: donorCount,
          preScaleDownVector: { ...current },
          outcome: "Committed",
        };
      }
    }
  }

  // 6. The vector this pass stands for, and its commit.
  const finalVector: ReplicaVector = recovery?.vector ?? (holdAll !== undefined ? { ...current } : plannedVector);
  const commitAllowed = binding.commit && binding.term !== undefined;
  let commit: Commit | undefined;
  let lastCommit = base.lastCommit;
  const scaledUp = new Set<string>();
  if (commitAllowed && !sameVector(finalVector, current)) {
    const term = binding.term as number;
    const id = decisionID({ scalerUID: scaler.metadata.uid ?? "", term, vector: finalVector, nowMs });
    const expectedGeneration = (targetGeneration ?? 0) + 1;
    commit = {
      vector: { ...finalVector },
      decision: { decisionID: id, term, vector: { ...finalVector } },
      ...(binding.write.kind === "acquire" ? { binding: binding.write.binding } : {}),
      baselineVector: { ...current },
      ...(target.metadata.resourceVersion === undefined ? {} : { resourceVersion: target.metadata.resourceVersion }),
      targetGeneration: expectedGeneration,
      reason: recovery?.reason ?? "Scale",
    };
    lastCommit = {
      decisionID: id,
      term,
      vector: { ...finalVector },
      baselineVector: { ...current },
      timestamp: nowIso,
      targetGeneration: expectedGeneration,
    };
    const grown = orderedRoles.filter((r) => (finalVector[r.name] ?? 0) > r.replicas).map((r) => r.name);
    const shrunk = orderedRoles.filter((r) => (finalVector[r.name] ?? 0) < r.replicas).map((r) => r.name);
    for (const name of grown) scaledUp.add(name);
    if (grown.length > 0 && recovery?.reason !== "ScaleDownAborted") {
      pendingCohort = {
        decisionID: id,
        term,
        baselineVector: { ...current },
        targetVector: { ...finalVector },
        startedAt: nowIso,
      };
    }
    // A rollback returns replicas that never served: nothing to restore if their retirement aborts.
    if (shrunk[0] !== undefined && recovery === undefined) {
      lastScaleDown = {
        role: shrunk[0],
        ordinal: finalVector[shrunk[0]] ?? 0,
        preScaleDownVector: { ...current },
        outcome: "Committed",
      };
    }
  }

  // Status.
  const roles: RoleStatus[] = orderedRoles.map((role) => {
    const p = rolePlans.get(role.name) as RolePlan;
    const value = finalVector[role.name] ?? role.replicas;
    const plannedReason = reasons.get(role.name) ?? p.recommendation?.reason ?? "NotScaled";
    let reason = plannedReason;
    if (recovery !== undefined && value !== plannedVector[role.name]) reason = recovery.roleReason;
    else if (holdAll !== undefined && value !== plannedVector[role.name]) reason = "RebalanceInProgress";
    const lastScaleUpTime = scaledUp.has(role.name) ? nowIso : p.lastScaleUpTime;
    return {
      ...observedRoleStatus(role.name, role.replicas, p.observation, roleStatuses.get(role.name)),
      ...(p.recommendation === undefined ? {} : { rawRecommendedReplicas: p.recommendation.replicas }),
      constrainedReplicas: value,
      reason,
      ...(lastScaleUpTime === undefined ? {} : { lastScaleUpTime }),
      ...(p.history.length === 0 ? {} : { stabilizationHistory: historyToStatus(p.history) }),
    };
  });

  const metrics = metricsReady(orderedRoles, rolePlans, blocked.has("ResourceExhausted"));
  const { lastCommit: _lc, pendingCohort: _pc, rebalance: _rb, lastScaleDown: _ls, predictors: _pr, ...rest } = base;
  const status: ScalerStatus = {
    ...rest,
    ...(generation === undefined ? {} : { observedGeneration: generation }),
    binding: bindingStatus,
    roles,
    ...(lastCommit === undefined ? {} : { lastCommit }),
    ...(pendingCohort === undefined ? {} : { pendingCohort }),
    ...(rebalance === undefined ? {} : { rebalance }),
    ...(lastScaleDown === undefined ? {} : { lastScaleDown }),
    ...(result.predictors.length === 0 ? {} : { predictors: [...result.predictors] }),
    lastPassTime: nowIso,
    conditions: setConditions(
      base.conditions,
      [...bindingUpdates, metrics, blockedCondition(blocked)],
      generation,
      nowMs,
    ),
  };
  return {
    status,
    statusChanged: commit !== undefined || controlPlaneMoved(previous, status),
    ...(commit === undefined ? {} : { commit }),
    bindingWrite: binding.write,
  };
}

function specIndex(roles: readonly { readonly name: string }[], name: string): number {
  const at = roles.findIndex((r) => r.name === name);
  return at < 0 ? roles.length : at;
}

/** The rebalance record with its transaction fields dropped; the episode survives. */
function withoutTransaction(rebalance: RebalanceStatus, reason: string): RebalanceStatus {
  return {
    ...(rebalance.receiverRole === undefined ? {} : { receiverRole: rebalance.receiverRole }),
    ...(rebalance.exhaustionEpisodeGeneration === undefined
      ? {}
      : { exhaustionEpisodeGeneration: rebalance.exhaustionEpisodeGeneration }),
    donationAttempted: true,
    reason,
  };
}

/**
 * `Observed` when every role the algorithm drives has current readings from
 * all its ready replicas; otherwise `WaitingForMetrics`, or
 * `ResourceExhausted` while capacity that was never admitted is the cause.
 */
function metricsReady(
  roles: readonly TargetRole[],
  plans: ReadonlyMap<string, RolePlan>,
  exhausted: boolean,
): ConditionUpdate {
  // A ratio-coupled role follows its driver; its own coverage does not keep signals unready.
  const driven = roles.filter((r) => plans.get(r.name)?.scaled === true && plans.get(r.name)?.coupled !== true);
  const required = driven.length > 0 ? driven : roles;
  const waiting: string[] = [];
  for (const role of required) {
    const obs = plans.get(role.name)?.observation;
    if (obs === undefined) waiting.push(`${role.name} (unobserved)`);
    else if (obs.signalState === "Missing" || obs.signalState === "Stale")
      waiting.push(`${role.name} (${obs.signalState})`);
    else if (obs.sampledReplicas < obs.readyReplicas)
      waiting.push(`${role.name} (${obs.sampledReplicas} of ${obs.readyReplicas} sampled)`);
  }
  if (waiting.length === 0)
    return {
      type: "MetricsReady",
      status: "True",
      reason: "Observed",
      message: "all required role signals are available",
    };
  if (exhausted)
    return {
      type: "MetricsReady",
      status: "False",
      reason: "ResourceExhausted",
      message: `replicas were not admitted; waiting for ${waiting.join(", ")}`,
    };
  return {
    type: "MetricsReady",
    status: "False",
    reason: "WaitingForMetrics",
    message: `waiting for ${waiting.join(", ")}`,
  };
}

const ratioCoupledReason = "RatioCoupled";
const noTargetReason = "NoTarget";
const waitingForMetricsReason = "WaitingForMetrics";

/**
 * Whether this pass holds the role for want of signals: its recommendation is
 * not one. The algorithm said so (`WaitingForMetrics`, also a coupled role
 * whose driver waits), or the role reads its own signals and they are
 * `Missing` or `Stale` (or it is unobserved).
 */
function holdsForSignals(
  rec: RoleRecommendation | undefined,
  observation: RoleObservation | undefined,
  coupled: boolean,
): boolean {
  if (rec?.scaleDownHold?.reason === waitingForMetricsReason) return true;
  if (coupled) return false;
  return observation === undefined || observation.signalState === "Missing" || observation.signalState === "Stale";
}

/** The spec field that would drive a role the algorithm leaves alone (`NoTarget`). */
function missingDriverField(spec: PlanInput["scaler"]["spec"], kind: TargetRole["kind"], role: string): string {
  const ratio = "a spec.ratios entry tying it to a driven role";
  const type = spec.algorithm.type;
  if (type === "Proportional")
    return `a spec.algorithm.proportional.roleTargets entry named ${JSON.stringify(role)} or ${ratio}`;
  if (kind === "Encode") return ratio;
  const block = type === "Predictive" ? "spec.algorithm.predictive.tokenThroughput" : "spec.algorithm.tokenThroughput";
  return `${block}.${kind.toLowerCase()}TargetTokensPerSecond or ${ratio}`;
}
