/**
 * The simulated fleet of one Server role: engine replicas from the engine
 * simulator's load model (src/sim/engines), plus what a cluster adds: a cold
 * start per new replica drawn from a distribution, a retirement drain, an
 * optional quota that leaves replicas pending, and a router that sends each
 * request to the ready replica with the fewest outstanding requests.
 */
import {
  defaultCapacity,
  EngineReplica,
  type EngineCapacity,
  type FinishedRequest,
  type ReplicaSpec,
  type SimRequest,
} from "../engines/model.js";
import { SeededRandom } from "../engines/random.js";
import type { TraceRequest } from "./traces.js";

export interface FleetOptions {
  readonly seed: number;
  readonly capacity?: Partial<EngineCapacity>;
  /** Cold start of a new replica, drawn uniformly in [min, max] seconds. */
  readonly coldStartSeconds?: { readonly min: number; readonly max: number };
  /** Most replicas the cluster admits at once (started, ready or draining); more stay pending. */
  readonly quotaReplicas?: number;
  /** Warm replicas at time zero. */
  readonly initialReplicas: number;
}

export const defaultColdStartSeconds = { min: 60, max: 180 } as const;

export type ReplicaPhase = "Pending" | "Starting" | "Ready" | "Draining" | "Stopped";

export interface FleetReplica {
  readonly name: string;
  readonly engine: EngineReplica;
  phase: ReplicaPhase;
  /** When the replica got its GPU (admitted); cost runs from here. */
  startedAtSeconds?: number;
  readyAtSeconds?: number;
  stoppedAtSeconds?: number;
  /** The drawn cold start, fixed when the replica is created (the oracle knows it). */
  readonly coldStartSeconds: number;
}

/** One request's outcome; `firstTokenSeconds` absent while unfinished. */
export interface RequestRecord {
  readonly id: number;
  readonly arrivalSeconds: number;
  readonly promptTokens: number;
  readonly outputTokens: number;
  firstTokenSeconds?: number;
  endSeconds?: number;
  meanItlSeconds?: number;
}

export class QualityFleet {
  readonly replicas: FleetReplica[] = [];
  readonly records: RequestRecord[] = [];
  readonly capacity: EngineCapacity;
  /** Requests that found no ready replica: the gateway holds them. */
  private readonly gateway: SimRequest[] = [];
  private readonly coldStartRng: SeededRandom;
  private readonly spec: ReplicaSpec;
  private nextName = 0;
  private desired: number;
  scaleEvents = 0;
  maxBacklog = 0;

  constructor(private readonly options: FleetOptions) {
    this.capacity = { ...defaultCapacity, ...options.capacity };
    this.coldStartRng = new SeededRandom(options.seed ^ 0x2545f491);
    this.spec = {
      engine: "vllm",
      serving: "unified",
      modelName: "sim",
      dataParallelSize: 1,
      tensorParallelSize: 1,
      capacity: this.capacity,
      kvTransferSeconds: 0,
    };
    this.desired = Math.max(0, options.initialReplicas);
    for (let i = 0; i < this.desired; i++) {
      const r = this.create();
      r.phase = "Ready";
      r.startedAtSeconds = 0;
      r.readyAtSeconds = 0;
    }
  }

  private drawColdStart(): number {
    const c = this.options.coldStartSeconds ?? defaultColdStartSeconds;
    return c.min + (c.max - c.min) * this.coldStartRng.next();
  }

  private create(): FleetReplica {
    const name = `server-${this.nextName++}`;
    const engine = new EngineReplica(name, this.spec);
    engine.onFinish((f: FinishedRequest) => this.finish(f));
    const replica: FleetReplica = { name, engine, phase: "Pending", coldStartSeconds: this.drawColdStart() };
    this.replicas.push(replica);
    return replica;
  }

  /** The cold start the next created replica will draw (without consuming it). */
  private finish(f: FinishedRequest): void {
    const record = this.records[f.request.id];
    if (record === undefined) return;
    record.firstTokenSeconds = f.firstTokenSeconds;
    record.endSeconds = f.endSeconds;
    if (f.meanItlSeconds !== undefined) record.meanItlSeconds = f.meanItlSeconds;
  }

  get desiredReplicas(): number {
    return this.desired;
  }

  count(phase: ReplicaPhase): number {
    let n = 0;
    for (const r of this.replicas) if (r.phase === phase) n++;
    return n;
  }

  /** Replicas holding admission (starting, ready or draining). */
  admitted(): number {
    return this.count("Starting") + this.count("Ready") + this.count("Draining");
  }

  /** Sets the desired count: grows with new replicas, shrinks pending first, then starting, then ready (drain). */
  setDesired(replicas: number, nowSeconds: number): void {
    const target = Math.max(0, Math.round(replicas));
    if (target !== this.desired) this.scaleEvents++;
    this.desired = target;
    const live = (): FleetReplica[] =>
      this.replicas.filter((r) => r.phase === "Pending" || r.phase === "Starting" || r.phase === "Ready");
    let current = live();
    for (let n = current.length; n < target; n++) this.create();
    current = live();
    const order: ReplicaPhase[] = ["Pending", "Starting", "Ready"];
    let excess = current.length - target;
    for (const phase of order) {
      const candidates = current
        .filter((r) => r.phase === phase)
        .sort((a, b) => a.engine.outstanding() - b.engine.outstanding() || (a.name < b.name ? 1 : -1));
      for (const r of candidates) {
        if (excess <= 0) break;
        excess--;
        if (phase === "Ready") r.phase = "Draining";
        else {
          r.phase = "Stopped";
          r.stoppedAtSeconds = nowSeconds;
        }
      }
    }
    this.admit(nowSeconds);
  }

  /**
   * Adds one replica that is ready exactly at `readyAtSeconds` (the oracle):
   * it starts its own cold start earlier, or is warm at zero.
   */
  addScheduled(readyAtSeconds: number): FleetReplica {
    const r = this.create();
    r.phase = "Starting";
    r.startedAtSeconds = Math.max(0, readyAtSeconds - r.coldStartSeconds);
    r.readyAtSeconds = readyAtSeconds;
    this.desired++;
    return r;
  }

  /** Retires one ready replica (the oracle): the least loaded drains. */
  retireOne(): void {
    const ready = this.replicas
      .filter((r) => r.phase === "Ready")
      .sort((a, b) => a.engine.outstanding() - b.engine.outstanding());
    const r = ready[0];
    if (r !== undefined) {
      r.phase = "Draining";
      this.desired--;
    }
  }

  private admit(nowSeconds: number): void {
    const quota = this.options.quotaReplicas ?? Infinity;
    let admitted = this.admitted();
    for (const r of this.replicas) {
      if (r.phase !== "Pending" || admitted >= quota) continue;
      r.phase = "Starting";
      r.startedAtSeconds = nowSeconds;
      r.readyAtSeconds = nowSeconds + r.coldStartSeconds;
      admitted++;
    }
  }

  /** Lifecycle at `nowSeconds`: cold starts finish, drained replicas stop, pending ones get admitted. */
  advance(nowSeconds: number): void {
    for (const r of this.replicas) {
      if (r.phase === "Starting" && (r.readyAtSeconds ?? Infinity) <= nowSeconds) r.phase = "Ready";
      else if (r.phase === "Draining" && r.engine.outstanding() === 0) {
        r.phase = "Stopped";
        r.stoppedAtSeconds = nowSeconds;
      }
    }
    this.admit(nowSeconds);
    this.flushGateway();
  }

  private ready(): FleetReplica[] {
    return this.replicas.filter((r) => r.phase === "Ready");
  }

  private route(request: SimRequest, ready: readonly FleetReplica[]): boolean {
    let best: FleetReplica | undefined;
    let bestLoad = Infinity;
    for (const r of ready) {
      const load = r.engine.outstanding();
      if (load < bestLoad) {
        best = r;
        bestLoad = load;
      }
    }
    if (best === undefined) return false;
    best.engine.enqueue(request);
    return true;
  }

  private flushGateway(): void {
    if (this.gateway.length === 0) return;
    const ready = this.ready();
    if (ready.length === 0) return;
    for (const request of this.gateway.splice(0)) this.route(request, ready);
  }

  /** A request arrives: it gets an id, a record, and a replica (or waits at the gateway). */
  arrive(request: TraceRequest): void {
    const id = this.records.length;
    this.records.push({
      id,
      arrivalSeconds: request.arrivalSeconds,
      promptTokens: request.promptTokens,
      outputTokens: request.outputTokens,
    });
    const sim: SimRequest = {
      id,
      arrivalSeconds: request.arrivalSeconds,
      promptTokens: request.promptTokens,
      outputTokens: request.outputTokens,
      streaming: true,
      ...(request.prefixBlocks === undefined
        ? {}
        : { prefixBlocks: request.prefixBlocks, blockTokens: request.blockTokens ?? 512 }),
    };
    if (this.gateway.length > 0 || !this.route(sim, this.ready())) this.gateway.push(sim);
  }

  /** Advances every serving replica by `dtSeconds`. */
  step(nowSeconds: number, dtSeconds: number): void {
    for (const r of this.replicas) {
      if (r.phase !== "Ready" && r.phase !== "Draining") continue;
      r.engine.step(nowSeconds, dtSeconds);
    }
  }

  /** Records the backlog (waiting requests at the gateway and on replicas) for `maxBacklog`. */
  sampleBacklog(): void {
    let backlog = this.gateway.length;
    for (const r of this.replicas) {
      if (r.phase !== "Ready" && r.phase !== "Draining") continue;
      for (const rank of r.engine.ranks) backlog += rank.gauges().waiting;
    }
    if (backlog > this.maxBacklog) this.maxBacklog = backlog;
  }

  /** Requests in flight: at the gateway or on a replica. */
  outstanding(): number {
    let n = this.gateway.length;
    for (const r of this.replicas) if (r.phase === "Ready" || r.phase === "Draining") n += r.engine.outstanding();
    return n;
  }

  /** Replica-seconds charged in [0, untilSeconds]. */
  replicaSeconds(untilSeconds: number): number {
    let total = 0;
    for (const r of this.replicas) {
      if (r.startedAtSeconds === undefined) continue;
      const end = Math.min(untilSeconds, r.stoppedAtSeconds ?? untilSeconds);
      total += Math.max(0, end - r.startedAtSeconds);
    }
    return total;
  }
}
