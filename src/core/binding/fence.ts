/**
 * The binding fence at admission (spec: Binding fence, GitOps sync,
 * Troubleshooting "A write is refused"): which writes to a ModelDeployment
 * may change its replica counts or the two scaler annotations.
 *
 * - Bound target (a valid binding annotation): only a commit from the
 *   controller's identity may change counts or the decision, and only by
 *   writing the vector and its decision together under the binding's term.
 *   The controller may also release the binding or renew it for the same
 *   scaler; a second scaler can never take it over. A user may remove an
 *   orphaned binding, and only when the named scaler is absent or has another
 *   UID and the counts and decision stay as they are.
 * - Unbound target: anyone may change counts; only the controller may install
 *   a binding (above every term the target has seen), and no one installs or
 *   rewrites a decision.
 * - A binding that cannot be parsed leaves the target unclaimed: counts are
 *   editable and the annotation may be removed, not rewritten.
 * - Every other field stays editable. Terms never move backwards.
 * - A commit whose leader token is older than the stored decision's is refused
 *   (`leader-token.ts`): at most one controller replica writes the vector.
 *
 * Pure: the webhook adapter looks up the named scaler beforehand
 * (`fenceScalerToLookUp`) and passes what it found.
 */
import {
  bindingAnnotation,
  decisionAnnotation,
  type BindingPayload,
  type DecisionPayload,
} from "../api/model-deployment.js";
import { parseBindingAnnotation, parseDecisionAnnotation, type ParsedAnnotation } from "./binding.js";
import { staleLeaderReason } from "./leader-token.js";

export interface FenceUserInfo {
  readonly username?: string | undefined;
  readonly groups?: readonly string[] | undefined;
}

/** The scaler named by an old binding, as the adapter found it. */
export type ScalerLookup = { readonly state: "absent" } | { readonly state: "present"; readonly uid: string };

export interface TargetUpdate {
  /** The stored object; undefined on CREATE. */
  readonly old: unknown;
  readonly new: unknown;
  readonly userInfo: FenceUserInfo;
  /** The username the controller's requests carry, e.g. `system:serviceaccount:mds-system:mds-scaler`. */
  readonly controllerIdentity: string;
  /** Required only when `fenceScalerToLookUp` named a scaler. */
  readonly scalerLookup?: ScalerLookup;
}

export interface FenceVerdict {
  readonly allowed: boolean;
  /** Why a write was refused and what to do instead; empty when allowed. */
  readonly message: string;
}

const allow: FenceVerdict = { allowed: true, message: "" };

/** Shared by every refusal: where to read more, and the GitOps fix. */
const gitOpsHint =
  "A GitOps controller must ignore /spec/roles/<i>/replicas (one pointer per role) and /metadata/annotations/modeldeployment.gpustack.ai~1scaler-binding and ~1scaler-decision (Argo CD ignoreDifferences with RespectIgnoreDifferences=true; Flux Kustomization spec.ignore).";

interface View {
  readonly namespacedName: string;
  readonly annotations: Readonly<Record<string, string>>;
  readonly replicas: ReadonlyMap<string, number>;
  readonly binding: ParsedAnnotation<BindingPayload>;
  readonly decision: ParsedAnnotation<DecisionPayload>;
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function viewOf(object: unknown): View {
  const metadata = record(record(object)["metadata"]);
  const annotations: Record<string, string> = {};
  for (const [key, value] of Object.entries(record(metadata["annotations"]))) {
    if (typeof value === "string") annotations[key] = value;
  }
  const replicas = new Map<string, number>();
  const roles = record(object)["spec"];
  const list = record(roles)["roles"];
  if (Array.isArray(list)) {
    for (const role of list) {
      const r = record(role);
      // A role without a numeric count is still compared: the marker cannot equal a count.
      if (typeof r["name"] === "string")
        replicas.set(r["name"], typeof r["replicas"] === "number" ? r["replicas"] : Number.NaN);
    }
  }
  const namespace = typeof metadata["namespace"] === "string" ? metadata["namespace"] : "";
  const name = typeof metadata["name"] === "string" ? metadata["name"] : "";
  return {
    namespacedName: namespace === "" ? name : `${namespace}/${name}`,
    annotations,
    replicas,
    binding: parseBindingAnnotation(annotations),
    decision: parseDecisionAnnotation(annotations),
  };
}

interface CountChange {
  readonly role: string;
  readonly before: number;
  readonly after: number;
}

/** Roles present on both sides whose counts differ. Adding or removing a role is a structural edit, not a count change. */
function changedCounts(old: View, next: View): CountChange[] {
  const changes: CountChange[] = [];
  for (const [role, before] of old.replicas) {
    const after = next.replicas.get(role);
    if (after !== undefined && !Object.is(before, after)) changes.push({ role, before, after });
  }
  return changes;
}

function describeCounts(changes: readonly CountChange[]): string {
  return changes.map((c) => `${c.role} ${c.before}→${c.after}`).join(", ");
}

function sameBinding(a: BindingPayload, b: BindingPayload): boolean {
  return a.scalerName === b.scalerName && a.scalerUID === b.scalerUID;
}

function describeBinding(b: BindingPayload): string {
  return `ModelDeploymentScaler ${JSON.stringify(b.scalerName)} (uid ${b.scalerUID}, term ${b.term})`;
}

function deny(message: string): FenceVerdict {
  return { allowed: false, message };
}

/**
 * The scaler name the adapter must look up before calling `admitTargetUpdate`:
 * set only when a user removes a valid binding (orphan recovery).
 */
export function fenceScalerToLookUp(
  update: Pick<TargetUpdate, "old" | "new" | "userInfo" | "controllerIdentity">,
): string | undefined {
  // Stryker disable next-line ConditionalExpression: a create has no stored binding, so nothing is looked up either way
  if (update.old === undefined || update.userInfo.username === update.controllerIdentity) return undefined;
  const old = viewOf(update.old);
  const next = viewOf(update.new);
  if (old.binding.state === "valid" && next.annotations[bindingAnnotation] === undefined)
    return old.binding.value.scalerName;
  return undefined;
}

/** Decides one CREATE (old undefined) or UPDATE of a ModelDeployment. */
export function admitTargetUpdate(update: TargetUpdate): FenceVerdict {
  const next = viewOf(update.new);
  const isController = update.controllerIdentity !== "" && update.userInfo.username === update.controllerIdentity;
  if (update.old === undefined) return admitCreate(next);
  const old = viewOf(update.old);
  const ctx: Context = {
    old,
    next,
    isController,
    user: update.userInfo.username ?? "<unknown user>",
    lookup: update.scalerLookup,
  };
  switch (old.binding.state) {
    case "valid":
      return admitBound(ctx, old.binding.value);
    case "invalid":
      return admitUnclaimed(ctx);
    case "absent":
      return admitUnbound(ctx);
  }
}

interface Context {
  readonly old: View;
  readonly next: View;
  readonly isController: boolean;
  readonly user: string;
  readonly lookup: ScalerLookup | undefined;
}

function admitCreate(next: View): FenceVerdict {
  const present = [bindingAnnotation, decisionAnnotation].filter((k) => next.annotations[k] !== undefined);
  if (present.length === 0) return allow;
  return deny(
    `ModelDeployment ${next.namespacedName} cannot be created with the scaler annotation(s) ${present.join(", ")}: only a ModelDeploymentScaler installs them. Remove them from the manifest; an Active scaler binds the new deployment itself. ${gitOpsHint}`,
  );
}

function annotationChanged(ctx: Context, key: string): boolean {
  return ctx.old.annotations[key] !== ctx.next.annotations[key];
}

function admitBound(ctx: Context, binding: BindingPayload): FenceVerdict {
  const { next } = ctx;
  if (!annotationChanged(ctx, bindingAnnotation)) return admitUnderBinding(ctx, binding);
  if (next.binding.state === "absent") return admitRelease(ctx, binding);
  if (next.binding.state === "invalid") {
    return deny(
      `annotation ${bindingAnnotation} must be valid JSON naming a scaler and a term; ${describeBinding(binding)} owns this target. ${gitOpsHint}`,
    );
  }
  const renewed = next.binding.value;
  if (!ctx.isController) return refusedToUser(ctx, binding, `it rewrites annotation ${bindingAnnotation}`);
  if (!sameBinding(renewed, binding)) {
    return deny(
      `ModelDeployment ${next.namespacedName} is bound to ${describeBinding(binding)}; ModelDeploymentScaler ${JSON.stringify(renewed.scalerName)} cannot take the binding over (AlreadyBound). Delete the owner, or set it to Shadow or suspend it, to release the target first.`,
    );
  }
  if (renewed.term < binding.term)
    return deny(`the binding term cannot move backwards (${binding.term} → ${renewed.term})`);
  if (changedCounts(ctx.old, next).length > 0 || annotationChanged(ctx, decisionAnnotation)) {
    return deny("a binding renewal cannot change replica counts or the decision annotation in the same write");
  }
  return allow;
}

/** The binding stays as it is: only the scaler's commit changes counts or the decision. */
function admitUnderBinding(ctx: Context, binding: BindingPayload): FenceVerdict {
  const counts = changedCounts(ctx.old, ctx.next);
  const decisionChanged = annotationChanged(ctx, decisionAnnotation);
  if (counts.length === 0 && !decisionChanged) return allow;
  if (!ctx.isController) {
    const what = [
      counts.length > 0 ? `it changes replicas (${describeCounts(counts)})` : "",
      decisionChanged ? `it changes annotation ${decisionAnnotation}` : "",
    ].filter((s) => s !== "");
    return refusedToUser(ctx, binding, what.join(" and "));
  }
  return admitCommit(ctx, binding, counts);
}

/** A commit writes the vector and its decision together under the binding's term. */
function admitCommit(ctx: Context, binding: BindingPayload, counts: readonly CountChange[]): FenceVerdict {
  const { old, next } = ctx;
  if (next.decision.state !== "valid") {
    return deny(
      `a commit must write a valid ${decisionAnnotation} together with the counts${counts.length > 0 ? ` (${describeCounts(counts)})` : ""}`,
    );
  }
  const decision = next.decision.value;
  if (old.decision.state === "valid" && old.decision.value.decisionID === decision.decisionID) {
    return deny(
      `replica counts changed (${describeCounts(counts)}) without a new decision: a commit writes the vector and its decision together`,
    );
  }
  if (decision.term !== binding.term) {
    return deny(
      `decision ${decision.decisionID} has term ${decision.term}, but the binding's term is ${binding.term}: commits are written under the binding's term`,
    );
  }
  if (old.decision.state === "valid" && decision.term < old.decision.value.term) {
    return deny(`the decision term cannot move backwards (${old.decision.value.term} → ${decision.term})`);
  }
  const stale = staleLeaderReason(
    decision.leader,
    old.decision.state === "valid" ? old.decision.value.leader : undefined,
  );
  if (stale !== undefined) return deny(`decision ${decision.decisionID} is refused: ${stale}`);
  const mismatched = Object.entries(decision.vector).filter(([role, replicas]) => next.replicas.get(role) !== replicas);
  const unlisted = counts.filter((c) => decision.vector[c.role] === undefined).map((c) => c.role);
  if (mismatched.length > 0 || unlisted.length > 0) {
    const parts = [
      ...mismatched.map(([role, r]) => `${role}: decision ${r}, spec ${next.replicas.get(role) ?? "<missing role>"}`),
      ...unlisted.map((role) => `${role}: changed but not in the decision`),
    ];
    return deny(`the written counts do not match decision ${decision.decisionID}'s vector (${parts.join("; ")})`);
  }
  return allow;
}

/** The binding annotation is removed: the controller's release, or a user's orphan recovery. */
function admitRelease(ctx: Context, binding: BindingPayload): FenceVerdict {
  const counts = changedCounts(ctx.old, ctx.next);
  const decisionChanged = annotationChanged(ctx, decisionAnnotation);
  if (ctx.isController) {
    return counts.length === 0 && !decisionChanged
      ? allow
      : deny("a release removes the binding only: replica counts and the decision annotation stay");
  }
  if (ctx.lookup === undefined) {
    // Programmer error in the adapter; refuse rather than guess.
    return deny(`cannot tell whether ${describeBinding(binding)} still exists; retry the write`);
  }
  // Stryker disable next-line ConditionalExpression: an absent scaler has no uid, so it never matches either way
  if (ctx.lookup.state === "present" && ctx.lookup.uid === binding.scalerUID) {
    return refusedToUser(ctx, binding, `it removes annotation ${bindingAnnotation} while that scaler still exists`);
  }
  if (counts.length > 0 || decisionChanged) {
    return deny(
      `removing the orphaned binding of ${describeBinding(binding)} is allowed, but the same write must leave replica counts and annotation ${decisionAnnotation} unchanged${counts.length > 0 ? ` (it changes ${describeCounts(counts)})` : ""}. Remove the annotation alone, then change the counts in a second write.`,
    );
  }
  return allow;
}

function refusedToUser(ctx: Context, binding: BindingPayload, what: string): FenceVerdict {
  return deny(
    `ModelDeployment ${ctx.next.namespacedName} is bound to ${describeBinding(binding)}, which owns spec.roles[].replicas and the annotations ${bindingAnnotation} and ${decisionAnnotation}; the write by ${ctx.user} is refused because ${what}. ` +
      `Change the counts through the scaler (roles[].minReplicas/maxReplicas), or release the target first: set the scaler to mode Shadow, set suspend: true, or delete it. ` +
      `If the scaler is gone or was recreated with another UID, remove annotation ${bindingAnnotation} alone, with counts unchanged. ${gitOpsHint}`,
  );
}

/** The binding annotation cannot be parsed: unclaimed, so counts are free; the annotation may only be removed. */
function admitUnclaimed(ctx: Context): FenceVerdict {
  if (annotationChanged(ctx, bindingAnnotation) && ctx.next.annotations[bindingAnnotation] !== undefined) {
    return deny(
      `annotation ${bindingAnnotation} cannot be parsed and leaves the target unclaimed; remove it (do not rewrite it) to let a scaler bind again`,
    );
  }
  return admitDecisionUnbound(ctx);
}

function admitUnbound(ctx: Context): FenceVerdict {
  const { next } = ctx;
  if (next.binding.state === "absent") return admitDecisionUnbound(ctx);
  if (!ctx.isController) {
    return deny(
      `ModelDeployment ${next.namespacedName} is not bound, and annotation ${bindingAnnotation} cannot be installed by hand (the write by ${ctx.user}): only an Active ModelDeploymentScaler binds a target. Create or activate the scaler instead. ${gitOpsHint}`,
    );
  }
  if (next.binding.state === "invalid")
    return deny(`annotation ${bindingAnnotation} must be valid JSON naming a scaler and a term`);
  const seenTerm = ctx.old.decision.state === "valid" ? ctx.old.decision.value.term : 0;
  if (next.binding.value.term <= seenTerm) {
    return deny(
      `a new binding must start above the target's last decision term ${seenTerm} (got ${next.binding.value.term}): terms never move backwards`,
    );
  }
  if (changedCounts(ctx.old, next).length > 0 || annotationChanged(ctx, decisionAnnotation)) {
    return deny("acquiring a binding cannot change replica counts or the decision annotation in the same write");
  }
  return allow;
}

/** Without a binding, counts are free; the decision annotation may be removed but never installed or rewritten. */
function admitDecisionUnbound(ctx: Context): FenceVerdict {
  if (!annotationChanged(ctx, decisionAnnotation) || ctx.next.annotations[decisionAnnotation] === undefined)
    return allow;
  return deny(
    `ModelDeployment ${ctx.next.namespacedName} is not bound, and annotation ${decisionAnnotation} cannot be installed or rewritten (the write by ${ctx.user}): a decision is written only by the bound scaler's commit. Leave it as it is or remove it. ${gitOpsHint}`,
  );
}
