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
import type { LatencyGuardReading } from "../core/algorithms/ttft-reading.js";
import { ModelDeploymentSchema, type LeaderToken, type ModelDeployment } from "../core/api/model-deployment.js";
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
import { withLeaderToken } from "../core/planner/decision-id.js";
import type { PlanResult } from "../core/planner/types.js";
import { fieldsRead } from "../core/algorithms/reads.js";
import { observeRole, staleAfterSeconds } from "../core/signals/observe.js";
import type { RoleObservation, RoleSamples } from "../core/signals/types.js";
import { NotLeaderError } from "../adapters/kubernetes/not-leader.js";
import type { ScalerMetrics, ScalerReport } from "../adapters/telemetry/metrics.js";
import { backoffDelayMs, type BackoffPolicy } from "../adapters/retry/backoff.js";
import { FailureLog } from "../adapters/retry/failure-log.js";
import { parseDecisionAnnotation } from "../core/binding/binding.js";
import type { Commit } from "../core/planner/types.js";
import type { Logger } from "../adapters/telemetry/logger.js";
import { roleReports } from "../adapters/telemetry/role-reports.js";
import {
  unrefSleep,
  type Clock,
  type SampleRequest,
  type ScalerStore,
  type SignalSource,
  type GuardedWrite,
} from "./ports.js";
import { samplingWindowsOf } from "../core/algorithms/windows.js";

export const finalizer = "worker.gpustack.ai/mds-scaler";

export type { SampleRequest, ScalerStore, SignalSource, GuardedWrite } from "./ports.js";

export interface ControllerDeps {
  readonly store: ScalerStore;
  readonly source: SignalSource;
  readonly metrics: ScalerMetrics;
  readonly logger: Logger;
  readonly nowMs: Clock["nowMs"];
  /** Namespace to watch; empty for all. */
  readonly namespace: string;
  /** Waits for retries and deadlines; default a timer that does not hold the process. */
  readonly sleep?: Clock["sleep"];
  /** Uniform in [0, 1): the jitter of the retry back-off. */
  readonly random?: () => number;
  /** The current leadership's token, stamped on every decision (absent without leader election). */
  readonly leaderToken?: () => LeaderToken | undefined;
  /** How the latency guard reads TTFT (`--latency-guard-reading`); the planner's default, `queueing`, when absent. */
  readonly latencyGuardReading?: LatencyGuardReading;
  /** How often Prometheus scrapes the engines, seconds (`--engine-scrape-interval`): `MetricsReady` names a window too short. */
  readonly engineScrapeIntervalSeconds?: number;
}

interface Memory {
  /** The last planned status, newer than the object's when a pass wrote nothing. */
  status: ScalerStatus | undefined;
  lastPassMs: number;
  uid: string;
  /**
   * What of the planned status has not reached the API server: the next pass writes it even if nothing
   * moved; while a commit's records are missing (`Record`) no new commit is made.
   */
  unwritten: "Nothing" | "Status" | "Record";
  /** The scaler's resourceVersion this pass read (or its own finalizer patch produced). */
  scalerVersion?: string | undefined;
}

const maxConflictRetries = 3;

/** The target changed under every re-plan of one pass. */
class TargetKeptChanging extends Error {
  override readonly name = "TargetKeptChanging";
}
/** The scaler changed between the list and the status write: the next pass writes the status. */
class StatusRaced extends Error {
  override readonly name = "StatusRaced";
}
/** Attempts of a status write that carries a commit record, within one pass. */
const recordWriteAttempts = 4;
const recordWriteBackoff: BackoffPolicy = { initialMs: 250, maxMs: 2_000 };
/** Scalers reconciled at once within a pass. */
const reconcileConcurrency = 8;

export class Controller {
  private readonly memory = new Map<string, Memory>();
  /** Scalers whose pass is still running (past its deadline): skipped until it ends. */
  private readonly running = new Set<string>();
  private readonly sleep: (ms: number) => Promise<void>;
  private passing = false;
  /** Set when a write of this pass was refused for lost leadership: the pass ends without further writes. */
  private leadershipLost = false;
  /** Whether a pass has listed the scalers since this controller (this leadership) started. */
  private listed = false;

  /** Prometheus is logged when it starts failing and when it recovers, not on every pass. */
  private readonly sampling: FailureLog;

  constructor(private readonly deps: ControllerDeps) {
    this.sampling = new FailureLog("sampling from Prometheus", deps.logger);
    this.sleep = deps.sleep ?? unrefSleep;
  }

  /**
   * Validation results by the watch cache's object: the cache hands out the
   * same object until the scaler changes, and validating a thousand unchanged
   * scalers every pass was about a sixth of a pass with nothing to do.
   */
  private readonly parsedScalers = new WeakMap<object, ReturnType<typeof ScalerSchema.safeParse>>();

  private parseScaler(item: unknown): ReturnType<typeof ScalerSchema.safeParse> {
    if (typeof item !== "object" || item === null) return ScalerSchema.safeParse(item);
    let parsed = this.parsedScalers.get(item);
    if (parsed === undefined) this.parsedScalers.set(item, (parsed = ScalerSchema.safeParse(item)));
    return parsed;
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
      const parsed = this.parseScaler(item);
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
      if (this.running.has(key)) continue;
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
          ...samplingWindowsOf(spec),
        };
      });
    let samples: ReadonlyMap<string, ReadonlyMap<string, RoleSamples>> = new Map();
    const sampleStartedMs = this.deps.nowMs();
    try {
      samples = requests.length > 0 ? await this.sampleWithinDeadline(requests) : new Map();
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
      while (next < scalers.length && !this.leadershipLost) {
        const scaler = scalers[next++] as Scaler;
        const key = scalerKey(scaler);
        if (await this.passWithinDeadline(scaler, samples.get(key), nowMs)) passed.push(key);
      }
    };
    this.leadershipLost = false;
    const reconcileStartedMs = this.deps.nowMs();
    await Promise.all(Array.from({ length: Math.min(reconcileConcurrency, scalers.length) }, worker));
    logger.debug("pass", {
      scalers: scalers.length,
      sampleMs: reconcileStartedMs - sampleStartedMs,
      reconcileMs: this.deps.nowMs() - reconcileStartedMs,
    });
    return passed.sort();
  }

  /** The batch of signals, waited for until the shortest interval among them: a hanging source is a failed one. */
  private async sampleWithinDeadline(
    requests: readonly SampleRequest[],
  ): Promise<ReadonlyMap<string, ReadonlyMap<string, RoleSamples>>> {
    const deadlineMs = Math.min(...requests.map((r) => r.intervalSeconds * 1000));
    const late = this.sleep(deadlineMs).then(() => "late" as const);
    const answer = await Promise.race([this.deps.source.sample(requests), late]);
    if (answer === "late") throw new Error(`sampling gave no answer within ${deadlineMs} ms`);
    return answer;
  }

  /**
   * One scaler's pass, waited for until its deadline (its sampling interval):
   * a scaler whose call hangs keeps running on its own, skipped by later
   * ticks until it ends, and the tick goes on with the others.
   */
  private async passWithinDeadline(
    scaler: Scaler,
    samples: ReadonlyMap<string, RoleSamples> | undefined,
    nowMs: number,
  ): Promise<boolean> {
    const key = scalerKey(scaler);
    const run = this.reconcile(scaler, samples, nowMs).then(
      () => true,
      (error: unknown) => {
        if (error instanceof NotLeaderError) {
          // Leadership ended during the pass: the new leader plans these scalers; no write of this pass is sent.
          if (!this.leadershipLost) this.deps.logger.warn("leadership lost during the pass", { scaler: key, error });
          this.leadershipLost = true;
          return false;
        }
        this.deps.metrics.scalerError(
          namespaceOf(scaler),
          scaler.metadata.name,
          error instanceof TargetKeptChanging || error instanceof StatusRaced ? "conflict" : "reconcile",
        );
        this.deps.logger.error("pass failed", { scaler: key, error });
        return false;
      },
    );
    this.running.add(key);
    void run.finally(() => this.running.delete(key));
    const deadlineMs = scaler.spec.sampling.intervalSeconds * 1000;
    const late = this.sleep(deadlineMs).then(() => "late" as const);
    const outcome = await Promise.race([run, late]);
    if (outcome !== "late") return outcome;
    this.deps.logger.warn("a pass outlived its interval; later ticks skip the scaler until it ends", {
      scaler: key,
      deadlineMs,
    });
    return false;
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
      memory = { status: scaler.status, lastPassMs: nowMs, uid, unwritten: "Nothing" };
      this.memory.set(key, memory);
    }
    memory.lastPassMs = nowMs;
    // The scaler version the status write is guarded by: a status planned from an older read is never forced.
    memory.scalerVersion = scaler.metadata.resourceVersion;

    if (!deleting && !(scaler.metadata.finalizers ?? []).includes(finalizer)) {
      const ops: JsonPatchOp[] =
        scaler.metadata.finalizers === undefined
          ? [{ op: "add", path: "/metadata/finalizers", value: [finalizer] }]
          : [{ op: "add", path: "/metadata/finalizers/-", value: finalizer }];
      const patched = (await store.patchScaler(namespace, name, ops)) as { metadata?: { resourceVersion?: string } };
      memory.scalerVersion = patched?.metadata?.resourceVersion ?? memory.scalerVersion;
    }

    const spec = withInferredAlgorithm(scaler.spec);
    let attempt = 0;
    for (;;) {
      const target = await this.readTarget(namespace, spec.targetRef.name, attempt > 0);
      const observations = deleting ? {} : this.observe(spec, target, samples, nowMs);
      // The core decides the binding, the commit and the whole status; this loop only performs the writes.
      const result = plan({
        scaler: { metadata: scaler.metadata, spec, status: memory.status },
        target,
        observations,
        nowMs,
        latencyGuardReading: this.deps.latencyGuardReading,
        engineScrapeIntervalSeconds: this.deps.engineScrapeIntervalSeconds,
      });
      const written = await this.performWrites(scaler, memory, result, target);
      if (written.kind === "Done") {
        if (!deleting) metrics.report(this.reportOf(scaler, spec, result, target, observations));
        return;
      }
      // The target moved since we read it: nothing was applied; re-read and re-plan, never write twice.
      if (attempt >= maxConflictRetries) throw new TargetKeptChanging(`${key}: ${written.message}`);
      attempt += 1;
      metrics.conflicts.inc(labelsOf(scaler));
      logger.info("target changed during the pass; re-planning", { scaler: key, attempt });
    }
  }

  /** The writes a plan asks for, in order: binding, finalizer removal or commit, then status. */
  private async performWrites(
    scaler: Scaler,
    memory: Memory,
    result: PlanResult,
    target: ModelDeployment | undefined,
  ): Promise<{ readonly kind: "Done" } | { readonly kind: "Conflict"; readonly message: string }> {
    const { metrics, logger } = this.deps;
    const namespace = namespaceOf(scaler);
    const name = scaler.metadata.name;
    const binding = await this.applyBindingWrite(result.bindingWrite ?? { kind: "none" }, target, namespace);
    if (binding.kind === "Conflict") return binding;
    if (scaler.metadata.deletionTimestamp !== undefined) {
      await this.removeFinalizer(scaler);
      this.memory.delete(scalerKey(scaler));
      metrics.forget(namespace, name);
      return { kind: "Done" };
    }
    if (result.commit !== undefined && target !== undefined) {
      // An earlier commit's records that never reached status land first: one unstored record at most.
      if (memory.unwritten === "Record" && memory.status !== undefined) {
        await this.writeStatus(memory, namespace, name, memory.status, "Record");
      }
      const committed = await this.commitTarget(namespace, target, result.commit).catch((error: unknown) => {
        // A write refused for lost leadership was never sent: the new leader commits, nothing failed here.
        if (!(error instanceof NotLeaderError)) metrics.commitFailures.inc(labelsOf(scaler));
        throw error;
      });
      if (committed.kind === "Conflict") return committed;
      this.countCommit(scaler, result.commit);
      logger.info("committed", {
        scaler: scalerKey(scaler),
        vector: result.commit.vector,
        decisionID: result.commit.decision.decisionID,
        reason: result.commit.reason,
      });
    }
    memory.status = result.status;
    if (result.statusChanged || memory.unwritten !== "Nothing") {
      // A commit's records (now or from an earlier pass) must land: retried, never dropped.
      const carriesRecord = result.commit !== undefined || memory.unwritten === "Record";
      await this.writeStatus(memory, namespace, name, result.status, carriesRecord ? "Record" : "Status");
    }
    return { kind: "Done" };
  }

  private countCommit(scaler: Scaler, commit: Commit): void {
    const { metrics } = this.deps;
    metrics.commits.inc(labelsOf(scaler));
    if (commit.reason === "ResourceExhausted") metrics.rollbacks.inc(labelsOf(scaler));
    if (commit.reason === "ScaleDownAborted") metrics.abortedScaleDowns.inc(labelsOf(scaler));
    if (commit.reason === "DonorRelease" || commit.reason === "ReceiverAcquire")
      metrics.rebalanceSteps.inc(labelsOf(scaler));
  }

  /**
   * Writes the vector and its decision. An answer that never came (a timeout,
   * a dropped connection) is ambiguous: the server may have applied the write.
   * The target is read back, and a decision that landed counts as committed.
   * One that lands later still is rebuilt by the next pass's plan.
   */
  private async commitTarget(namespace: string, target: ModelDeployment, commit: Commit): Promise<GuardedWrite> {
    const name = target.metadata.name;
    try {
      const decision = withLeaderToken(commit.decision, this.deps.leaderToken?.());
      return await this.deps.store.patchTarget(namespace, name, commitPatch(patchTargetOf(target), decision));
    } catch (error) {
      // A write refused for lost leadership was never sent: nothing to read back.
      if (error instanceof NotLeaderError) throw error;
      const landed = await this.decisionOnTarget(namespace, name).catch(() => undefined);
      if (landed !== commit.decision.decisionID) throw error;
      this.deps.logger.warn("the commit's answer was lost; the target carries its decision", {
        target: `${namespace}/${name}`,
        decisionID: landed,
        error,
      });
      return { kind: "Written", object: undefined };
    }
  }

  private async decisionOnTarget(namespace: string, name: string): Promise<string | undefined> {
    const target = await this.readTarget(namespace, name, true);
    const decision = parseDecisionAnnotation(target?.metadata.annotations ?? {});
    return decision.state === "valid" ? decision.value.decisionID : undefined;
  }

  /**
   * Writes status; one carrying a commit's records is retried with back-off. The memory says whether it
   * landed.
   */
  private async writeStatus(
    memory: Memory,
    namespace: string,
    name: string,
    status: ScalerStatus,
    carries: "Status" | "Record",
  ): Promise<void> {
    const sleep = this.sleep;
    const random = this.deps.random ?? Math.random;
    const attempts = carries === "Record" ? recordWriteAttempts : 1;
    for (let attempt = 1; ; attempt++) {
      let written: GuardedWrite;
      try {
        written = await this.deps.store.writeScalerStatus(namespace, name, status, {
          resourceVersion: memory.scalerVersion,
        });
      } catch (error) {
        memory.unwritten = carries;
        if (attempt >= attempts || error instanceof NotLeaderError) throw error;
        this.deps.logger.warn("status write failed; retrying", { scaler: `${namespace}/${name}`, attempt, error });
        await sleep(backoffDelayMs(attempt, random(), recordWriteBackoff));
        continue;
      }
      if (written.kind === "Written") {
        memory.unwritten = "Nothing";
        // A second status write in this pass (the records first, then the new status) is guarded by this one's version.
        const version = (written.object as { metadata?: { resourceVersion?: string } } | undefined)?.metadata
          ?.resourceVersion;
        if (version !== undefined) memory.scalerVersion = version;
        return;
      }
      // The scaler moved since it was listed: retrying with the same version cannot land. The next pass
      // re-plans from a fresh list and writes then, even if nothing else moved.
      memory.unwritten = carries;
      throw new StatusRaced(`write status of ${namespace}/${name}: ${written.message}`);
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
  ): Promise<GuardedWrite> {
    const nothing: GuardedWrite = { kind: "Written", object: undefined };
    if (target === undefined || write.kind === "none") return nothing;
    const patch =
      write.kind === "acquire"
        ? acquirePatch(patchTargetOf(target), write.binding)
        : releasePatch(patchTargetOf(target));
    if (patch.length === 0) return nothing;
    const written = await this.deps.store.patchTarget(namespace, target.metadata.name, patch);
    if (written.kind === "Conflict") return written;
    const updated = ModelDeploymentSchema.safeParse(written.object);
    if (updated.success) {
      // Later writes in this pass are guarded by the version this write produced.
      Object.assign(target.metadata, {
        resourceVersion: updated.data.metadata.resourceVersion,
        annotations: updated.data.metadata.annotations,
        labels: updated.data.metadata.labels,
      });
    }
    return written;
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
