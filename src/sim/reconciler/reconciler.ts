/**
 * A simulated ModelDeployment reconciler: it watches ModelDeployments on a
 * real API server and plays the operator's part the scaler depends on
 * (admission, cold start, readiness, retirement), reporting it in status.
 * See README.md for the behaviour and how tests steer it.
 */
import type { KubeConfig, KubernetesObject } from "@kubernetes/client-node";
import { ModelDeploymentSchema, type ModelDeployment } from "../../core/api/model-deployment.js";
import { systemClock, type Clock } from "./clock.js";
import {
  allRoles,
  defaultTimings,
  DeploymentSim,
  newControls,
  type DeploymentControls,
  type DeploymentSnapshot,
  type ReconcilerEvent,
  type ReconcilerTimings,
} from "./deployment.js";
import type { FleetPort } from "./fleet-port.js";
import {
  allNamespaces,
  describeScope,
  KubeCallError,
  KubeResources,
  type ResourceRef,
  type WatchCache,
} from "../../adapters/kubernetes/resources.js";
import { wrapKubeError } from "../../adapters/kubernetes/errors.js";

export interface SimulatedReconcilerOptions {
  readonly kubeConfig: KubeConfig;
  /** Where replicas run. */
  readonly fleet: FleetPort;
  /** Watch one namespace; default `allNamespaces`. */
  readonly namespace?: string;
  readonly timings?: Partial<ReconcilerTimings>;
  /** Drives the simulated delays; default: wall-clock time. */
  readonly clock?: Clock;
  /** Upper bound of one API call; default 10 s. */
  readonly apiTimeoutMs?: number;
  /** First wait before a failed status write or a broken watch is retried; doubles up to 5 s. Default 200 ms. */
  readonly retryDelayMs?: number;
  /** The ModelDeployment resource; default worker.gpustack.ai/v1 modeldeployments. */
  readonly resource?: ResourceRef;
  /** Failures the reconciler recovers from by retrying; default: written to stderr. */
  readonly onError?: (error: Error) => void;
  /** Every replica and retirement transition, for logs and demos. */
  readonly onEvent?: (event: ReconcilerEvent) => void;
}

const maxRetryDelayMs = 5_000;

interface Worker {
  readonly namespace: string;
  readonly name: string;
  readonly sim: DeploymentSim;
  /** Another step is needed. */
  dirty: boolean;
  running: Promise<void> | undefined;
  cancelWake: (() => void) | undefined;
  retryTimer: NodeJS.Timeout | undefined;
  retryDelayMs: number;
  /** The last object that failed validation, reported once. */
  invalidVersion: string | undefined;
}

interface Requests {
  abort: boolean;
  clear: boolean;
}

function keyOf(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

export class SimulatedReconciler {
  private readonly api: KubeResources;
  private readonly namespace: string;
  private readonly clock: Clock;
  private readonly timings: ReconcilerTimings;
  private readonly retryDelayMs: number;
  private readonly onError: (error: Error) => void;
  private readonly onEvent: (event: ReconcilerEvent) => void;
  private readonly workers = new Map<string, Worker>();
  /** Controls outlive workers: a test may set them before the deployment exists. */
  private readonly controls = new Map<string, DeploymentControls>();
  private readonly requests = new Map<string, Requests>();
  private informer: WatchCache | undefined;
  private informerRetry: NodeJS.Timeout | undefined;
  private informerDelayMs: number;
  private stopped = false;

  constructor(private readonly options: SimulatedReconcilerOptions) {
    this.api = new KubeResources(options.kubeConfig, {
      timeoutMs: options.apiTimeoutMs ?? 10_000,
      fieldManager: "mds-simulated-reconciler",
      ...(options.resource !== undefined ? { targetResource: options.resource } : {}),
    });
    this.namespace = options.namespace ?? allNamespaces;
    this.clock = options.clock ?? systemClock;
    this.timings = { ...defaultTimings, ...options.timings };
    for (const [key, value] of Object.entries(this.timings)) {
      if (!(value >= 0))
        throw new RangeError(`timings.${key} must be a nonnegative number of milliseconds, got ${value}`);
    }
    this.retryDelayMs = options.retryDelayMs ?? 200;
    this.informerDelayMs = this.retryDelayMs;
    this.onError = options.onError ?? ((error) => console.error(`simulated reconciler: ${error.message}`));
    this.onEvent = options.onEvent ?? (() => undefined);
  }

  /**
   * Lists once (so a missing CRD or a wrong kubeconfig fails here, with the
   * API server's answer as `cause`), then watches. Later failures of the watch
   * are reported through `onError` and retried.
   */
  async start(): Promise<void> {
    if (this.informer !== undefined) throw new Error("the simulated reconciler is already started");
    await this.api.listTargets(this.namespace);
    this.stopped = false;
    const informer = this.api.informer(this.api.targetResource, this.namespace);
    this.informer = informer;
    const onObject = (obj: KubernetesObject): void => {
      this.informerDelayMs = this.retryDelayMs;
      const namespace = obj.metadata?.namespace;
      const name = obj.metadata?.name;
      if (namespace !== undefined && name !== undefined) this.kick(namespace, name);
    };
    informer.on("add", onObject);
    informer.on("update", onObject);
    informer.on("delete", onObject);
    informer.on("error", (error: unknown) => {
      // stop() aborts the watch, which ends it with an error too.
      if (this.stopped) return;
      const wrapped = wrapKubeError(
        `watch ${this.api.targetResource.plural} in ${describeScope(this.namespace)}`,
        error,
      );
      // 429 is the API server asking to come back later (a new CRD's watch cache is still filling): not worth a report.
      if (wrapped.statusCode !== 429) this.onError(wrapped);
      this.restartInformer();
    });
    await informer.start();
  }

  /** The informer stops after an error it does not handle itself; start it again after a growing delay. */
  private restartInformer(): void {
    if (this.stopped || this.informerRetry !== undefined) return;
    const delayMs = this.informerDelayMs;
    this.informerDelayMs = Math.min(this.informerDelayMs * 2, maxRetryDelayMs);
    this.informerRetry = setTimeout(() => {
      this.informerRetry = undefined;
      if (this.stopped || this.informer === undefined) return;
      // start() resumes from the last resourceVersion, or lists again after a 410 or a failed list.
      this.informer.start().catch((error: unknown) => {
        this.onError(
          wrapKubeError(
            `restart the watch of ${this.api.targetResource.plural} in ${describeScope(this.namespace)}`,
            error,
          ),
        );
        this.restartInformer();
      });
    }, delayMs);
  }

  /** Stops watching and every timer; replicas keep running in the fleet. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.informerRetry !== undefined) clearTimeout(this.informerRetry);
    this.informerRetry = undefined;
    const informer = this.informer;
    this.informer = undefined;
    await informer?.stop();
    for (const worker of this.workers.values()) {
      worker.cancelWake?.();
      worker.cancelWake = undefined;
      if (worker.retryTimer !== undefined) clearTimeout(worker.retryTimer);
      worker.retryTimer = undefined;
    }
    await this.whenIdle();
  }

  /** Resolves when no deployment has a step running or due now. */
  async whenIdle(): Promise<void> {
    for (;;) {
      const running = [...this.workers.values()].map((w) => w.running).filter((p) => p !== undefined);
      if (running.length === 0) return;
      await Promise.all(running);
    }
  }

  // ---- controls ----

  /** At most `limit` replicas of `role` (every role when undefined) hold quota; undefined lifts the limit. */
  setQuotaLimit(namespace: string, name: string, role: string | undefined, limit: number | undefined): void {
    if (limit !== undefined && !(limit >= 0)) throw new RangeError(`quota limit must be nonnegative, got ${limit}`);
    const controls = this.controlsOf(namespace, name);
    if (limit === undefined) controls.quotaLimits.delete(role ?? allRoles);
    else controls.quotaLimits.set(role ?? allRoles, limit);
    this.kick(namespace, name);
  }

  /** No new replica of `role` (every role when undefined) is admitted; reservations already held stay. */
  withholdQuota(namespace: string, name: string, role?: string): void {
    this.setQuotaLimit(namespace, name, role, 0);
  }

  /** Lifts the limit on `role`, or every limit of the deployment when `role` is undefined; pending replicas are admitted. */
  grantQuota(namespace: string, name: string, role?: string): void {
    const controls = this.controlsOf(namespace, name);
    if (role === undefined) controls.quotaLimits.clear();
    else controls.quotaLimits.delete(role);
    this.kick(namespace, name);
  }

  /** From now on every retirement of the deployment ends `Aborted` when its drain time runs out. */
  abortRetirements(namespace: string, name: string, enabled = true): void {
    this.controlsOf(namespace, name).abortRetirements = enabled;
    this.kick(namespace, name);
  }

  /**
   * Aborts the running retirement now if it has not reached `Deleting`;
   * resolves to whether the deployment's retirement is `Aborted` afterwards.
   */
  async abortRetirement(namespace: string, name: string): Promise<boolean> {
    this.requestsOf(namespace, name).abort = true;
    await this.settle(namespace, name);
    return this.snapshot(namespace, name)?.retirement?.state === "Aborted";
  }

  /**
   * Forgets an `Aborted` retirement (the kept replica keeps running). If the
   * spec still leaves it out, it is retired again, like a retry. Resolves to
   * whether there was an aborted retirement to clear.
   */
  async clearRetirement(namespace: string, name: string): Promise<boolean> {
    const before = this.snapshot(namespace, name)?.retirement;
    if (before?.state !== "Aborted") return false;
    this.requestsOf(namespace, name).clear = true;
    await this.settle(namespace, name);
    return true;
  }

  /** The in-memory state of one deployment, or undefined if it has not been seen. */
  snapshot(namespace: string, name: string): DeploymentSnapshot | undefined {
    return this.workers.get(keyOf(namespace, name))?.sim.snapshot();
  }

  // ---- stepping ----

  private controlsOf(namespace: string, name: string): DeploymentControls {
    const key = keyOf(namespace, name);
    let controls = this.controls.get(key);
    if (controls === undefined) this.controls.set(key, (controls = newControls()));
    return controls;
  }

  private requestsOf(namespace: string, name: string): Requests {
    const key = keyOf(namespace, name);
    let requests = this.requests.get(key);
    if (requests === undefined) this.requests.set(key, (requests = { abort: false, clear: false }));
    return requests;
  }

  /** Runs a step now and waits until the deployment has nothing more to do at this instant. */
  private async settle(namespace: string, name: string): Promise<void> {
    this.kick(namespace, name);
    for (;;) {
      const running = this.workers.get(keyOf(namespace, name))?.running;
      if (running === undefined) return;
      await running;
    }
  }

  private kick(namespace: string, name: string): void {
    if (this.stopped || this.informer === undefined) return;
    const key = keyOf(namespace, name);
    let worker = this.workers.get(key);
    if (worker === undefined) {
      worker = {
        namespace,
        name,
        sim: new DeploymentSim(namespace, name),
        dirty: false,
        running: undefined,
        cancelWake: undefined,
        retryTimer: undefined,
        retryDelayMs: this.retryDelayMs,
        invalidVersion: undefined,
      };
      this.workers.set(key, worker);
    }
    worker.dirty = true;
    if (worker.running !== undefined) return;
    const w = worker;
    w.running = this.drain(w).finally(() => {
      w.running = undefined;
    });
  }

  /** Steps one deployment until nothing is due; steps of one deployment never overlap. */
  private async drain(worker: Worker): Promise<void> {
    while (worker.dirty && !this.stopped) {
      worker.dirty = false;
      try {
        await this.stepOnce(worker);
      } catch (error) {
        this.onError(new Error(`reconcile ${worker.namespace}/${worker.name}`, { cause: error }));
        this.retryLater(worker);
      }
    }
  }

  private async stepOnce(worker: Worker): Promise<void> {
    const { namespace, name, sim } = worker;
    const key = keyOf(namespace, name);
    const requests = this.requestsOf(namespace, name);
    const stepRequests = { abort: requests.abort, clear: requests.clear };
    // A request applies to the step it reaches, never to a later retirement.
    requests.abort = false;
    requests.clear = false;
    const env = {
      nowMs: this.clock.nowMs(),
      timings: this.timings,
      controls: this.controlsOf(namespace, name),
      requests: stepRequests,
      fleet: this.options.fleet,
      onEvent: this.onEvent,
      onError: this.onError,
    };

    const raw = this.informer?.get(name, namespace);
    if (raw === undefined) {
      worker.cancelWake?.();
      worker.cancelWake = undefined;
      await sim.teardown(env);
      if (!worker.dirty) this.workers.delete(key);
      return;
    }
    const parsed = ModelDeploymentSchema.safeParse(raw);
    if (!parsed.success) {
      const version = raw.metadata?.resourceVersion ?? "";
      if (worker.invalidVersion !== version) {
        worker.invalidVersion = version;
        this.onError(
          new Error(
            `modeldeployment ${key} (resourceVersion ${version}) does not have the expected shape; left alone`,
            { cause: parsed.error },
          ),
        );
      }
      return;
    }
    const md: ModelDeployment = parsed.data;

    await sim.step(md, env);

    const status = sim.status(md);
    const statusJson = JSON.stringify(status);
    if (statusJson !== sim.lastWrittenStatus) {
      try {
        await this.api.mergeTargetStatus(namespace, name, status as unknown as Record<string, unknown>);
      } catch (error) {
        // Gone: the delete event tears the simulation down.
        if (error instanceof KubeCallError && error.statusCode === 404) return;
        this.onError(error instanceof Error ? error : new Error(String(error)));
        this.retryLater(worker);
        return;
      }
      worker.retryDelayMs = this.retryDelayMs;
    }
    sim.markWritten(statusJson);
    this.arm(worker);
  }

  /** Wakes the deployment when its next timed change is due, or steps again now if it already is. */
  private arm(worker: Worker): void {
    worker.cancelWake?.();
    worker.cancelWake = undefined;
    const dueMs = worker.sim.nextDueMs(this.timings);
    if (dueMs === Infinity) return;
    const delayMs = dueMs - this.clock.nowMs();
    if (delayMs <= 0) {
      worker.dirty = true;
      return;
    }
    worker.cancelWake = this.clock.schedule(delayMs, () => {
      worker.cancelWake = undefined;
      this.kick(worker.namespace, worker.name);
    });
  }

  /** API retries wait in real time whatever the clock: they wait for a real server. */
  private retryLater(worker: Worker): void {
    if (this.stopped || worker.retryTimer !== undefined) return;
    const delayMs = worker.retryDelayMs;
    worker.retryDelayMs = Math.min(worker.retryDelayMs * 2, maxRetryDelayMs);
    worker.retryTimer = setTimeout(() => {
      worker.retryTimer = undefined;
      this.kick(worker.namespace, worker.name);
    }, delayMs);
  }
}
