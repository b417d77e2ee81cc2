/**
 * A simulated fleet of engine pods grouped into deployments and roles, driven
 * by workloads over simulated time. Deterministic: time is an argument.
 */
import {
  defaultCapacity,
  EngineReplica,
  type EngineCapacity,
  type Handoff,
  type ReplicaTotals,
  type ServingKind,
  type SimEngineKind,
} from "./model.js";
import type { Workload } from "./workload.js";

export interface SimRoleSpec {
  readonly name: string;
  readonly serving: ServingKind;
  readonly replicas: number;
  readonly dataParallelSize?: number;
  readonly tensorParallelSize?: number;
  /** SGLang `--enable-metrics-for-all-schedulers`: tensor ranks other than 0 repeat rank 0's series. */
  readonly metricsForAllSchedulers?: boolean;
  readonly capacity?: Partial<EngineCapacity>;
}

export interface SimDeploymentSpec {
  readonly namespace: string;
  readonly name: string;
  readonly engine: SimEngineKind;
  readonly modelName?: string;
  readonly roles: readonly SimRoleSpec[];
  readonly workload?: Workload;
  readonly coldStartSeconds?: number;
  readonly kvTransferSeconds?: number;
  /** Pod names are `<prefix>-<role>-<i>`; defaults to the deployment name. */
  readonly podNamePrefix?: string;
}

export type PodPhase = "Starting" | "Ready";

export interface SimPod {
  readonly namespace: string;
  readonly name: string;
  readonly deployment: string;
  readonly role: string;
  readonly engine: SimEngineKind;
  readonly phase: PodPhase;
  /** Bumped on every restart: counters started again from zero. */
  readonly restarts: number;
  readonly readyAtSeconds: number;
  readonly replica: EngineReplica;
}

interface MutablePod {
  namespace: string;
  name: string;
  deployment: string;
  role: string;
  serving: ServingKind;
  engine: SimEngineKind;
  phase: PodPhase;
  restarts: number;
  readyAtSeconds: number;
  replica: EngineReplica;
  spec: ConstructorParameters<typeof EngineReplica>[1];
}

interface DeploymentState {
  readonly spec: SimDeploymentSpec;
  /** Requests that found no ready entry pod yet. */
  readonly backlog: { id: number; arrivalSeconds: number; promptTokens: number; outputTokens: number }[];
  readonly pendingHandoffs: Handoff[];
}

/** A counter/gauge snapshot of one pod at one time, for ground truth. */
export interface TruthPoint {
  readonly atSeconds: number;
  readonly restarts: number;
  readonly totals: ReplicaTotals;
}

export interface FleetOptions {
  readonly startSeconds: number;
  /** Model step; smaller is finer and slower. */
  readonly stepSeconds?: number;
  /** Keep ground-truth snapshots this often (0 disables). */
  readonly recordEverySeconds?: number;
  readonly recordHistorySeconds?: number;
}

export function podKey(namespace: string, pod: string): string {
  return `${namespace}/${pod}`;
}

export class EngineFleet {
  private readonly pods = new Map<string, MutablePod>();
  private readonly deployments = new Map<string, DeploymentState>();
  private readonly history = new Map<string, TruthPoint[]>();
  private nowSeconds: number;
  private nextRequestId = 1;
  private rotation = 0;
  private lastRecordSeconds = -Infinity;
  readonly stepSeconds: number;
  /** Requests lost with a stopped or restarted pod. */
  droppedRequests = 0;
  /** Offered tokens per deployment, for sanity checks. */
  readonly offered = new Map<string, { requests: number; promptTokens: number; outputTokens: number }>();

  constructor(private readonly options: FleetOptions) {
    this.nowSeconds = options.startSeconds;
    this.stepSeconds = options.stepSeconds ?? 0.05;
  }

  get timeSeconds(): number {
    return this.nowSeconds;
  }

  addDeployment(spec: SimDeploymentSpec): void {
    const key = podKey(spec.namespace, spec.name);
    if (this.deployments.has(key)) throw new Error(`deployment ${key} exists`);
    this.deployments.set(key, { spec, backlog: [], pendingHandoffs: [] });
    this.offered.set(key, { requests: 0, promptTokens: 0, outputTokens: 0 });
    for (const role of spec.roles) {
      for (let i = 0; i < role.replicas; i++)
        this.addPod(spec, role, `${spec.podNamePrefix ?? spec.name}-${role.name}-${i}`, spec.coldStartSeconds ?? 0);
    }
  }

  private addPod(dep: SimDeploymentSpec, role: SimRoleSpec, name: string, coldStartSeconds: number): void {
    const spec = {
      engine: dep.engine,
      serving: role.serving,
      modelName: dep.modelName ?? "meta-llama/Llama-3.1-8B-Instruct",
      dataParallelSize: role.dataParallelSize ?? 1,
      tensorParallelSize: role.tensorParallelSize ?? 1,
      metricsForAllSchedulers: role.metricsForAllSchedulers ?? false,
      capacity: { ...defaultCapacity, ...role.capacity },
      kvTransferSeconds: dep.kvTransferSeconds ?? 0.05,
    };
    const key = podKey(dep.namespace, name);
    if (this.pods.has(key)) throw new Error(`pod ${key} exists`);
    this.pods.set(key, {
      namespace: dep.namespace,
      name,
      deployment: dep.name,
      role: role.name,
      serving: role.serving,
      engine: dep.engine,
      phase: coldStartSeconds > 0 ? "Starting" : "Ready",
      restarts: 0,
      readyAtSeconds: this.nowSeconds + coldStartSeconds,
      replica: new EngineReplica(name, spec),
      spec,
    });
  }

  /** Adds one replica to a role; it serves after the deployment's cold start. */
  scaleUp(namespace: string, deployment: string, roleName: string, podName: string): void {
    const dep = this.deployments.get(podKey(namespace, deployment));
    const role = dep?.spec.roles.find((r) => r.name === roleName);
    if (!dep || !role) throw new Error(`no role ${roleName} in ${namespace}/${deployment}`);
    this.addPod(dep.spec, role, podName, dep.spec.coldStartSeconds ?? 0);
  }

  /** Removes a pod; its requests are lost. */
  stopPod(namespace: string, pod: string): void {
    const p = this.pods.get(podKey(namespace, pod));
    if (!p) return;
    this.droppedRequests += p.replica.outstanding();
    this.pods.delete(podKey(namespace, pod));
  }

  /** Restarts a pod's container: counters start from zero after the cold start. */
  restartPod(namespace: string, pod: string, coldStartSeconds: number): void {
    const p = this.pods.get(podKey(namespace, pod));
    if (!p) throw new Error(`no pod ${namespace}/${pod}`);
    this.droppedRequests += p.replica.outstanding();
    p.replica = new EngineReplica(p.name, p.spec);
    p.restarts += 1;
    p.phase = coldStartSeconds > 0 ? "Starting" : "Ready";
    p.readyAtSeconds = this.nowSeconds + coldStartSeconds;
  }

  pod(namespace: string, name: string): SimPod | undefined {
    return this.pods.get(podKey(namespace, name));
  }

  listPods(): SimPod[] {
    return [...this.pods.values()];
  }

  /** Runs whole model steps up to `untilSeconds`. */
  advanceTo(untilSeconds: number): void {
    while (this.nowSeconds + this.stepSeconds <= untilSeconds + 1e-9) this.step();
  }

  private step(): void {
    const now = this.nowSeconds;
    const dt = this.stepSeconds;
    for (const p of this.pods.values()) {
      if (p.phase === "Starting" && p.readyAtSeconds <= now) p.phase = "Ready";
    }
    for (const [key, dep] of this.deployments) {
      // Requests that arrived before this step are scheduled in it, as an engine
      // picks up new requests at its next iteration.
      const arrivals = dep.spec.workload?.take(now) ?? [];
      const offered = this.offered.get(key);
      for (const a of arrivals) {
        if (offered) {
          offered.requests += 1;
          offered.promptTokens += a.promptTokens;
          offered.outputTokens += a.outputTokens;
        }
        this.route(dep, { ...a, id: this.nextRequestId++ });
      }
      this.drainBacklog(dep);
    }
    const transferredAll: { id: number; fromPod: string; namespace: string }[] = [];
    for (const p of this.pods.values()) {
      if (p.phase !== "Ready") continue;
      const out = p.replica.step(now, dt);
      const dep = this.deployments.get(podKey(p.namespace, p.deployment));
      if (dep) dep.pendingHandoffs.push(...out.handoffs);
      for (const t of out.transferred) transferredAll.push({ ...t, namespace: p.namespace });
    }
    for (const t of transferredAll) this.pods.get(podKey(t.namespace, t.fromPod))?.replica.releaseTransferred(t.id);
    for (const dep of this.deployments.values()) this.routeHandoffs(dep);
    this.nowSeconds = now + dt;
    this.record();
  }

  private readyPods(dep: SimDeploymentSpec, serving: ServingKind[]): MutablePod[] {
    const roles = new Set(dep.roles.filter((r) => serving.includes(r.serving)).map((r) => r.name));
    const out: MutablePod[] = [];
    for (const p of this.pods.values()) {
      if (p.namespace === dep.namespace && p.deployment === dep.name && roles.has(p.role) && p.phase === "Ready")
        out.push(p);
    }
    return out;
  }

  private leastLoaded(pods: MutablePod[]): MutablePod | undefined {
    // Least outstanding; ties rotate so idle replicas share the load.
    let best: MutablePod | undefined;
    const start = this.rotation++;
    for (let k = 0; k < pods.length; k++) {
      const p = pods[(start + k) % pods.length];
      if (p && (!best || p.replica.outstanding() < best.replica.outstanding())) best = p;
    }
    return best;
  }

  private route(dep: DeploymentState, request: Parameters<EngineReplica["enqueue"]>[0]): void {
    const target = this.leastLoaded(this.readyPods(dep.spec, ["unified", "prefill"]));
    if (target) target.replica.enqueue(request);
    else dep.backlog.push(request);
  }

  private drainBacklog(dep: DeploymentState): void {
    while (dep.backlog.length > 0) {
      const target = this.leastLoaded(this.readyPods(dep.spec, ["unified", "prefill"]));
      const next = dep.backlog.shift();
      if (!target || !next) {
        if (next) dep.backlog.unshift(next);
        return;
      }
      target.replica.enqueue(next);
    }
  }

  private routeHandoffs(dep: DeploymentState): void {
    while (dep.pendingHandoffs.length > 0) {
      const target = this.leastLoaded(this.readyPods(dep.spec, ["decode"]));
      if (!target) return;
      const h = dep.pendingHandoffs.shift();
      if (h) target.replica.acceptHandoff(h);
    }
  }

  private record(): void {
    const every = this.options.recordEverySeconds ?? 0;
    if (every <= 0 || this.nowSeconds - this.lastRecordSeconds < every - 1e-9) return;
    this.lastRecordSeconds = this.nowSeconds;
    const keep = this.options.recordHistorySeconds ?? 120;
    for (const [key, p] of this.pods) {
      let h = this.history.get(key);
      if (!h) this.history.set(key, (h = []));
      h.push({ atSeconds: this.nowSeconds, restarts: p.restarts, totals: p.replica.totals() });
      while (h.length > 0 && (h[0]?.atSeconds ?? 0) < this.nowSeconds - keep) h.shift();
    }
  }

  /** The recorded snapshot nearest to `atSeconds` (at or before it when possible). */
  truthAt(namespace: string, pod: string, atSeconds: number): TruthPoint | undefined {
    const h = this.history.get(podKey(namespace, pod));
    if (!h || h.length === 0) return undefined;
    let best: TruthPoint | undefined;
    for (const point of h) if (point.atSeconds <= atSeconds + 1e-9) best = point;
    return best ?? h[0];
  }

  /**
   * True counter rates of a pod over `[fromSeconds, toSeconds]` from recorded
   * snapshots; undefined when a restart falls inside.
   */
  truthRates(namespace: string, pod: string, fromSeconds: number, toSeconds: number): TruthRates | undefined {
    const a = this.truthAt(namespace, pod, fromSeconds);
    const b = this.truthAt(namespace, pod, toSeconds);
    if (!a || !b || a.restarts !== b.restarts || b.atSeconds <= a.atSeconds) return undefined;
    const dt = b.atSeconds - a.atSeconds;
    const rate = (f: (t: ReplicaTotals) => number): number => (f(b.totals) - f(a.totals)) / dt;
    const delta = (
      x: readonly { upperBound: number; count: number }[],
      y: readonly { upperBound: number; count: number }[],
    ) => y.map((bucket, i) => ({ upperBound: bucket.upperBound, count: bucket.count - (x[i]?.count ?? 0) }));
    return {
      fromSeconds: a.atSeconds,
      toSeconds: b.atSeconds,
      promptTokensPerSecond: rate((t) => t.promptTokens),
      generationTokensPerSecond: rate((t) => t.generationTokens),
      prefixCacheHitTokensPerSecond: rate((t) => t.prefixCacheHits),
      effectiveInputTokensPerSecond: rate((t) => t.effectiveInputTokens),
      effectiveDeviceHitTokensPerSecond: rate((t) => t.effectiveDeviceHitTokens),
      ttftBuckets: delta(a.totals.ttftCumulative, b.totals.ttftCumulative),
      itlBuckets: delta(a.totals.itlCumulative, b.totals.itlCumulative),
      queueTimeBuckets: delta(a.totals.queueTimeCumulative, b.totals.queueTimeCumulative),
    };
  }
}

export interface TruthRates {
  readonly fromSeconds: number;
  readonly toSeconds: number;
  readonly promptTokensPerSecond: number;
  readonly generationTokensPerSecond: number;
  readonly prefixCacheHitTokensPerSecond: number;
  readonly effectiveInputTokensPerSecond: number;
  readonly effectiveDeviceHitTokensPerSecond: number;
  readonly ttftBuckets: readonly { upperBound: number; count: number }[];
  readonly itlBuckets: readonly { upperBound: number; count: number }[];
  readonly queueTimeBuckets: readonly { upperBound: number; count: number }[];
}
