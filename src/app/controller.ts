/**
 * The control loop. Each tick it finds the scalers whose sampling interval
 * has passed, samples all of them with one batch of PromQL, and for each one:
 * builds role observations, plans with the core (which decides the binding and
 * the whole status), applies the binding write, commits the vector under the
 * fence, writes status when it moved, and reports metrics.
 *
 * Each phase is its own file under `pass/`: which scalers are due (`due.ts`),
 * what is sampled (`sample-requests.ts`), the observations (`observe.ts`), the
 * writes (`writes.ts`) and the report (`report.ts`). This class holds what
 * lasts between passes and the order and deadlines of the phases.
 *
 * Memory per scaler is the last planned status: the windows grow on every pass
 * whether or not the status was written, and a restart reads them back from
 * the object's status.
 */
import type { LatencyGuardReading } from "../core/algorithms/ttft-reading.js";
import type { LeaderToken, ModelDeployment } from "../core/api/model-deployment.js";
import { ScalerSchema, withInferredAlgorithm, type Scaler } from "../core/api/scaler.js";
import { plan } from "../core/planner/plan.js";
import type { Commit, PlanResult } from "../core/planner/types.js";
import type { RoleSamples } from "../core/signals/types.js";
import { NotLeaderError } from "../adapters/kubernetes/not-leader.js";
import type { ScalerMetrics } from "../adapters/telemetry/metrics.js";
import { FailureLog } from "../adapters/retry/failure-log.js";
import type { Logger } from "../adapters/telemetry/logger.js";
import { unrefSleep, type Clock, type SampleRequest, type ScalerStore, type SignalSource } from "./ports.js";
import { dueScalers, forgottenKeys } from "./pass/due.js";
import { labelsOf, namespaceOf, scalerKey } from "./pass/identity.js";
import { memoryForPass, type ScalerMemory } from "./pass/memory.js";
import { observeTarget } from "./pass/observe.js";
import { reportOf } from "./pass/report.js";
import { sampleRequestsOf } from "./pass/sample-requests.js";
import { PassWrites, StatusRaced } from "./pass/writes.js";

export { finalizer } from "./pass/writes.js";
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

const maxConflictRetries = 3;

/** The target changed under every re-plan of one pass. */
class TargetKeptChanging extends Error {
  override readonly name = "TargetKeptChanging";
}
/** Scalers reconciled at once within a pass. */
const reconcileConcurrency = 8;

export class Controller {
  private readonly memory = new Map<string, ScalerMemory>();
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

  private readonly writes: PassWrites;

  constructor(private readonly deps: ControllerDeps) {
    this.sampling = new FailureLog("sampling from Prometheus", deps.logger);
    this.sleep = deps.sleep ?? unrefSleep;
    this.writes = new PassWrites({
      store: deps.store,
      logger: deps.logger,
      sleep: this.sleep,
      random: deps.random ?? Math.random,
      leaderToken: deps.leaderToken,
    });
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

  /** The listed scalers that validate; each one that does not is counted and logged with its problems. */
  private validScalers(items: readonly unknown[]): Scaler[] {
    const { metrics, logger } = this.deps;
    const scalers: Scaler[] = [];
    for (const item of items) {
      const parsed = this.parseScaler(item);
      if (parsed.success) {
        scalers.push(parsed.data);
        continue;
      }
      metrics.errors.inc({ kind: "invalid_scaler" });
      const meta = (item as { metadata?: { namespace?: string; name?: string } }).metadata;
      logger.warn("skipping a scaler that does not validate", {
        scaler: `${meta?.namespace}/${meta?.name}`,
        problems: parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`),
      });
    }
    return scalers;
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
    const listed = this.validScalers(items);
    const seen = new Set(listed.map(scalerKey));
    const scalers = dueScalers({ scalers: listed, memory: this.memory, running: this.running, nowMs });
    if (!this.listed) {
      // A new leadership: drop counters of scalers deleted while this replica followed.
      this.listed = true;
      metrics.retain(seen);
    }
    for (const key of forgottenKeys(this.memory.keys(), seen)) {
      this.memory.delete(key);
      const [namespace = "", name = ""] = key.split("/");
      metrics.forget(namespace, name);
    }
    if (scalers.length === 0) return [];

    const requests = sampleRequestsOf(scalers);
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
    const { metrics, logger } = this.deps;
    const key = scalerKey(scaler);
    const namespace = namespaceOf(scaler);
    const deleting = scaler.metadata.deletionTimestamp !== undefined;
    const memory = memoryForPass(this.memory.get(key), scaler, nowMs);
    this.memory.set(key, memory);

    await this.writes.addFinalizer(scaler, memory);

    const spec = withInferredAlgorithm(scaler.spec);
    let attempt = 0;
    for (;;) {
      const target = await this.writes.readTarget(namespace, spec.targetRef.name, attempt > 0);
      const observations = deleting ? {} : observeTarget(spec, target, samples, nowMs);
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
        if (!deleting) metrics.report(reportOf(scaler, spec, result, target, observations));
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
    memory: ScalerMemory,
    result: PlanResult,
    target: ModelDeployment | undefined,
  ): Promise<{ readonly kind: "Done" } | { readonly kind: "Conflict"; readonly message: string }> {
    const { metrics, logger } = this.deps;
    const namespace = namespaceOf(scaler);
    const name = scaler.metadata.name;
    const binding = await this.writes.applyBinding(result.bindingWrite ?? { kind: "none" }, target, namespace);
    if (binding.kind === "Conflict") return binding;
    if (scaler.metadata.deletionTimestamp !== undefined) {
      await this.writes.removeFinalizer(scaler);
      this.memory.delete(scalerKey(scaler));
      metrics.forget(namespace, name);
      return { kind: "Done" };
    }
    if (result.commit !== undefined && target !== undefined) {
      // An earlier commit's records that never reached status land first: one unstored record at most.
      if (memory.unwritten === "Record" && memory.status !== undefined) {
        await this.writes.writeStatus(memory, namespace, name, memory.status, "Record");
      }
      const committed = await this.writes.commit(namespace, target, result.commit).catch((error: unknown) => {
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
      await this.writes.writeStatus(memory, namespace, name, result.status, carriesRecord ? "Record" : "Status");
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
}
