/**
 * One simulated ModelDeployment: its replicas, their admission and cold
 * start, and the one retirement at a time that removes a replica. Pure state
 * plus calls to the fleet; the reconciler feeds it the observed object and the
 * time, and writes the status it reports.
 */
import type { ModelDeployment, RoleKind } from "../../core/api/model-deployment.js";
import type { FleetPort, ReplicaContext } from "./fleet-port.js";

/** Delays of the simulated operator, in milliseconds of the reconciler's clock. */
export interface ReconcilerTimings {
  /** From admission to a ready replica (pods scheduled, weights loaded, engine answering). */
  readonly coldStartMs: number;
  /** Time a retirement spends in each state before the next one. */
  readonly admitMs: number;
  readonly withdrawMs: number;
  readonly drainMs: number;
  readonly deleteMs: number;
  readonly settleMs: number;
}

/** Real-time defaults in the order of magnitude of the operator's measurements (an idle drain ends ~6 s after delete). */
export const defaultTimings: ReconcilerTimings = {
  coldStartMs: 20_000,
  admitMs: 0,
  withdrawMs: 1_000,
  drainMs: 6_000,
  deleteMs: 2_000,
  settleMs: 1_000,
};

/** `Pending`: waits for quota. `Starting`: holds quota, cold-starting. `Running`: serving. */
export type ReplicaPhase = "Pending" | "Starting" | "Running";

/** The retirement states this simulation passes through (`Disqualified` is never entered here). */
export type SimRetirementState = "Admitted" | "Withdrawing" | "Draining" | "Deleting" | "Settling" | "Aborted";

/** States before the replica is deleted: an abort or a re-declaring scale-up can still keep it. */
const beforeDelete: ReadonlySet<SimRetirementState> = new Set(["Admitted", "Withdrawing", "Draining", "Aborted"]);
/** States in which the replica no longer takes traffic and is not counted ready. */
const withdrawn: ReadonlySet<SimRetirementState> = new Set(["Withdrawing", "Draining", "Deleting", "Settling"]);

/** Annotation that retries an `Aborted` retirement: `roleName:replicaOrdinal:opaqueToken`. */
export const retirementRetryAnnotation = "modeldeployment.gpustack.ai/retirement-retry";

export interface SimReplica {
  readonly ordinal: number;
  phase: ReplicaPhase;
  /** When a `Starting` replica becomes ready. */
  readyAtMs: number;
}

export interface RetirementRun {
  readonly roleName: string;
  readonly replicaOrdinal: number;
  state: SimRetirementState;
  reason: string;
  readonly startedAtMs: number;
  phaseStartedAtMs: number;
  observedGeneration: number | undefined;
  lastConsumedRetryToken: string | undefined;
  /** The current state has been written to status; only then does the next step happen. */
  persisted: boolean;
}

/** What a test or demo has told the reconciler about one deployment. */
export interface DeploymentControls {
  /** Most replicas of a role that may hold quota; the `*` entry applies to every role. Existing reservations are never taken away. */
  readonly quotaLimits: Map<string, number>;
  /** Every retirement ends `Aborted` when its drain time runs out, as if the replica never went idle. */
  abortRetirements: boolean;
}

export const allRoles = "*";

export function newControls(): DeploymentControls {
  return { quotaLimits: new Map(), abortRetirements: false };
}

export function quotaLimit(controls: DeploymentControls, role: string): number {
  return Math.min(controls.quotaLimits.get(role) ?? Infinity, controls.quotaLimits.get(allRoles) ?? Infinity);
}

export interface StepRequests {
  /** Abort the running retirement now, if it has not reached `Deleting`. */
  readonly abort: boolean;
  /** Forget an `Aborted` retirement. */
  readonly clear: boolean;
}

export type ReconcilerEvent =
  | {
      readonly type: "ReplicaAdmitted" | "ReplicaReady" | "ReplicaCancelled" | "ReplicaStopped";
      readonly namespace: string;
      readonly deployment: string;
      readonly role: string;
      readonly ordinal: number;
    }
  | {
      readonly type: "Retirement";
      readonly namespace: string;
      readonly deployment: string;
      readonly role: string;
      readonly ordinal: number;
      /** `Completed` when cleared after settling, `Cleared` when kept by a re-declaring scale-up or cleared on request. */
      readonly state: SimRetirementState | "Completed" | "Cleared";
      readonly reason: string;
    };

export interface StepEnvironment {
  readonly nowMs: number;
  readonly timings: ReconcilerTimings;
  readonly controls: DeploymentControls;
  readonly requests: StepRequests;
  readonly fleet: FleetPort;
  readonly onEvent: (event: ReconcilerEvent) => void;
  readonly onError: (error: Error) => void;
}

/** The status keys the reconciler owns; written with a merge patch. */
export interface SimStatus {
  readonly observedGeneration: number | null;
  readonly roles: readonly {
    readonly name: string;
    readonly kind: RoleKind;
    readonly desired: number;
    readonly ready: number;
    readonly quotaReserved: number;
  }[];
  /** Every key present (null when unset), so a merge patch leaves no stale key behind. */
  readonly retirement: {
    readonly roleName: string;
    readonly replicaOrdinal: number;
    readonly state: SimRetirementState;
    readonly reason: string;
    readonly startedAt: string;
    readonly phaseStartedAt: string;
    readonly observedGeneration: number | null;
    readonly lastConsumedRetryToken: string | null;
  } | null;
}

/** A read-only view of the simulation, for tests and logs. */
export interface DeploymentSnapshot {
  readonly uid: string | undefined;
  readonly roles: Readonly<Record<string, readonly { readonly ordinal: number; readonly phase: ReplicaPhase }[]>>;
  readonly retirement: Readonly<Omit<RetirementRun, "persisted">> | undefined;
}

/** Retry delay for a replica whose start failed in the fleet. */
const fleetRetryMs = 1_000;

function phaseDurationMs(state: SimRetirementState, timings: ReconcilerTimings): number {
  switch (state) {
    case "Admitted":
      return timings.admitMs;
    case "Withdrawing":
      return timings.withdrawMs;
    case "Draining":
      return timings.drainMs;
    case "Deleting":
      return timings.deleteMs;
    case "Settling":
      return timings.settleMs;
    case "Aborted":
      return Infinity;
  }
}

export class DeploymentSim {
  private uid: string | undefined;
  private generation: number | undefined;
  private readonly roles = new Map<string, Map<number, SimReplica>>();
  private retirement: RetirementRun | undefined;
  /** JSON of the last status written, so an unchanged status is not written again. */
  lastWrittenStatus: string | undefined;

  constructor(
    readonly namespace: string,
    readonly name: string,
  ) {}

  /** Brings the simulation up to date with the observed object at `env.nowMs`. */
  async step(md: ModelDeployment, env: StepEnvironment): Promise<void> {
    const uid = md.metadata.uid;
    if (this.uid !== undefined && uid !== this.uid) await this.teardown(env);
    this.uid = uid;
    this.generation = md.metadata.generation;

    const declared = new Map(md.spec.roles.map((r) => [r.name, r.replicas]));
    const count = (role: string): number => declared.get(role) ?? 0;
    const context: ReplicaContext = {
      engine: engineName(md),
      roles: md.spec.roles.map((r) => ({ name: r.name, kind: r.kind })),
    };

    this.updateRetirement(md, count, env);
    await this.advanceRetirement(env);
    this.reconcileReplicas(md, count, env);
    await this.finishColdStarts(context, env);
    this.startRetirement(md, count, env);
  }

  /** Adoption by a re-declaring scale-up, explicit clear, retry and abort requests. */
  private updateRetirement(md: ModelDeployment, count: (role: string) => number, env: StepEnvironment): void {
    const r = this.retirement;
    if (r === undefined) return;
    if (beforeDelete.has(r.state) && r.replicaOrdinal < count(r.roleName)) {
      // The spec wants the replica again and it still exists: keep it, drop the retirement.
      this.retirement = undefined;
      this.emitRetirement(env, r, "Cleared", "the spec declares the replica again; it is kept");
      return;
    }
    if (r.state === "Aborted" && env.requests.clear) {
      this.retirement = undefined;
      this.emitRetirement(env, r, "Cleared", "cleared on request");
      return;
    }
    if (r.state === "Aborted") {
      const retry = parseRetry(md.metadata.annotations?.[retirementRetryAnnotation]);
      if (
        retry !== undefined &&
        retry.roleName === r.roleName &&
        retry.replicaOrdinal === r.replicaOrdinal &&
        retry.token !== r.lastConsumedRetryToken
      ) {
        r.lastConsumedRetryToken = retry.token;
        this.enter(r, "Admitted", `retried with token ${retry.token}`, env);
        r.observedGeneration = this.generation;
      }
      return;
    }
    if (env.requests.abort && beforeDelete.has(r.state)) {
      this.enter(r, "Aborted", "aborted on request before delete; the replica is retained", env);
    }
  }

  /** Moves the retirement one state on once its current state is written and its time is up. */
  private async advanceRetirement(env: StepEnvironment): Promise<void> {
    const r = this.retirement;
    if (r === undefined || !r.persisted || env.nowMs < r.phaseStartedAtMs + phaseDurationMs(r.state, env.timings))
      return;
    switch (r.state) {
      case "Admitted":
        this.enter(r, "Withdrawing", "removed from routing; waiting for routers to confirm", env);
        return;
      case "Withdrawing":
        this.enter(r, "Draining", "waiting for in-flight requests to finish", env);
        return;
      case "Draining":
        if (env.controls.abortRetirements) {
          this.enter(r, "Aborted", "drain budget spent before the replica went idle; the replica is retained", env);
          return;
        }
        this.enter(r, "Deleting", "replica idle; deleting its pods", env);
        await this.stopReplica(r.roleName, r.replicaOrdinal, env);
        return;
      case "Deleting":
        this.enter(r, "Settling", "pods gone; releasing the workload", env);
        return;
      case "Settling":
        this.retirement = undefined;
        this.emitRetirement(env, r, "Completed", "replica removed");
        return;
      case "Aborted":
        return;
    }
  }

  /** Adds declared replicas, cancels surplus ones that never ran, admits what quota allows. */
  private reconcileReplicas(md: ModelDeployment, count: (role: string) => number, env: StepEnvironment): void {
    const names = new Set([...md.spec.roles.map((r) => r.name), ...this.roles.keys()]);
    for (const role of names) {
      let replicas = this.roles.get(role);
      if (replicas === undefined) this.roles.set(role, (replicas = new Map()));
      const wanted = count(role);
      for (const replica of [...replicas.values()]) {
        // A replica that never served has no pod to drain: it is dropped at once.
        if (replica.ordinal >= wanted && replica.phase !== "Running") {
          replicas.delete(replica.ordinal);
          this.emit(env, "ReplicaCancelled", role, replica.ordinal);
        }
      }
      for (let ordinal = 0; ordinal < wanted; ordinal++) {
        if (replicas.has(ordinal)) continue;
        // An ordinal still being deleted is reused only once its retirement is over.
        const r = this.retirement;
        if (r !== undefined && r.roleName === role && r.replicaOrdinal === ordinal) continue;
        replicas.set(ordinal, { ordinal, phase: "Pending", readyAtMs: Infinity });
      }
      let reserved = [...replicas.values()].filter((r) => r.phase !== "Pending").length;
      const limit = quotaLimit(env.controls, role);
      for (const replica of sortedByOrdinal(replicas)) {
        if (replica.phase !== "Pending" || reserved >= limit) continue;
        replica.phase = "Starting";
        replica.readyAtMs = env.nowMs + env.timings.coldStartMs;
        reserved += 1;
        this.emit(env, "ReplicaAdmitted", role, replica.ordinal);
      }
      if (replicas.size === 0 && !declared(md, role)) this.roles.delete(role);
    }
  }

  private async finishColdStarts(context: ReplicaContext, env: StepEnvironment): Promise<void> {
    for (const [role, replicas] of this.roles) {
      for (const replica of sortedByOrdinal(replicas)) {
        if (replica.phase !== "Starting" || replica.readyAtMs > env.nowMs) continue;
        try {
          await env.fleet.startReplica(this.namespace, this.name, role, replica.ordinal, context);
        } catch (error) {
          env.onError(
            new Error(`start replica ${role}/${replica.ordinal} of ${this.namespace}/${this.name} in the fleet`, {
              cause: error,
            }),
          );
          replica.readyAtMs = env.nowMs + fleetRetryMs;
          continue;
        }
        replica.phase = "Running";
        this.emit(env, "ReplicaReady", role, replica.ordinal);
      }
    }
  }

  /** With no retirement in the way, retires the highest surplus ordinal of the first role (spec order) that has one. */
  private startRetirement(md: ModelDeployment, count: (role: string) => number, env: StepEnvironment): void {
    if (this.retirement !== undefined) return;
    const order = [
      ...md.spec.roles.map((r) => r.name),
      ...[...this.roles.keys()].filter((name) => !declared(md, name)),
    ];
    for (const role of order) {
      const wanted = count(role);
      const surplus = sortedByOrdinal(this.roles.get(role) ?? new Map<number, SimReplica>()).filter(
        (r) => r.ordinal >= wanted && r.phase === "Running",
      );
      const victim = surplus.at(-1);
      if (victim === undefined) continue;
      const run: RetirementRun = {
        roleName: role,
        replicaOrdinal: victim.ordinal,
        state: "Admitted",
        reason: `replicas of ${role} reduced to ${wanted}; highest ordinal first`,
        startedAtMs: env.nowMs,
        phaseStartedAtMs: env.nowMs,
        observedGeneration: this.generation,
        lastConsumedRetryToken: undefined,
        persisted: false,
      };
      this.retirement = run;
      this.emitRetirement(env, run, "Admitted", run.reason);
      return;
    }
  }

  private enter(r: RetirementRun, state: SimRetirementState, reason: string, env: StepEnvironment): void {
    r.state = state;
    r.reason = reason;
    r.phaseStartedAtMs = env.nowMs;
    r.persisted = false;
    this.emitRetirement(env, r, state, reason);
  }

  private async stopReplica(role: string, ordinal: number, env: StepEnvironment): Promise<void> {
    this.roles.get(role)?.delete(ordinal);
    try {
      await env.fleet.stopReplica(this.namespace, this.name, role, ordinal);
    } catch (error) {
      // The replica is gone from the deployment either way; a fleet that failed to stop it is reported, not retried.
      env.onError(
        new Error(`stop replica ${role}/${ordinal} of ${this.namespace}/${this.name} in the fleet`, { cause: error }),
      );
    }
    this.emit(env, "ReplicaStopped", role, ordinal);
  }

  /** Stops every running replica and forgets the deployment (deleted, or replaced under the same name). */
  async teardown(env: Pick<StepEnvironment, "fleet" | "onEvent" | "onError">): Promise<void> {
    for (const [role, replicas] of this.roles) {
      for (const replica of sortedByOrdinal(replicas)) {
        if (replica.phase !== "Running") continue;
        try {
          await env.fleet.stopReplica(this.namespace, this.name, role, replica.ordinal);
        } catch (error) {
          env.onError(
            new Error(`stop replica ${role}/${replica.ordinal} of ${this.namespace}/${this.name} in the fleet`, {
              cause: error,
            }),
          );
        }
        env.onEvent({
          type: "ReplicaStopped",
          namespace: this.namespace,
          deployment: this.name,
          role,
          ordinal: replica.ordinal,
        });
      }
    }
    this.roles.clear();
    this.retirement = undefined;
    this.uid = undefined;
    this.generation = undefined;
    this.lastWrittenStatus = undefined;
  }

  /** The status the simulation reports for `md`. */
  status(md: ModelDeployment): SimStatus {
    const r = this.retirement;
    return {
      observedGeneration: this.generation ?? null,
      roles: md.spec.roles.map((role) => {
        const replicas = [...(this.roles.get(role.name)?.values() ?? [])];
        const isWithdrawn = (replica: SimReplica): boolean =>
          r !== undefined && r.roleName === role.name && r.replicaOrdinal === replica.ordinal && withdrawn.has(r.state);
        return {
          name: role.name,
          kind: role.kind,
          desired: role.replicas,
          ready: replicas.filter((replica) => replica.phase === "Running" && !isWithdrawn(replica)).length,
          quotaReserved: replicas.filter((replica) => replica.phase !== "Pending").length,
        };
      }),
      retirement:
        r === undefined
          ? null
          : {
              roleName: r.roleName,
              replicaOrdinal: r.replicaOrdinal,
              state: r.state,
              reason: r.reason,
              startedAt: new Date(r.startedAtMs).toISOString(),
              phaseStartedAt: new Date(r.phaseStartedAtMs).toISOString(),
              observedGeneration: r.observedGeneration ?? null,
              lastConsumedRetryToken: r.lastConsumedRetryToken ?? null,
            },
    };
  }

  /** The status as written now: the retirement's current state may move on. */
  markWritten(statusJson: string): void {
    this.lastWrittenStatus = statusJson;
    if (this.retirement !== undefined) this.retirement.persisted = true;
  }

  /** When the next timed change is due (a cold start ends, a written retirement state runs out). */
  nextDueMs(timings: ReconcilerTimings): number {
    let next = Infinity;
    for (const replicas of this.roles.values()) {
      for (const replica of replicas.values())
        if (replica.phase === "Starting") next = Math.min(next, replica.readyAtMs);
    }
    const r = this.retirement;
    if (r !== undefined && r.persisted) next = Math.min(next, r.phaseStartedAtMs + phaseDurationMs(r.state, timings));
    return next;
  }

  snapshot(): DeploymentSnapshot {
    const roles: Record<string, { ordinal: number; phase: ReplicaPhase }[]> = {};
    for (const [role, replicas] of this.roles)
      roles[role] = sortedByOrdinal(replicas).map((r) => ({ ordinal: r.ordinal, phase: r.phase }));
    const r = this.retirement;
    return {
      uid: this.uid,
      roles,
      retirement:
        r === undefined
          ? undefined
          : {
              roleName: r.roleName,
              replicaOrdinal: r.replicaOrdinal,
              state: r.state,
              reason: r.reason,
              startedAtMs: r.startedAtMs,
              phaseStartedAtMs: r.phaseStartedAtMs,
              observedGeneration: r.observedGeneration,
              lastConsumedRetryToken: r.lastConsumedRetryToken,
            },
    };
  }

  private emit(
    env: StepEnvironment,
    type: "ReplicaAdmitted" | "ReplicaReady" | "ReplicaCancelled" | "ReplicaStopped",
    role: string,
    ordinal: number,
  ): void {
    env.onEvent({ type, namespace: this.namespace, deployment: this.name, role, ordinal });
  }

  private emitRetirement(
    env: StepEnvironment,
    r: RetirementRun,
    state: SimRetirementState | "Completed" | "Cleared",
    reason: string,
  ): void {
    env.onEvent({
      type: "Retirement",
      namespace: this.namespace,
      deployment: this.name,
      role: r.roleName,
      ordinal: r.replicaOrdinal,
      state,
      reason,
    });
  }
}

function sortedByOrdinal(replicas: Map<number, SimReplica>): SimReplica[] {
  return [...replicas.values()].sort((a, b) => a.ordinal - b.ordinal);
}

function declared(md: ModelDeployment, role: string): boolean {
  return md.spec.roles.some((r) => r.name === role);
}

function engineName(md: ModelDeployment): string | undefined {
  const engine: unknown = (md.spec as { engine?: unknown }).engine;
  const name = (engine as { name?: unknown } | undefined)?.name;
  return typeof name === "string" ? name : undefined;
}

/** `roleName:replicaOrdinal:token`; the token may itself contain colons. */
export function parseRetry(
  value: string | undefined,
): { roleName: string; replicaOrdinal: number; token: string } | undefined {
  if (value === undefined) return undefined;
  const match = /^([^:]+):(\d+):(.+)$/.exec(value);
  if (match === null) return undefined;
  const [, roleName, ordinal, token] = match;
  if (roleName === undefined || ordinal === undefined || token === undefined) return undefined;
  return { roleName, replicaOrdinal: Number(ordinal), token };
}
