/**
 * The control loop. Each tick it finds the scalers whose sampling interval
 * has passed, samples all of them with one batch of PromQL, and for each one:
 * builds role observations, plans with the core (which decides the binding and
 * the whole status), applies the binding write, commits the vector under the
 * fence, writes status when it moved, and reports metrics.
 *
 * Memory per scaler is the last planned status: the windows grow on every pass
 * whether or not the status was written, and a restart reads them back from
 * the object's status.
 */
import { ModelDeploymentSchema, type ModelDeployment } from "../core/api/model-deployment.js";
import {
  ScalerSchema,
  withInferredAlgorithm,
  type Scaler,
  type ScalerSpec,
  type ScalerStatus,
} from "../core/api/scaler.js";
import type { BindingWrite } from "../core/binding/binding.js";
import { acquirePatch, commitPatch, releasePatch, type JsonPatchOp, type PatchTarget } from "../core/binding/patch.js";
import { plan } from "../core/planner/plan.js";
import type { PlanResult } from "../core/planner/types.js";
import { fieldsRead } from "../core/algorithms/reads.js";
import { observeRole, staleAfterSeconds } from "../core/signals/observe.js";
import type { RoleObservation, RoleSamples } from "../core/signals/types.js";
import { ConflictError } from "../adapters/kubernetes/resources.js";
import type { ScalerMetrics, ScalerReport } from "../adapters/telemetry/metrics.js";
import { FailureLog } from "../adapters/retry/backoff.js";
import type { Logger } from "../adapters/telemetry/logger.js";
import { roleReports } from "../adapters/telemetry/role-reports.js";

export const finalizer = "worker.gpustack.ai/mds-scaler";

/** The Kubernetes calls the controller needs (implemented by `KubeResources`). */
export interface ScalerStore {
  listScalers(namespace: string): Promise<unknown[]>;
  /** `fresh` reads the API server itself rather than a watch cache (after a conflict). */
  getTarget(namespace: string, name: string, options?: { fresh?: boolean }): Promise<unknown | undefined>;
  patchTarget(namespace: string, name: string, ops: readonly JsonPatchOp[]): Promise<unknown>;
  patchScaler(namespace: string, name: string, ops: readonly JsonPatchOp[]): Promise<unknown>;
  writeScalerStatus(namespace: string, name: string, status: unknown): Promise<unknown>;
}

/** One scaler's sampling request. */
export interface SampleRequest {
  readonly key: string;
  readonly namespace: string;
  readonly deployment: string;
  readonly roles: readonly string[];
  readonly stableWindowSeconds: number;
  readonly panicWindowSeconds: number;
  readonly intervalSeconds: number;
}

/** Engine signals for many scalers in one batch: key → role → samples. */
export interface SignalSource {
  sample(requests: readonly SampleRequest[]): Promise<ReadonlyMap<string, ReadonlyMap<string, RoleSamples>>>;
}

export interface ControllerDeps {
  readonly store: ScalerStore;
  readonly source: SignalSource;
  readonly metrics: ScalerMetrics;
  readonly logger: Logger;
  readonly nowMs: () => number;
  /** Namespace to watch; empty for all. */
  readonly namespace: string;
}

interface Memory {
  /** The last planned status, newer than the object's when a pass wrote nothing. */
  status: ScalerStatus | undefined;
  lastPassMs: number;
  uid: string;
}

/** Window lengths the sampler needs for a spec: its TokenThroughput windows, or their defaults. */
export function windowsOf(spec: ScalerSpec): { stableWindowSeconds: number; panicWindowSeconds: number } {
  const tt = spec.algorithm.tokenThroughput ?? spec.algorithm.predictive?.tokenThroughput;
  return { stableWindowSeconds: tt?.stableWindowSeconds ?? 180, panicWindowSeconds: tt?.panicWindowSeconds ?? 60 };
}

const maxConflictRetries = 3;
/** Scalers reconciled at once within a pass. */
const reconcileConcurrency = 8;

export class Controller {
  private readonly memory = new Map<string, Memory>();
  private passing = false;
  /** Whether a pass has listed the scalers since this controller (this leadership) started. */
  private listed = false;

  /** Prometheus is logged when it starts failing and when it recovers, not on every pass. */
  private readonly sampling: FailureLog;

  constructor(private readonly deps: ControllerDeps) {
    this.sampling = new FailureLog("sampling from Prometheus", deps.logger);
  }

  /** One tick: every due scaler gets a pass. Returns the keys that passed. */
  async tick(): Promise<string[]> {
    if (this.passing) return [];
    this.passing = true;
    const started = this.deps.nowMs();
    try {
      return await this.passDue();
    } finally {
      this.passing = false;
      const ended = this.deps.nowMs();
      this.deps.metrics.passDuration.observe((ended - started) / 1000);
      this.deps.metrics.passEnded(ended);
    }
  }

  private async passDue(): Promise<string[]> {
    const { store, logger, metrics } = this.deps;
    let items: unknown[];
    try {
      items = await store.listScalers(this.deps.namespace);
    } catch (error) {
      metrics.errors.inc({ kind: "kubernetes" });
      logger.error("list scalers failed", { error });
      return [];
    }
    const nowMs = this.deps.nowMs();
    const scalers: Scaler[] = [];
    const seen = new Set<string>();
    for (const item of items) {
      const parsed = ScalerSchema.safeParse(item);
      if (!parsed.success) {
        metrics.errors.inc({ kind: "invalid_scaler" });
        const meta = (item as { metadata?: { namespace?: string; name?: string } }).metadata;
        logger.warn("skipping a scaler that does not validate", {
          scaler: `${meta?.namespace}/${meta?.name}`,
          problems: parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`),
        });
        continue;
      }
      const scaler = parsed.data;
      const key = scalerKey(scaler);
      seen.add(key);
      const memory = this.memory.get(key);
      const intervalMs = scaler.spec.sampling.intervalSeconds * 1000;
      const deleting = scaler.metadata.deletionTimestamp !== undefined;
      if (
        memory !== undefined &&
        memory.uid === scaler.metadata.uid &&
        !deleting &&
        nowMs - memory.lastPassMs < intervalMs
      )
        continue;
      scalers.push(scaler);
    }
    if (!this.listed) {
      // A new leadership: drop counters of scalers deleted while this replica followed.
      this.listed = true;
      metrics.retain(seen);
    }
    for (const key of [...this.memory.keys()]) {
      if (!seen.has(key)) {
        this.memory.delete(key);
        const [namespace = "", name = ""] = key.split("/");
        metrics.forget(namespace, name);
      }
    }
    if (scalers.length === 0) return [];

    const requests = scalers
      .filter((s) => s.metadata.deletionTimestamp === undefined && !s.spec.suspend)
      .map((s) => {
        const spec = withInferredAlgorithm(s.spec);
        return {
          key: scalerKey(s),
          namespace: namespaceOf(s),
          deployment: s.spec.targetRef.name,
          roles: s.spec.roles.map((r) => r.name),
          intervalSeconds: spec.sampling.intervalSeconds,
          ...windowsOf(spec),
        };
      });
    let samples: ReadonlyMap<string, ReadonlyMap<string, RoleSamples>> = new Map();
    const sampleStartedMs = this.deps.nowMs();
    try {
      samples = requests.length > 0 ? await this.deps.source.sample(requests) : new Map();
      if (requests.length > 0) this.sampling.succeeded(this.deps.nowMs());
    } catch (error) {
      // An unreachable Prometheus is unknown, not zero: every role gets queryFailed below.
      metrics.errors.inc({ kind: "prometheus" });
      this.sampling.failed(error, this.deps.nowMs());
    }

    // Scalers touch different objects, so their API round trips overlap; the bound keeps the API server calm.
    const passed: string[] = [];
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < scalers.length) {
        const scaler = scalers[next++] as Scaler;
        const key = scalerKey(scaler);
        try {
          await this.reconcile(scaler, samples.get(key), nowMs);
          passed.push(key);
        } catch (error) {
          metrics.scalerError(
            namespaceOf(scaler),
            scaler.metadata.name,
            error instanceof ConflictError ? "conflict" : "reconcile",
          );
          logger.error("pass failed", { scaler: key, error });
        }
      }
    };
    const reconcileStartedMs = this.deps.nowMs();
    await Promise.all(Array.from({ length: Math.min(reconcileConcurrency, scalers.length) }, worker));
    logger.debug("pass", {
      scalers: scalers.length,
      sampleMs: reconcileStartedMs - sampleStartedMs,
      reconcileMs: this.deps.nowMs() - reconcileStartedMs,
    });
    return passed.sort();
  }

  private async reconcile(
    scaler: Scaler,
    samples: ReadonlyMap<string, RoleSamples> | undefined,
    nowMs: number,
  ): Promise<void> {
    const { store, metrics, logger } = this.deps;
    const key = scalerKey(scaler);
    const namespace = namespaceOf(scaler);
    const name = scaler.metadata.name;
    const uid = scaler.metadata.uid ?? "";
    const deleting = scaler.metadata.deletionTimestamp !== undefined;
    let memory = this.memory.get(key);
    if (memory === undefined || memory.uid !== uid) {
      memory = { status: scaler.status, lastPassMs: nowMs, uid };
      this.memory.set(key, memory);
    }
    memory.lastPassMs = nowMs;

    if (!deleting && !(scaler.metadata.finalizers ?? []).includes(finalizer)) {
      const ops: JsonPatchOp[] =
        scaler.metadata.finalizers === undefined
          ? [{ op: "add", path: "/metadata/finalizers", value: [finalizer] }]
          : [{ op: "add", path: "/metadata/finalizers/-", value: finalizer }];
      await store.patchScaler(namespace, name, ops);
    }

    const spec = withInferredAlgorithm(scaler.spec);
    let attempt = 0;
    // Set while the replica vector is being written, so a failure there counts as a failed commit.
    let committing = false;
    for (;;) {
      const target = await this.readTarget(namespace, spec.targetRef.name, attempt > 0);
      const observations = deleting ? {} : this.observe(spec, target, samples, nowMs);
      // The core decides the binding, the commit and the whole status; this loop only performs the writes.
      const result = plan({
        scaler: { metadata: scaler.metadata, spec, status: memory.status },
        target,
        observations,
        nowMs,
      });
      try {
        await this.applyBindingWrite(result.bindingWrite ?? { kind: "none" }, target, namespace);
        if (deleting) {
          await this.removeFinalizer(scaler);
          this.memory.delete(key);
          metrics.forget(namespace, name);
          return;
        }
        if (result.commit !== undefined && target !== undefined) {
          const ops = commitPatch(patchTargetOf(target), result.commit.decision);
          committing = true;
          await store.patchTarget(namespace, spec.targetRef.name, ops);
          committing = false;
          metrics.commits.inc(labelsOf(scaler));
          if (result.commit.reason === "ResourceExhausted") metrics.rollbacks.inc(labelsOf(scaler));
          if (result.commit.reason === "ScaleDownAborted") metrics.abortedScaleDowns.inc(labelsOf(scaler));
          if (result.commit.reason === "DonorRelease" || result.commit.reason === "ReceiverAcquire")
            metrics.rebalanceSteps.inc(labelsOf(scaler));
          logger.info("committed", {
            scaler: key,
            vector: result.commit.vector,
            decisionID: result.commit.decision.decisionID,
            reason: result.commit.reason,
          });
        }
        memory.status = result.status;
        if (result.statusChanged) {
          await store.writeScalerStatus(namespace, name, result.status);
        }
        metrics.report(this.reportOf(scaler, spec, result, target, observations));
        return;
      } catch (error) {
        if (!(error instanceof ConflictError) || attempt >= maxConflictRetries) {
          if (committing) metrics.commitFailures.inc(labelsOf(scaler));
          throw error;
        }
        committing = false;
        // The target moved since we read it: re-read and re-plan, never write twice.
        attempt += 1;
        metrics.conflicts.inc(labelsOf(scaler));
        logger.info("target changed during the pass; re-planning", { scaler: key, attempt });
      }
    }
  }

  private async readTarget(namespace: string, name: string, fresh: boolean): Promise<ModelDeployment | undefined> {
    const raw = await this.deps.store.getTarget(namespace, name, { fresh });
    if (raw === undefined) return undefined;
    const parsed = ModelDeploymentSchema.safeParse(raw);
    if (!parsed.success) {
      throw new Error(
        `target ${namespace}/${name} does not have the ModelDeployment shape: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`,
      );
    }
    return parsed.data;
  }

  private async applyBindingWrite(
    write: BindingWrite,
    target: ModelDeployment | undefined,
    namespace: string,
  ): Promise<void> {
    if (target === undefined || write.kind === "none") return;
    const patch =
      write.kind === "acquire"
        ? acquirePatch(patchTargetOf(target), write.binding)
        : releasePatch(patchTargetOf(target));
    if (patch.length === 0) return;
    const updated = ModelDeploymentSchema.safeParse(
      await this.deps.store.patchTarget(namespace, target.metadata.name, patch),
    );
    if (updated.success) {
      // Later writes in this pass are guarded by the version this write produced.
      Object.assign(target.metadata, {
        resourceVersion: updated.data.metadata.resourceVersion,
        annotations: updated.data.metadata.annotations,
        labels: updated.data.metadata.labels,
      });
    }
  }

  private async removeFinalizer(scaler: Scaler): Promise<void> {
    const finalizers = scaler.metadata.finalizers ?? [];
    const index = finalizers.indexOf(finalizer);
    if (index < 0) return;
    await this.deps.store.patchScaler(namespaceOf(scaler), scaler.metadata.name, [
      { op: "test", path: `/metadata/finalizers/${index}`, value: finalizer },
      { op: "remove", path: `/metadata/finalizers/${index}` },
    ]);
  }

  /** Role observations from this pass's samples; a role without samples is unknown, never zero. */
  private observe(
    spec: ScalerSpec,
    target: ModelDeployment | undefined,
    samples: ReadonlyMap<string, RoleSamples> | undefined,
    nowMs: number,
  ): Readonly<Record<string, RoleObservation>> {
    const observations: Record<string, RoleObservation> = {};
    if (target === undefined) return observations;
    const staleAfter = staleAfterSeconds(spec.sampling.intervalSeconds);
    for (const role of target.spec.roles) {
      const ready = target.status?.roles?.find((r) => r.name === role.name)?.ready ?? 0;
      const roleSamples = samples?.get(role.name) ?? { pods: [], queryFailed: { reason: "no sample this pass" } };
      observations[role.name] = observeRole({
        kind: role.kind,
        samples: roleSamples,
        readyReplicas: ready,
        nowMs,
        staleAfterSeconds: staleAfter,
        reads: fieldsRead(spec, role),
      });
    }
    return observations;
  }

  private reportOf(
    scaler: Scaler,
    spec: ScalerSpec,
    result: PlanResult,
    target: ModelDeployment | undefined,
    observations: Readonly<Record<string, RoleObservation>>,
  ): ScalerReport {
    return {
      namespace: namespaceOf(scaler),
      scaler: scaler.metadata.name,
      target: spec.targetRef.name,
      mode: spec.mode,
      ...(result.bindingTerm !== undefined ? { bindingTerm: result.bindingTerm } : {}),
      conditions: (result.status.conditions ?? []).map((c) => ({ type: c.type, status: c.status, reason: c.reason })),
      roles: roleReports(
        spec,
        result.status,
        Object.fromEntries((target?.spec.roles ?? []).map((r) => [r.name, r.kind])),
        observations,
      ),
    };
  }
}

function scalerKey(scaler: Scaler): string {
  return `${namespaceOf(scaler)}/${scaler.metadata.name}`;
}

function namespaceOf(scaler: Scaler): string {
  return scaler.metadata.namespace ?? "default";
}

function labelsOf(scaler: Scaler): { namespace: string; scaler: string; target: string } {
  return { namespace: namespaceOf(scaler), scaler: scaler.metadata.name, target: scaler.spec.targetRef.name };
}

function patchTargetOf(target: ModelDeployment): PatchTarget {
  return {
    resourceVersion: target.metadata.resourceVersion ?? "",
    annotations: target.metadata.annotations,
    labels: target.metadata.labels,
    roleNames: target.spec.roles.map((r) => r.name),
    replicas: Object.fromEntries(target.spec.roles.map((r) => [r.name, r.replicas])),
  };
}
