/**
 * The one interface every algorithm implements. The planner calls an algorithm
 * through the registry (`./index.ts`) and never branches on its name.
 *
 * An algorithm sees the whole target at once because some roles follow others
 * (an Encode role, or a role with only a ratio to a targeted role: `RatioCoupled`).
 */
import type { RoleKind } from "../api/model-deployment.js";
import type { AlgorithmType, PredictorStatus, ScalerSpec } from "../api/scaler.js";
import type { PodField } from "../signals/pod-fields.js";
import type { RoleObservation } from "../signals/types.js";
import type { LatencyGuardReading } from "./ttft-reading.js";

export interface AlgorithmRoleInput {
  readonly name: string;
  readonly kind: RoleKind;
  /** The desired count currently on the target. */
  readonly currentReplicas: number;
  readonly observation: RoleObservation;
}

export interface AlgorithmInput {
  /** The defaulted spec. */
  readonly spec: ScalerSpec;
  /** Target roles that have bounds, in the spec's role order. */
  readonly roles: readonly AlgorithmRoleInput[];
  /** Predictor state from the previous pass (or restored from status). */
  readonly predictors: readonly PredictorStatus[];
  /** Time of this pass, Unix milliseconds. */
  readonly nowMs: number;
  /** How the latency guard reads TTFT (`ttft-reading.ts`); `defaultLatencyGuardReading`, `queueing`, when absent. */
  readonly latencyGuardReading?: LatencyGuardReading | undefined;
}

/** Demand figures behind a recommendation, exported as metrics and shown on dashboards. */
export interface DemandFigures {
  readonly stableTokensPerSecond?: number;
  readonly panicTokensPerSecond?: number;
  readonly forecastTokensPerSecond?: number;
  readonly capacityPerReplicaTokensPerSecond?: number;
}

export interface RoleRecommendation {
  readonly role: string;
  /** False when the algorithm does not drive this role: the planner holds its count. */
  readonly scaled: boolean;
  /** The raw recommendation (at least 1 when scaled). */
  readonly replicas: number;
  /** Why: `TokenThroughput`, `Proportional`, `WithinTolerance`, `Panic`, `NoReadyReplicas`, ... */
  readonly reason: string;
  /** Present when the algorithm forbids shrinking this role this pass. */
  readonly scaleDownHold?: { readonly reason: string };
  readonly panic?: boolean;
  readonly demand?: DemandFigures;
  /** Which reading of TTFT the latency guard applied and why; shown in the role's status. */
  readonly latencyGuard?: string;
}

export interface AlgorithmResult {
  readonly roles: readonly RoleRecommendation[];
  /** Predictor state to persist in `status.predictors[]` (empty for algorithms that keep none). */
  readonly predictors: readonly PredictorStatus[];
}

/** A target role as `Algorithm.reads` sees it. */
export interface RoleIdentity {
  readonly name: string;
  readonly kind: RoleKind;
}

export interface Algorithm {
  readonly type: AlgorithmType;
  recommend(input: AlgorithmInput): AlgorithmResult;
}

/**
 * The pod fields an algorithm reads for one role (none for a role it does not
 * drive): the observation counts a pod toward coverage only when the pod
 * reports all of them, so a missing field holds scale-down. See `reads.ts`.
 */
export type FieldsRead = (spec: ScalerSpec, role: RoleIdentity) => readonly PodField[];
