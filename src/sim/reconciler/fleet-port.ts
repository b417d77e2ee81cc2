/**
 * Where the reconciler's replicas run. The reconciler decides when a replica
 * starts and stops; a `FleetPort` makes that real in some simulator.
 */
import type { RoleKind } from "../../core/api/model-deployment.js";
import type { EngineFleet, SimDeploymentSpec, SimRoleSpec } from "../engines/engine-fleet.js";
import { podKey } from "../engines/engine-fleet.js";
import type { ServingKind, SimEngineKind } from "../engines/model.js";

/** What the ModelDeployment says about the replica's surroundings, for ports that need it. */
export interface ReplicaContext {
  /** `spec.engine.name` (`vLLM` or `SGLang`), when the deployment names one. */
  readonly engine: string | undefined;
  /** Every role the deployment declares, in spec order. */
  readonly roles: readonly { readonly name: string; readonly kind: RoleKind }[];
}

export interface FleetPort {
  /** Starts (or keeps) the serving replica; called once its cold start is over. Idempotent. */
  startReplica(
    namespace: string,
    deployment: string,
    role: string,
    ordinal: number,
    context: ReplicaContext,
  ): void | Promise<void>;
  /** Stops the replica; a replica already gone is not an error. */
  stopReplica(namespace: string, deployment: string, role: string, ordinal: number): void | Promise<void>;
}

/** The name the operator's convention gives a replica's (first) pod, and the engine fleet's too. */
export function replicaPodName(deployment: string, role: string, ordinal: number): string {
  return `${deployment}-${role}-${ordinal}`;
}

export interface FleetEvent {
  readonly action: "start" | "stop";
  readonly namespace: string;
  readonly deployment: string;
  readonly role: string;
  readonly ordinal: number;
}

/** Keeps running replicas in a set and every start and stop in a log; for tests and engine-less demos. */
export class RecordingFleet implements FleetPort {
  private readonly running = new Set<string>();
  readonly events: FleetEvent[] = [];

  private static key(namespace: string, deployment: string, role: string, ordinal: number): string {
    return `${namespace}/${deployment}/${role}/${ordinal}`;
  }

  startReplica(namespace: string, deployment: string, role: string, ordinal: number): void {
    this.running.add(RecordingFleet.key(namespace, deployment, role, ordinal));
    this.events.push({ action: "start", namespace, deployment, role, ordinal });
  }

  stopReplica(namespace: string, deployment: string, role: string, ordinal: number): void {
    this.running.delete(RecordingFleet.key(namespace, deployment, role, ordinal));
    this.events.push({ action: "stop", namespace, deployment, role, ordinal });
  }

  isRunning(namespace: string, deployment: string, role: string, ordinal: number): boolean {
    return this.running.has(RecordingFleet.key(namespace, deployment, role, ordinal));
  }

  /** Ordinals of a role's running replicas, ascending. */
  runningOrdinals(namespace: string, deployment: string, role: string): number[] {
    const prefix = `${namespace}/${deployment}/${role}/`;
    return [...this.running]
      .filter((key) => key.startsWith(prefix))
      .map((key) => Number(key.slice(prefix.length)))
      .sort((a, b) => a - b);
  }
}

/** How a role kind serves in the engine simulator; `Encode` has no engine model there. */
export function servingKindOf(kind: RoleKind): ServingKind | undefined {
  switch (kind) {
    case "Server":
      return "unified";
    case "Prefill":
      return "prefill";
    case "Decode":
      return "decode";
    case "Encode":
      return undefined;
  }
}

export function engineKindOf(engine: string | undefined): SimEngineKind {
  return engine?.toLowerCase() === "sglang" ? "sglang" : "vllm";
}

export interface EngineFleetPortOptions {
  /**
   * The fleet deployment to register the first time a replica of an unknown
   * deployment starts. Default: engine and role kinds from the ModelDeployment,
   * no replicas, no workload, no cold start of its own (the reconciler has
   * already waited it out).
   */
  readonly describe?: (namespace: string, deployment: string, context: ReplicaContext) => SimDeploymentSpec;
}

/** The default fleet deployment for a ModelDeployment: its roles with no replicas yet. */
export function defaultFleetDeployment(
  namespace: string,
  deployment: string,
  context: ReplicaContext,
): SimDeploymentSpec {
  const roles: SimRoleSpec[] = [];
  for (const role of context.roles) {
    const serving = servingKindOf(role.kind);
    if (serving !== undefined) roles.push({ name: role.name, serving, replicas: 0 });
  }
  return { namespace, name: deployment, engine: engineKindOf(context.engine), roles, coldStartSeconds: 0 };
}

/**
 * Runs replicas as simulated engine pods in an `EngineFleet`, one pod per
 * replica named `<deployment>-<role>-<ordinal>`. Roles the fleet has no model
 * for (`Encode`) start and stop nothing.
 */
export class EngineFleetPort implements FleetPort {
  constructor(
    private readonly fleet: EngineFleet,
    private readonly options: EngineFleetPortOptions = {},
  ) {}

  startReplica(namespace: string, deployment: string, role: string, ordinal: number, context: ReplicaContext): void {
    // `offered` has one entry per registered deployment: the fleet's only public index of them.
    if (!this.fleet.offered.has(podKey(namespace, deployment))) {
      const describe = this.options.describe ?? defaultFleetDeployment;
      this.fleet.addDeployment(describe(namespace, deployment, context));
    }
    const kind = context.roles.find((r) => r.name === role)?.kind ?? "Server";
    if (servingKindOf(kind) === undefined) return;
    const pod = replicaPodName(deployment, role, ordinal);
    if (this.fleet.pod(namespace, pod) !== undefined) return;
    this.fleet.scaleUp(namespace, deployment, role, pod);
  }

  stopReplica(namespace: string, deployment: string, role: string, ordinal: number): void {
    this.fleet.stopPod(namespace, replicaPodName(deployment, role, ordinal));
  }
}
