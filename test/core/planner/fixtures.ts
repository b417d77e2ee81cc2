/**
 * Builders for planner tests: a defaulted spec from a fragment, a target with
 * roles, observations, and `echo`, an algorithm that recommends exactly what
 * the test asks for (the observation's `runningRequests`), so the tests
 * exercise the planner's rules and not an algorithm's arithmetic.
 */
import { defaultScalerSpec } from "../../../src/core/api/defaulting.js";
import type { ModelDeployment, RoleKind } from "../../../src/core/api/model-deployment.js";
import type { ScalerSpec, ScalerSpecInput, ScalerStatus } from "../../../src/core/api/scaler.js";
import type { Algorithm, RoleRecommendation } from "../../../src/core/algorithms/types.js";
import type { PlanInput, PlanResult } from "../../../src/core/planner/types.js";
import type { RoleObservation } from "../../../src/core/signals/types.js";

export const t0 = Date.parse("2026-11-29T12:00:00Z");
export const seconds = (s: number): number => t0 + s * 1000;

export function specOf(fragment: Partial<ScalerSpecInput> & Pick<ScalerSpecInput, "roles">): ScalerSpec {
  const result = defaultScalerSpec({
    targetRef: { name: "llm" },
    mode: "Active",
    algorithm: {
      type: "Proportional",
      proportional: {
        metric: "RunningRequests",
        roleTargets: fragment.roles.map((r) => ({ name: r.name, target: "1" })),
      },
    },
    ...fragment,
  });
  if (!result.ok) throw new Error(`bad test spec: ${JSON.stringify(result.problems)}`);
  return result.value;
}

export interface RoleFixture {
  readonly name: string;
  readonly replicas: number;
  readonly kind?: RoleKind;
  readonly instanceType?: string;
  readonly ready?: number;
  readonly quotaReserved?: number;
}

export function targetOf(
  roles: readonly RoleFixture[],
  extra: {
    generation?: number;
    retirement?: { roleName: string; replicaOrdinal: number; state: string };
    annotations?: Record<string, string>;
  } = {},
): ModelDeployment {
  return {
    apiVersion: "worker.gpustack.ai/v1",
    kind: "ModelDeployment",
    metadata: {
      name: "llm",
      namespace: "default",
      uid: "target-uid",
      generation: extra.generation ?? 1,
      resourceVersion: "100",
      ...(extra.annotations === undefined ? {} : { annotations: extra.annotations }),
    },
    spec: {
      roles: roles.map((r) => ({
        name: r.name,
        kind: r.kind ?? "Server",
        replicas: r.replicas,
        ...(r.instanceType === undefined ? {} : { instanceType: r.instanceType }),
      })),
    },
    status: {
      roles: roles.map((r) => ({
        name: r.name,
        desired: r.replicas,
        ready: r.ready ?? r.replicas,
        quotaReserved: r.quotaReserved ?? r.replicas,
      })),
      ...(extra.retirement === undefined ? {} : { retirement: extra.retirement }),
    },
  };
}

/** A fresh, fully sampled observation whose `runningRequests` is the wanted count for `echo`. */
export function want(replicas: number, ready = 2, extra: Partial<RoleObservation> = {}): RoleObservation {
  return { readyReplicas: ready, sampledReplicas: ready, signalState: "Fresh", runningRequests: replicas, ...extra };
}

/** Recommends `runningRequests` replicas for every role; no observation means hold. */
export const echo: Algorithm = {
  type: "Proportional",
  recommend(input) {
    const roles: RoleRecommendation[] = input.roles.map((role) => {
      const wanted = role.observation.runningRequests;
      if (wanted === undefined || role.observation.signalState === "Missing") {
        return {
          role: role.name,
          scaled: true,
          replicas: role.currentReplicas,
          reason: "WaitingForMetrics",
          scaleDownHold: { reason: "WaitingForMetrics" },
        };
      }
      return { role: role.name, scaled: true, replicas: Math.max(1, Math.round(wanted)), reason: "Echo" };
    });
    return { roles, predictors: [] };
  },
};

export interface InputOptions {
  readonly spec: ScalerSpec;
  readonly target: ModelDeployment | undefined;
  readonly observations: Record<string, RoleObservation>;
  readonly nowMs?: number;
  readonly status?: ScalerStatus;
  readonly generation?: number;
}

export function inputOf(options: InputOptions): PlanInput {
  return {
    scaler: {
      metadata: { name: "llm", namespace: "default", uid: "scaler-uid", generation: options.generation ?? 1 },
      spec: options.spec,
      status: options.status,
    },
    target: options.target,
    observations: options.observations,
    nowMs: options.nowMs ?? t0,
    algorithm: echo,
  };
}

export function condition(result: PlanResult, type: string): { status: string; reason: string } | undefined {
  return result.status.conditions?.find((c) => c.type === type);
}

export function roleOf(result: PlanResult, name: string) {
  const role = result.status.roles?.find((r) => r.name === name);
  if (role === undefined) throw new Error(`no role ${name} in status`);
  return role;
}
