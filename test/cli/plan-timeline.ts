/**
 * Replays a timeline through `mds-scaler plan`: each pass writes one input
 * document (the previous pass's printed status included), runs the command,
 * reads the printed `{status, commit}` back and applies the commit to the
 * target the way the controller would (replicas, decision annotation, binding
 * annotation, generation). The test plays the ModelDeployment reconciler
 * between passes (admission, readiness, retirement).
 */
import { stringify } from "yaml";
import { bindingAnnotation, decisionAnnotation } from "../../src/core/api/model-deployment.js";
import type { ScalerSpecInput, ScalerStatus } from "../../src/core/api/scaler.js";
import type { Algorithm } from "../../src/core/algorithms/types.js";
import { runPlan } from "../../src/cli/plan.js";
import type { Commit } from "../../src/core/planner/types.js";
import type { RoleObservation } from "../../src/core/signals/types.js";

export interface TimelineRole {
  name: string;
  kind?: "Server" | "Prefill" | "Decode" | "Encode";
  replicas: number;
  instanceType?: string;
}

export interface RoleState {
  ready: number;
  quotaReserved: number;
}

export interface PassOutput {
  readonly status: ScalerStatus;
  readonly commit: Commit | null;
  readonly atSeconds: number;
}

export class Timeline {
  readonly roles: TimelineRole[];
  readonly state = new Map<string, RoleState>();
  retirement: { roleName: string; replicaOrdinal: number; state: string } | undefined;
  generation = 1;
  resourceVersion = 100;
  annotations: Record<string, string>;
  status: ScalerStatus | undefined;
  scalerGeneration = 1;
  readonly passes: PassOutput[] = [];

  constructor(
    readonly spec: ScalerSpecInput,
    roles: TimelineRole[],
    readonly startMs: number,
    readonly algorithm?: Algorithm,
  ) {
    this.roles = roles.map((r) => ({ ...r }));
    for (const r of roles) this.state.set(r.name, { ready: r.replicas, quotaReserved: r.replicas });
    // The controller installs the binding before planning in Active mode.
    this.annotations = { [bindingAnnotation]: JSON.stringify({ scalerName: "llm", scalerUID: "scaler-uid", term: 1 }) };
  }

  replicas(): Record<string, number> {
    return Object.fromEntries(this.roles.map((r) => [r.name, r.replicas]));
  }

  document(atSeconds: number, observations: Record<string, Partial<RoleObservation>>): string {
    return stringify({
      now: new Date(this.startMs + atSeconds * 1000).toISOString(),
      scaler: {
        apiVersion: "worker.gpustack.ai/v1",
        kind: "ModelDeploymentScaler",
        metadata: { name: "llm", namespace: "default", uid: "scaler-uid", generation: this.scalerGeneration },
        spec: this.spec,
        ...(this.status === undefined ? {} : { status: this.status }),
      },
      target: {
        apiVersion: "worker.gpustack.ai/v1",
        kind: "ModelDeployment",
        metadata: {
          name: "llm",
          namespace: "default",
          uid: "target-uid",
          generation: this.generation,
          resourceVersion: String(this.resourceVersion),
          annotations: this.annotations,
        },
        spec: {
          roles: this.roles.map((r) => ({
            name: r.name,
            kind: r.kind ?? "Server",
            replicas: r.replicas,
            ...(r.instanceType === undefined ? {} : { instanceType: r.instanceType }),
          })),
        },
        status: {
          roles: this.roles.map((r) => ({
            name: r.name,
            desired: r.replicas,
            ready: this.state.get(r.name)?.ready ?? 0,
            quotaReserved: this.state.get(r.name)?.quotaReserved ?? 0,
          })),
          ...(this.retirement === undefined ? {} : { retirement: this.retirement }),
        },
      },
      observations: Object.fromEntries(
        Object.entries(observations).map(([role, o]) => {
          const ready = this.state.get(role)?.ready ?? 0;
          return [role, { readyReplicas: ready, sampledReplicas: ready, signalState: "Fresh", ...o }];
        }),
      ),
    });
  }

  /** Runs one pass at `atSeconds`; throws when the command fails. */
  pass(atSeconds: number, observations: Record<string, Partial<RoleObservation>>): PassOutput {
    const text = this.document(atSeconds, observations);
    let out = "";
    let err = "";
    const code = runPlan(
      ["-f", "-", "-o", "json"],
      { stdout: (t) => (out += t), stderr: (t) => (err += t), readFile: () => text },
      this.algorithm === undefined ? {} : { algorithm: this.algorithm },
    );
    if (code !== 0) throw new Error(`plan exited ${code}: ${err}`);
    const parsed = JSON.parse(out) as { status: ScalerStatus; commit: Commit | null };
    this.status = parsed.status;
    if (parsed.commit !== null) this.apply(parsed.commit);
    const result = { ...parsed, atSeconds };
    this.passes.push(result);
    return result;
  }

  /** What the controller does with a commit: one patch of counts and annotations. */
  private apply(commit: Commit): void {
    for (const role of this.roles) role.replicas = commit.vector[role.name] ?? role.replicas;
    this.annotations = {
      ...this.annotations,
      [decisionAnnotation]: JSON.stringify(commit.decision),
      ...(commit.binding === undefined ? {} : { [bindingAnnotation]: JSON.stringify(commit.binding) }),
    };
    this.generation = commit.targetGeneration;
    this.resourceVersion++;
  }

  /** The reconciler admits and readies every replica of a role. */
  admit(role: string, count?: number): void {
    const n = count ?? this.roles.find((r) => r.name === role)?.replicas ?? 0;
    this.state.set(role, { ready: n, quotaReserved: n });
  }
}
