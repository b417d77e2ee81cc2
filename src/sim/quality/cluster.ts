/**
 * The simulated fleet: engine replicas from the engine simulator's load model
 * (src/sim/engines), one Server role or a Prefill and a Decode role, plus what
 * a cluster adds: a cold start per new replica drawn from a distribution, a
 * retirement drain, an optional quota that leaves replicas pending, a router
 * that sends each request to the ready replica owing the fewest tokens (or
 * holding the fewest requests), and for disaggregated roles the prefill/decode
 * handoff: the prompt's KV crosses the prefill replica's link (KV bytes / link
 * bandwidth, one transfer at a time per link) before a decode replica takes
 * the request. Replicas are a named preset (model on hardware) whose GPUs per
 * replica GPU-hours count.
 *
 * Time: the engines advance in steps of at most `dtSeconds`; the replica a
 * request (or a KV handoff) goes to first runs to its arrival instant, so the
 * request is admitted when it arrives, not at the next step. The router reads
 * loads as of the step's start plus what it has sent since.
 */
import {
  EngineReplica,
  type EngineCapacity,
  type FinishedRequest,
  type Handoff,
  type ReplicaSpec,
  type ServingKind,
  type SimRequest,
} from "../engines/model.js";
import { SeededRandom } from "../engines/random.js";
import { defaultPresetName, replicaPreset, type ReplicaPreset } from "./presets.js";
import type { TraceRequest } from "./traces.js";

export type FleetRoleKind = "Server" | "Prefill" | "Decode";

/** One role of the simulated target: its name (as the scaler names it) and kind. */
export interface FleetRole {
  readonly name: string;
  readonly kind: FleetRoleKind;
}

/** The one Server role of an aggregated fleet. */
export const serverRoles: readonly FleetRole[] = [{ name: "server", kind: "Server" }];

/** A prefill/decode pair (the pd-sglang arrangement). */
export const disaggregatedRoles: readonly FleetRole[] = [
  { name: "prefill", kind: "Prefill" },
  { name: "decode", kind: "Decode" },
];

/**
 * The KV handoff of disaggregated roles: a prompt's KV is `promptTokens ·
 * bytesPerToken` bytes and crosses the prefill replica's link at
 * `linkBytesPerSecond`, one transfer at a time per link.
 */
export interface KvLink {
  readonly bytesPerToken: number;
  readonly linkBytesPerSecond: number;
}

/**
 * One 100 Gb/s RDMA link per replica at 80 % of line rate (10 GB/s); the KV
 * bytes per token are the preset model's.
 */
export const defaultLinkBytesPerSecond = 10e9;

/**
 * How the router picks a ready replica: the fewest tokens owed
 * (`EngineReplica.outstandingTokens`: prompt tokens not yet prefilled plus
 * output tokens still to emit), as a token-aware router does, or the fewest
 * requests in flight. Ties go to the replica created first.
 */
export const routingRules = ["leastOutstandingTokens", "leastOutstandingRequests"] as const;
export type RoutingRule = (typeof routingRules)[number];

export interface FleetOptions {
  readonly seed: number;
  /** The replica preset (`presets.ts`); `capacity` and `gpusPerReplica` override its figures. */
  readonly preset?: string;
  readonly capacity?: Partial<EngineCapacity>;
  readonly gpusPerReplica?: number;
  readonly routing?: RoutingRule;
  /** Cold start of a new replica, drawn uniformly in [min, max] seconds. */
  readonly coldStartSeconds?: { readonly min: number; readonly max: number };
  /** Most replicas the cluster admits at once over every role (started, ready or draining); more stay pending. */
  readonly quotaReplicas?: number;
  /** The target's roles: one Server role (the default) or one Prefill and one Decode role. */
  readonly roles?: readonly FleetRole[];
  /** Warm replicas at time zero: a count for a one-role fleet, or one per role name. */
  readonly initialReplicas: number | Readonly<Record<string, number>>;
  readonly kvLink?: KvLink;
}

export const defaultColdStartSeconds = { min: 60, max: 180 } as const;

export type ReplicaPhase = "Pending" | "Starting" | "Ready" | "Draining" | "Stopped";

export interface FleetReplica {
  readonly name: string;
  /** The role this replica serves. */
  readonly role: string;
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

/** A prefilled request whose KV is on the link or waits for a ready decode replica. */
interface KvInTransit {
  readonly handoff: Handoff;
  readonly arrivesAtSeconds: number;
}

const servingOf: Readonly<Record<FleetRoleKind, ServingKind>> = {
  Server: "unified",
  Prefill: "prefill",
  Decode: "decode",
};

/** The roles a fleet accepts, or an error naming the field and the value. */
function checkRoles(roles: readonly FleetRole[]): void {
  const kinds = roles.map((r) => r.kind).join(",");
  const names = new Set(roles.map((r) => r.name));
  if (names.size !== roles.length)
    throw new Error(`fleet.roles: role names must be unique, got ${JSON.stringify(roles.map((r) => r.name))}`);
  if (kinds !== "Server" && kinds !== "Prefill,Decode")
    throw new Error(`fleet.roles: one Server role, or a Prefill role then a Decode role, got kinds [${kinds}]`);
}

/** A replica's capacity: the preset's figures, with those the fleet options give in their place. */
export function replicaCapacity(options: Pick<FleetOptions, "preset" | "capacity">): EngineCapacity {
  return { ...replicaPreset(options.preset ?? defaultPresetName).capacity, ...options.capacity };
}

export class QualityFleet {
  readonly replicas: FleetReplica[] = [];
  readonly records: RequestRecord[] = [];
  readonly capacity: EngineCapacity;
  readonly preset: ReplicaPreset;
  readonly gpusPerReplica: number;
  readonly routing: RoutingRule;
  readonly roles: readonly FleetRole[];
  readonly kvLink: KvLink;
  /** The role arrivals go to (Prefill, or the Server role), and the role handoffs go to. */
  private readonly entryRole: string;
  private readonly decodeRole: string | undefined;
  /** Requests that found no ready replica of the entry role: the gateway holds them. */
  private readonly gateway: SimRequest[] = [];
  /** Handoffs on a prefill link or waiting for a ready decode replica, in arrival order. */
  private readonly inTransit: KvInTransit[] = [];
  /** When each prefill replica's link is free again. */
  private readonly linkFreeAtSeconds = new Map<string, number>();
  /** Handoffs per prefill replica whose KV has not landed on a decode replica (it holds the KV). */
  private readonly heldKv = new Map<string, number>();
  /** When a handed-off request's KV landed on its decode replica: its first token reaches the user then. */
  private readonly landedAtSeconds = new Map<number, number>();
  /** Requests delivered to a decode replica and not finished yet. */
  private readonly handedOff = new Set<number>();
  /** The router's view of replicas' loads in the current step (`leastLoaded`). */
  private readonly routerView = new Map<FleetReplica, number>();
  /** Start of the step the engines are taking. */
  private stepSeconds = 0;
  private readonly byName = new Map<string, FleetReplica>();
  private readonly coldStartRng: SeededRandom;
  private readonly specs = new Map<string, ReplicaSpec>();
  private readonly nextName = new Map<string, number>();
  private readonly desired = new Map<string, number>();
  /** Commits that changed the desired replica vector. */
  scaleEvents = 0;
  maxBacklog = 0;

  constructor(private readonly options: FleetOptions) {
    this.preset = replicaPreset(options.preset ?? defaultPresetName);
    this.capacity = replicaCapacity(options);
    this.gpusPerReplica = options.gpusPerReplica ?? this.preset.gpusPerReplica;
    if (!Number.isInteger(this.gpusPerReplica) || this.gpusPerReplica < 1)
      throw new Error(`fleet.gpusPerReplica: a whole number of at least 1, got ${JSON.stringify(this.gpusPerReplica)}`);
    this.routing = options.routing ?? "leastOutstandingTokens";
    if (!routingRules.includes(this.routing))
      throw new Error(`fleet.routing: one of ${routingRules.join(", ")}, got ${JSON.stringify(this.routing)}`);
    this.coldStartRng = new SeededRandom(options.seed ^ 0x2545f491);
    this.roles = options.roles ?? serverRoles;
    checkRoles(this.roles);
    this.kvLink = options.kvLink ?? {
      bytesPerToken: this.preset.kvBytesPerToken,
      linkBytesPerSecond: defaultLinkBytesPerSecond,
    };
    if (!(this.kvLink.bytesPerToken > 0) || !(this.kvLink.linkBytesPerSecond > 0))
      throw new Error(
        `fleet.kvLink: bytesPerToken and linkBytesPerSecond must be positive, got ${JSON.stringify(this.kvLink)}`,
      );
    this.entryRole = (this.roles[0] as FleetRole).name;
    this.decodeRole = this.roles.find((r) => r.kind === "Decode")?.name;
    for (const role of this.roles) {
      this.specs.set(role.name, {
        engine: "vllm",
        serving: servingOf[role.kind],
        modelName: "sim",
        dataParallelSize: 1,
        tensorParallelSize: 1,
        capacity: this.capacity,
        // The fleet times the transfer on the prefill link; the decode engine takes the KV as it lands.
        kvTransferSeconds: 0,
      });
      const initial = options.initialReplicas;
      const count = typeof initial === "number" ? (this.roles.length === 1 ? initial : undefined) : initial[role.name];
      if (count === undefined || !Number.isInteger(count) || count < 0)
        throw new Error(
          `fleet.initialReplicas: needs a count of at least 0 for role ${JSON.stringify(role.name)}, got ${JSON.stringify(initial)}`,
        );
      this.desired.set(role.name, count);
      for (let i = 0; i < count; i++) {
        const r = this.create(role.name);
        r.phase = "Ready";
        r.startedAtSeconds = 0;
        r.readyAtSeconds = 0;
      }
    }
  }

  private drawColdStart(): number {
    const c = this.options.coldStartSeconds ?? defaultColdStartSeconds;
    return c.min + (c.max - c.min) * this.coldStartRng.next();
  }

  private create(role: string): FleetReplica {
    const n = this.nextName.get(role) ?? 0;
    this.nextName.set(role, n + 1);
    const name = `${role}-${n}`;
    const engine = new EngineReplica(name, this.specs.get(role) as ReplicaSpec);
    engine.onFinish((f: FinishedRequest) => this.finish(f));
    const replica: FleetReplica = { name, role, engine, phase: "Pending", coldStartSeconds: this.drawColdStart() };
    this.replicas.push(replica);
    this.byName.set(name, replica);
    return replica;
  }

  private finish(f: FinishedRequest): void {
    const record = this.records[f.request.id];
    if (record === undefined) return;
    let firstTokenSeconds = f.firstTokenSeconds;
    if (this.handedOff.delete(f.request.id)) {
      // Disaggregated: the user's stream comes from the decode replica, so the first token arrives
      // with the KV. A request that finishes in the step its KV lands has not been reported yet.
      firstTokenSeconds = Math.max(firstTokenSeconds, this.landedAtSeconds.get(f.request.id) ?? this.stepSeconds);
      this.landedAtSeconds.delete(f.request.id);
    }
    record.firstTokenSeconds = firstTokenSeconds;
    record.endSeconds = f.endSeconds;
    if (f.meanItlSeconds !== undefined) record.meanItlSeconds = f.meanItlSeconds;
  }

  private roleOrDefault(role: string | undefined): string {
    if (role !== undefined) {
      if (!this.desired.has(role))
        throw new Error(
          `role ${JSON.stringify(role)} is not a fleet role (${this.roles.map((r) => r.name).join(", ")})`,
        );
      return role;
    }
    if (this.roles.length !== 1)
      throw new Error(`the fleet has roles ${this.roles.map((r) => r.name).join(", ")}: name the role`);
    return this.entryRole;
  }

  /** Desired replicas over every role (the one role's count in an aggregated fleet). */
  get desiredReplicas(): number {
    let n = 0;
    for (const d of this.desired.values()) n += d;
    return n;
  }

  desiredOf(role: string): number {
    return this.desired.get(this.roleOrDefault(role)) ?? 0;
  }

  /** Replicas in `phase`, of one role or of every role. */
  count(phase: ReplicaPhase, role?: string): number {
    let n = 0;
    for (const r of this.replicas) if (r.phase === phase && (role === undefined || r.role === role)) n++;
    return n;
  }

  /** Replicas holding admission (starting, ready or draining) over every role: what the quota counts. */
  admitted(): number {
    return this.count("Starting") + this.count("Ready") + this.count("Draining");
  }

  /** Sets one role's desired count (the only role's when `role` is omitted); see `setDesiredVector`. */
  setDesired(replicas: number, nowSeconds: number, role?: string): void {
    this.setDesiredVector({ [this.roleOrDefault(role)]: replicas }, nowSeconds);
  }

  /**
   * Sets desired counts per role in one commit (one scale event when any
   * changes): grows with new replicas, shrinks pending first, then starting,
   * then ready (drain).
   */
  setDesiredVector(vector: Readonly<Record<string, number>>, nowSeconds: number): void {
    let changed = false;
    for (const [role, replicas] of Object.entries(vector)) {
      const name = this.roleOrDefault(role);
      const target = Math.max(0, Math.round(replicas));
      if (target === this.desired.get(name)) continue;
      changed = true;
      this.desired.set(name, target);
      this.resize(name, target, nowSeconds);
    }
    if (changed) this.scaleEvents++;
    this.admit(nowSeconds);
  }

  private resize(role: string, target: number, nowSeconds: number): void {
    const live = (): FleetReplica[] =>
      this.replicas.filter(
        (r) => r.role === role && (r.phase === "Pending" || r.phase === "Starting" || r.phase === "Ready"),
      );
    let current = live();
    for (let n = current.length; n < target; n++) this.create(role);
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
  }

  /**
   * Adds one replica of the only role that is ready exactly at `readyAtSeconds`
   * (the oracle): it starts its own cold start earlier, or is warm at zero.
   */
  addScheduled(readyAtSeconds: number): FleetReplica {
    const role = this.roleOrDefault(undefined);
    const r = this.create(role);
    r.phase = "Starting";
    r.startedAtSeconds = Math.max(0, readyAtSeconds - r.coldStartSeconds);
    r.readyAtSeconds = readyAtSeconds;
    this.desired.set(role, (this.desired.get(role) ?? 0) + 1);
    return r;
  }

  /** Retires one ready replica of the only role (the oracle): the least loaded drains. */
  retireOne(): void {
    const role = this.roleOrDefault(undefined);
    const ready = this.replicas
      .filter((r) => r.phase === "Ready")
      .sort((a, b) => a.engine.outstanding() - b.engine.outstanding());
    const r = ready[0];
    if (r !== undefined) {
      r.phase = "Draining";
      this.desired.set(role, (this.desired.get(role) ?? 0) - 1);
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
      // A draining prefill replica keeps its GPU until the KV it holds has landed elsewhere.
      else if (r.phase === "Draining" && r.engine.outstanding() === 0 && (this.heldKv.get(r.name) ?? 0) === 0) {
        r.phase = "Stopped";
        r.stoppedAtSeconds = nowSeconds;
      }
    }
    this.admit(nowSeconds);
    this.flushGateway(nowSeconds);
  }

  private ready(role: string): FleetReplica[] {
    return this.replicas.filter((r) => r.phase === "Ready" && r.role === role);
  }

  /** A replica's load by the routing rule, read from its engine. */
  private loadOf(r: FleetReplica): number {
    return this.routing === "leastOutstandingTokens" ? r.engine.outstandingTokens() : r.engine.outstanding();
  }

  /**
   * The ready replica the routing rule picks, by the router's view: each
   * replica's load at the start of the current step (engines are all at the
   * step's start then) plus what the router has sent it since (`dispatch`).
   */
  private leastLoaded(ready: readonly FleetReplica[]): FleetReplica | undefined {
    let best: FleetReplica | undefined;
    let bestLoad = Infinity;
    for (const r of ready) {
      let load = this.routerView.get(r);
      if (load === undefined) this.routerView.set(r, (load = this.loadOf(r)));
      if (load < bestLoad) {
        best = r;
        bestLoad = load;
      }
    }
    return best;
  }

  /** Brings each replica's engine to `atSeconds`; prefilled requests go on their link, landed KV is released. */
  private advanceEngines(replicas: readonly FleetReplica[], atSeconds: number): void {
    for (const r of replicas) {
      // A request that finishes in the step its KV lands reads the step's start (see `finish`).
      this.stepSeconds = Math.min(r.engine.clockSeconds ?? atSeconds, atSeconds);
      const out = r.engine.advanceTo(atSeconds);
      for (const h of out.handoffs) this.sendKv(h);
      for (const t of out.transferred) this.landed(t.id, t.fromPod, out.fromSeconds);
    }
  }

  /**
   * Hands work to `replica` at `atSeconds`: its engine first runs to that
   * instant, so the work is admitted then; the router's view of the replica
   * grows by the load the work adds.
   */
  private dispatch(replica: FleetReplica, atSeconds: number, hand: (engine: EngineReplica) => void): void {
    this.advanceEngines([replica], atSeconds);
    const before = this.loadOf(replica);
    hand(replica.engine);
    this.routerView.set(replica, (this.routerView.get(replica) ?? before) + this.loadOf(replica) - before);
  }

  private route(request: SimRequest, ready: readonly FleetReplica[], atSeconds: number): boolean {
    const best = this.leastLoaded(ready);
    if (best === undefined) return false;
    this.dispatch(best, atSeconds, (engine) => engine.enqueue(request));
    return true;
  }

  private flushGateway(nowSeconds: number): void {
    if (this.gateway.length === 0) return;
    const ready = this.ready(this.entryRole);
    if (ready.length === 0) return;
    // Called at a step boundary, where every engine is: the router reads their loads afresh.
    this.routerView.clear();
    for (const request of this.gateway.splice(0)) this.route(request, ready, nowSeconds);
  }

  /** A prefill replica finished a prompt: its KV goes on that replica's link, behind earlier transfers. */
  private sendKv(handoff: Handoff): void {
    const transferSeconds = (handoff.request.promptTokens * this.kvLink.bytesPerToken) / this.kvLink.linkBytesPerSecond;
    const start = Math.max(handoff.firstTokenSeconds, this.linkFreeAtSeconds.get(handoff.fromPod) ?? 0);
    const arrives = start + transferSeconds;
    this.linkFreeAtSeconds.set(handoff.fromPod, arrives);
    this.heldKv.set(handoff.fromPod, (this.heldKv.get(handoff.fromPod) ?? 0) + 1);
    this.inTransit.push({ handoff, arrivesAtSeconds: arrives });
  }

  /**
   * KV that has crossed its link before `untilSeconds` goes to a ready decode
   * replica (by the routing rule) in the order it landed, each at its landing
   * time (or `fromSeconds`, when it waited for a decode replica).
   */
  private deliverKv(fromSeconds: number, untilSeconds: number): void {
    if (this.inTransit.length === 0 || this.decodeRole === undefined) return;
    const ready = this.ready(this.decodeRole);
    if (ready.length === 0) return;
    const due: KvInTransit[] = [];
    let kept = 0;
    for (const t of this.inTransit) {
      if (t.arrivesAtSeconds < untilSeconds) due.push(t);
      else this.inTransit[kept++] = t;
    }
    this.inTransit.length = kept;
    due.sort((a, b) => a.arrivesAtSeconds - b.arrivesAtSeconds);
    for (const t of due) {
      const best = this.leastLoaded(ready) as FleetReplica;
      this.dispatch(best, Math.max(fromSeconds, t.arrivesAtSeconds), (engine) => engine.acceptHandoff(t.handoff));
      this.handedOff.add(t.handoff.request.id);
    }
  }

  /** The decode replica holds the KV: the prefill replica frees it, and the user sees the first token. */
  private landed(requestId: number, fromPod: string, nowSeconds: number): void {
    this.landedAtSeconds.set(requestId, nowSeconds);
    this.byName.get(fromPod)?.engine.releaseTransferred(requestId);
    this.heldKv.set(fromPod, (this.heldKv.get(fromPod) ?? 1) - 1);
  }

  /** A request arrives: it gets an id, a record, and a replica at its arrival time (or waits at the gateway). */
  private arrive(request: TraceRequest, atSeconds: number): void {
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
    if (this.gateway.length > 0 || !this.route(sim, this.ready(this.entryRole), atSeconds)) this.gateway.push(sim);
  }

  /**
   * Serves [nowSeconds, nowSeconds + dtSeconds): each of `arrivals` (in
   * arrival order, inside the interval) is routed and admitted at its arrival
   * time, then the entry role runs to the interval's end, KV that lands inside
   * it is delivered at its landing time, and every serving replica ends at the
   * end. Only the replica a request or a KV handoff goes to runs to that
   * instant, so the cost grows with arrivals, not with arrivals × replicas.
   */
  step(nowSeconds: number, dtSeconds: number, arrivals: readonly TraceRequest[] = []): void {
    const endSeconds = nowSeconds + dtSeconds;
    this.routerView.clear();
    for (const a of arrivals) this.arrive(a, Math.max(nowSeconds, a.arrivalSeconds));
    const serving = this.replicas.filter((r) => r.phase === "Ready" || r.phase === "Draining");
    // Every handoff of the interval is known once the entry role (draining replicas too) has run to its end.
    this.advanceEngines(
      serving.filter((r) => r.role === this.entryRole),
      endSeconds,
    );
    this.deliverKv(nowSeconds, endSeconds);
    this.advanceEngines(serving, endSeconds);
  }

  /** Records the backlog (waiting requests at the gateway, on links and on replicas) for `maxBacklog`. */
  sampleBacklog(): void {
    let backlog = this.gateway.length + this.inTransit.length;
    for (const r of this.replicas) {
      if (r.phase !== "Ready" && r.phase !== "Draining") continue;
      for (const rank of r.engine.ranks) backlog += rank.gauges().waiting;
    }
    if (backlog > this.maxBacklog) this.maxBacklog = backlog;
  }

  /** Requests in flight: at the gateway, on a link, or on a replica. */
  outstanding(): number {
    let n = this.gateway.length + this.inTransit.length;
    for (const r of this.replicas) if (r.phase === "Ready" || r.phase === "Draining") n += r.engine.outstanding();
    return n;
  }

  /** GPU-seconds charged in [0, untilSeconds], of every role or one: replica-seconds × GPUs per replica. */
  gpuSeconds(untilSeconds: number, role?: string): number {
    return this.replicaSeconds(untilSeconds, role) * this.gpusPerReplica;
  }

  /** Replica-seconds charged in [0, untilSeconds], of every role or one. */
  replicaSeconds(untilSeconds: number, role?: string): number {
    let total = 0;
    for (const r of this.replicas) {
      if (r.startedAtSeconds === undefined || (role !== undefined && r.role !== role)) continue;
      const end = Math.min(untilSeconds, r.stoppedAtSeconds ?? untilSeconds);
      total += Math.max(0, end - r.startedAtSeconds);
    }
    return total;
  }
}
