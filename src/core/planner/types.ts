/**
 * The planner's boundary: one pass takes a `PlanInput` and returns a
 * `PlanResult`. Everything the planner remembers between passes lives in the
 * returned status; everything it learns about the world arrives in the input.
 */
import type { BindingPayload, commitReasons, DecisionPayload, ModelDeployment } from "../api/model-deployment.js";
import type { BindingWrite } from "../binding/binding.js";
import type { ReplicaVector, ScalerSpec, ScalerStatus } from "../api/scaler.js";
import type { Algorithm } from "../algorithms/types.js";
import type { LatencyGuardReading } from "../algorithms/ttft-reading.js";
import type { RoleObservation } from "../signals/types.js";

/** Every constraint answers with the value it allows and why. */
export interface Limit {
  readonly value: number;
  /** A stable machine reason, shown in a role's `reason` when it changed the value. */
  readonly reason: string;
}

/** The scaler as the planner reads it: metadata, the defaulted spec and the previous status. */
export interface PlanScaler {
  readonly metadata: {
    readonly name: string;
    readonly namespace?: string | undefined;
    readonly uid?: string | undefined;
    /** Spec generation; recorded as `observedGeneration`. */
    readonly generation?: number | undefined;
    /** Set while the scaler is being deleted: its binding is released. */
    readonly deletionTimestamp?: string | undefined;
  };
  readonly spec: ScalerSpec;
  /** The previous pass's status (or the one read back after a restart). */
  readonly status?: ScalerStatus | undefined;
}

export interface PlanInput {
  readonly scaler: PlanScaler;
  /** The target; absent when it does not exist (`TargetNotFound`). */
  readonly target?: ModelDeployment | undefined;
  /** Role observations by role name; an absent role is unobserved (`Missing`). */
  readonly observations: Readonly<Record<string, RoleObservation>>;
  /** Time of this pass, Unix milliseconds. */
  readonly nowMs: number;
  /**
   * The term under which the controller holds the binding (after it installed
   * the annotation). When absent the planner derives it from the target's
   * binding annotation, or picks the next term to install with its commit.
   */
  readonly bindingTerm?: number | undefined;
  /** Overrides the registry lookup (tests, simulations of new algorithms). */
  readonly algorithm?: Algorithm | undefined;
  /**
   * How the latency guard reads TTFT: `queueing` (the default) counts a TTFT breach only when waiting is a
   * material part of it, `literal` as the specification words it (`src/core/algorithms/ttft-reading.ts`).
   * The controller's `--latency-guard-reading`.
   */
  readonly latencyGuardReading?: LatencyGuardReading | undefined;
  /**
   * How often Prometheus scrapes the engines, seconds (the controller's `--engine-scrape-interval`). When given,
   * `MetricsReady`'s message names a rate window too short to read anything at that interval (rule
   * `window-scrapes`, `src/core/api/window-scrapes.ts`), which nothing else tells at run time from a quiet role.
   */
  readonly engineScrapeIntervalSeconds?: number | undefined;
}

/** Why a commit is written. */
export type CommitReason = (typeof commitReasons)[number];

/** One write to the target: the whole replica vector and its decision, under one term. */
export interface Commit {
  /** Replica counts by role for every target role with bounds. */
  readonly vector: ReplicaVector;
  /** The payload of the `scaler-decision` annotation. */
  readonly decision: DecisionPayload;
  /** The `scaler-binding` payload to install with this write, when the target has none yet. */
  readonly binding?: BindingPayload;
  /** Counts before this write. */
  readonly baselineVector: ReplicaVector;
  /** The target `resourceVersion` the write must be guarded by (as read). */
  readonly resourceVersion?: string;
  /** The target generation expected after the write. */
  readonly targetGeneration: number;
  readonly reason: CommitReason;
}

export interface PlanResult {
  readonly status: ScalerStatus;
  /** True when the control plane moved (decision, binding, condition, replica counts): write the status. */
  readonly statusChanged: boolean;
  /** Present when the pass writes to the target (never in Shadow mode). */
  readonly commit?: Commit;
  /**
   * The binding annotation write this pass needs: `acquire` installs our
   * binding (also carried by `commit.binding` when a commit goes with it),
   * `release` removes it (Shadow, suspended, deleting).
   */
  readonly bindingWrite?: BindingWrite;
  /** The term this pass may commit under (Active and bound, or acquiring); absent otherwise. */
  readonly bindingTerm?: number;
}
