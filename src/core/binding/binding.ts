/**
 * The binding fence as the controller sees it (spec: Binding fence, Resource).
 * A pure decision from the scaler and the target's annotations to: may the
 * scaler plan, may it commit, which term, what to write on the target, and the
 * `Bound` and `Active` conditions. The API calls belong to the Kubernetes adapter.
 */
import {
  bindingAnnotation,
  BindingPayloadSchema,
  decisionAnnotation,
  DecisionPayloadSchema,
  type BindingPayload,
  type DecisionPayload,
} from "../api/model-deployment.js";
import type { Condition, ScalerStatus } from "../api/scaler.js";

export type BindingReason =
  "Bound" | "TargetNotFound" | "AlreadyBound" | "TargetReplaced" | "InvalidBinding" | "Suspended";
export type ActiveReason = "Active" | Exclude<BindingReason, "Bound"> | "ShadowMode";

export interface BindingScaler {
  readonly name: string;
  readonly uid: string;
  readonly generation: number;
  readonly mode: "Shadow" | "Active";
  readonly suspend: boolean;
  readonly deleting: boolean;
  readonly status: ScalerStatus | undefined;
}

export interface BindingTarget {
  readonly uid: string;
  readonly name: string;
  readonly annotations: Readonly<Record<string, string>>;
}

/** What the Kubernetes adapter writes on the target before planning. */
export type BindingWrite =
  | { readonly kind: "none" }
  /** Install our binding annotation with this term (a JSON patch guarded by resourceVersion). */
  | { readonly kind: "acquire"; readonly binding: BindingPayload }
  /** Remove our binding annotation; replica counts and the decision annotation stay. */
  | { readonly kind: "release" };

export interface BindingOutcome {
  readonly bound: { readonly status: "True" | "False"; readonly reason: BindingReason; readonly message: string };
  readonly active: { readonly status: "True" | "False"; readonly reason: ActiveReason; readonly message: string };
  /** Planning runs (Shadow included); false stops the pass after conditions. */
  readonly plan: boolean;
  /** Commits are allowed, under `term`. */
  readonly commit: boolean;
  readonly term?: number;
  readonly write: BindingWrite;
  /** The target was replaced and the scaler's spec edit acknowledged it: drop target-specific state. */
  readonly clearTargetState: boolean;
}

export type ParsedAnnotation<T> =
  | { readonly state: "absent" }
  | { readonly state: "invalid"; readonly text: string }
  | { readonly state: "valid"; readonly value: T };

function parseAnnotation<T>(
  text: string | undefined,
  schema: { safeParse(v: unknown): { success: true; data: T } | { success: false } },
): ParsedAnnotation<T> {
  if (text === undefined) return { state: "absent" };
  let raw: unknown;
  // Stryker disable BlockStatement: without the catch's return, an unset raw fails the schema: the same invalid state
  try {
    raw = JSON.parse(text);
  } catch {
    return { state: "invalid", text };
  }
  // Stryker restore BlockStatement
  const parsed = schema.safeParse(raw);
  return parsed.success ? { state: "valid", value: parsed.data } : { state: "invalid", text };
}

export function parseBindingAnnotation(
  annotations: Readonly<Record<string, string>>,
): ParsedAnnotation<BindingPayload> {
  return parseAnnotation(annotations[bindingAnnotation], BindingPayloadSchema);
}

export function parseDecisionAnnotation(
  annotations: Readonly<Record<string, string>>,
): ParsedAnnotation<DecisionPayload> {
  return parseAnnotation(annotations[decisionAnnotation], DecisionPayloadSchema);
}

function condition(status: ScalerStatus | undefined, type: Condition["type"]): Condition | undefined {
  // Stryker disable next-line OptionalChaining: only read for a status that names a target uid
  return status?.conditions?.find((c) => c.type === type);
}

function blocked(
  reason: Exclude<BindingReason, "Bound">,
  message: string,
  write: BindingWrite = { kind: "none" },
  plan = false,
): BindingOutcome {
  return {
    bound: { status: "False", reason, message },
    active: { status: "False", reason, message },
    plan,
    commit: false,
    write,
    clearTargetState: false,
  };
}

/**
 * Whether the target was replaced: an outcome that stops the pass until a
 * spec edit acknowledges it, or whether to clear the old target's state.
 */
function replacement(scaler: BindingScaler, target: BindingTarget): BindingOutcome | { readonly clear: boolean } {
  const knownUID = scaler.status?.binding?.targetUID;
  if (knownUID === undefined || knownUID === target.uid) return { clear: false };
  const previous = condition(scaler.status, "Bound");
  const acknowledged = previous?.reason === "TargetReplaced" && (previous.observedGeneration ?? 0) < scaler.generation;
  if (acknowledged) return { clear: true };
  return blocked(
    "TargetReplaced",
    `the target was recreated (uid ${knownUID} is now ${target.uid}); edit the scaler's spec to acknowledge the replacement`,
  );
}

/** An unparseable annotation, another owner, or a suspension: no binding for us this pass. */
function refusal(
  scaler: BindingScaler,
  binding: ParsedAnnotation<BindingPayload>,
  ownsBinding: boolean,
  clearTargetState: boolean,
): BindingOutcome | undefined {
  if (binding.state === "invalid") {
    return blocked(
      "InvalidBinding",
      `annotation ${bindingAnnotation} cannot be parsed (${JSON.stringify(binding.text.slice(0, 120))}); fix or remove it to let a scaler bind`,
    );
  }
  if (binding.state === "valid" && !ownsBinding) {
    const owner = binding.value;
    // A Shadow scaler still plans: its recommendations never touch the target.
    return blocked(
      "AlreadyBound",
      `the target is bound to scaler ${owner.scalerName} (uid ${owner.scalerUID}, term ${owner.term})`,
      { kind: "none" },
      scaler.mode === "Shadow" && !scaler.suspend,
    );
  }
  if (!scaler.suspend) return undefined;
  return {
    ...blocked(
      "Suspended",
      "spec.suspend is true: planning stopped and the binding released",
      ownsBinding ? { kind: "release" } : { kind: "none" },
    ),
    clearTargetState,
  };
}

/** Decides the binding for one pass. `target` is undefined while it does not exist. */
export function decideBinding(scaler: BindingScaler, target: BindingTarget | undefined): BindingOutcome {
  // Stryker disable next-line ObjectLiteral: without a target only ownsBinding reads it, false either way
  const binding = target === undefined ? { state: "absent" as const } : parseBindingAnnotation(target.annotations);
  const ownsBinding =
    binding.state === "valid" && binding.value.scalerUID === scaler.uid && binding.value.scalerName === scaler.name;

  if (scaler.deleting) {
    return blocked(
      "Suspended",
      "the scaler is being deleted; its binding is released",
      ownsBinding ? { kind: "release" } : { kind: "none" },
    );
  }
  if (target === undefined) {
    return blocked("TargetNotFound", "the target ModelDeployment does not exist in this namespace");
  }
  const replaced = replacement(scaler, target);
  if (!("clear" in replaced)) return replaced;
  const clearTargetState = replaced.clear;
  const refused = refusal(scaler, binding, ownsBinding, clearTargetState);
  if (refused !== undefined) return refused;
  return granted(scaler, target, binding, ownsBinding, clearTargetState);
}

/** The binding this scaler holds or acquires: Shadow plans without it, Active commits under its term. */
function granted(
  scaler: BindingScaler,
  target: BindingTarget,
  binding: ParsedAnnotation<BindingPayload>,
  ownsBinding: boolean,
  clearTargetState: boolean,
): BindingOutcome {
  if (scaler.mode === "Shadow") {
    return {
      bound: { status: "True", reason: "Bound", message: "the target is available; Shadow mode does not own it" },
      active: {
        status: "False",
        reason: "ShadowMode",
        message: "Shadow mode computes recommendations without writing replica counts",
      },
      plan: true,
      commit: false,
      write: ownsBinding ? { kind: "release" } : { kind: "none" },
      clearTargetState,
    };
  }

  // ownsBinding implies a valid annotation; the second test narrows the type.
  // Stryker disable next-line LogicalOperator,ConditionalExpression: equivalent, as ownsBinding implies a valid annotation
  if (ownsBinding && binding.state === "valid") {
    return {
      bound: { status: "True", reason: "Bound", message: `bound to the target under term ${binding.value.term}` },
      active: { status: "True", reason: "Active", message: "commits replica counts under the binding" },
      plan: true,
      commit: true,
      term: binding.value.term,
      write: { kind: "none" },
      clearTargetState,
    };
  }

  // Terms never move backwards: start above any term the target or our status has seen.
  const decision = parseDecisionAnnotation(target.annotations);
  const seenTerm = Math.max(
    decision.state === "valid" ? decision.value.term : 0,
    clearTargetState ? 0 : (scaler.status?.binding?.term ?? 0),
  );
  const term = seenTerm + 1;
  return {
    bound: { status: "True", reason: "Bound", message: `bound to the target under term ${term}` },
    active: { status: "True", reason: "Active", message: "commits replica counts under the binding" },
    plan: true,
    commit: true,
    term,
    write: { kind: "acquire", binding: { scalerName: scaler.name, scalerUID: scaler.uid, term } },
    clearTargetState,
  };
}
