/**
 * Watches the demo run once a second: what the scaler decided (its status and
 * commits, read from the API server) and what the engines served (the
 * simulator's ground truth), and adds up the summary.
 */
import type { EngineFleet } from "../src/sim/engines/engine-fleet.js";
import type { EngineReplica } from "../src/sim/engines/model.js";
import type { DemoWorld } from "./world.js";

export interface RoleView {
  readonly name: string;
  /** `spec.roles[].replicas` of the target: what the scaler committed. */
  readonly committed: number | undefined;
  readonly ready: number | undefined;
  readonly recommended: number | undefined;
  readonly constrained: number | undefined;
  readonly reason: string;
  readonly signalState: string;
  readonly demandTokensPerSecond: number | undefined;
}

export interface Commit {
  readonly atSeconds: number;
  readonly decisionID: string;
  readonly changes: readonly { role: string; from: number; to: number }[];
}

export interface Snapshot {
  readonly atSeconds: number;
  readonly roles: readonly RoleView[];
  readonly conditions: readonly { type: string; status: string; reason: string }[];
}

export interface Summary {
  readonly replaySeconds: number;
  readonly traceSeconds: number;
  readonly requestsOffered: number;
  readonly requestsServed: number;
  readonly ttftTargetMs: number;
  readonly itlTargetMs: number;
  /** Fraction of first tokens within the TTFT target, at the largest engine bucket bound not above it. */
  readonly ttftAttainment: number | undefined;
  readonly ttftBoundMs: number | undefined;
  readonly itlAttainment: number | undefined;
  readonly itlBoundMs: number | undefined;
  readonly replicaSecondsByRole: Readonly<Record<string, number>>;
  readonly commits: readonly Commit[];
  readonly commitsUp: number;
  readonly commitsDown: number;
  /** First tokens later than the TTFT target, by what the scaler was doing when they arrived (`lateCause`, `lateByArrival`). */
  readonly lateFirstTokensByCause: Readonly<Record<string, number>>;
}

interface ScalerStatusRole {
  name: string;
  readyReplicas?: number;
  rawRecommendedReplicas?: number;
  constrainedReplicas?: number;
  reason?: string;
  signalState?: string;
  promptTokensPerSecond?: string;
  generationTokensPerSecond?: string;
}

interface Histo {
  readonly upperBound: number;
  readonly count: number;
}

/** Per engine replica (an object, so a pod name reused by a new replica counts afresh): its latest totals. */
interface ReplicaTally {
  served: number;
  ttft: readonly Histo[];
  itl: readonly Histo[];
}

export class Observer {
  readonly commits: Commit[] = [];
  latest: Snapshot | undefined;
  private lastDecisionID: string | undefined;
  private readonly tallies = new Map<EngineReplica, ReplicaTally>();
  private readonly replicaSeconds = new Map<string, number>();
  private lastSampleMs: number | undefined;
  /** First tokens by TTFT bucket over every prefill or unified engine, cumulative, at the last look. */
  private firstTokens: ReadonlyMap<number, number> = new Map();
  /** What the scaler was doing at each look, oldest first (`lateCause`). */
  private readonly causes: { atMs: number; cause: string }[] = [];
  private readonly lateByCause = new Map<string, number>();

  constructor(
    private readonly world: DemoWorld,
    private readonly fleet: EngineFleet,
    private readonly namespace: string,
    private readonly targetName: string,
    private readonly scalerName: string,
    private readonly startedMs: number,
    private readonly ttftTargetMs: number,
  ) {}

  /** One look at the world; returns the commits new since the last look. */
  async sample(nowMs: number): Promise<{ snapshot: Snapshot; newCommits: Commit[] }> {
    this.tallyFleet(nowMs);
    const atSeconds = (nowMs - this.startedMs) / 1000;
    const [target, scaler] = await Promise.all([
      this.world.get(this.namespace, "modeldeployments", this.targetName),
      this.world.get(this.namespace, "modeldeploymentscalers", this.scalerName),
    ]);
    const spec = (target["spec"] ?? {}) as { roles?: { name: string; kind?: string; replicas: number }[] };
    const tstatus = (target["status"] ?? {}) as { roles?: { name: string; ready?: number }[] };
    const sstatus = (scaler["status"] ?? {}) as {
      roles?: ScalerStatusRole[];
      conditions?: { type: string; status: string; reason: string }[];
      lastCommit?: { decisionID: string; vector: Record<string, number>; baselineVector: Record<string, number> };
    };
    const roles: RoleView[] = (spec.roles ?? []).map((r) => {
      const s = sstatus.roles?.find((x) => x.name === r.name);
      // The demand each kind is sized by: prompt tokens for prefill, generated tokens for decode, both for a server.
      const prompt = s?.promptTokensPerSecond === undefined ? undefined : Number(s.promptTokensPerSecond);
      const generation = s?.generationTokensPerSecond === undefined ? undefined : Number(s.generationTokensPerSecond);
      const demand =
        r.kind === "Prefill"
          ? prompt
          : r.kind === "Decode"
            ? generation
            : prompt === undefined || generation === undefined
              ? undefined
              : prompt + generation;
      return {
        name: r.name,
        committed: r.replicas,
        ready: tstatus.roles?.find((x) => x.name === r.name)?.ready,
        recommended: s?.rawRecommendedReplicas,
        constrained: s?.constrainedReplicas,
        reason: s?.reason ?? "",
        signalState: s?.signalState ?? "",
        demandTokensPerSecond: demand,
      };
    });
    const snapshot: Snapshot = { atSeconds, roles, conditions: sstatus.conditions ?? [] };
    this.latest = snapshot;
    this.attributeLateFirstTokens(roles, nowMs);
    const newCommits: Commit[] = [];
    const last = sstatus.lastCommit;
    if (last !== undefined && last.decisionID !== this.lastDecisionID) {
      this.lastDecisionID = last.decisionID;
      const changes = Object.entries(last.vector)
        .map(([role, to]) => ({ role, from: last.baselineVector[role] ?? to, to }))
        .filter((c) => c.from !== c.to);
      const commit = { atSeconds, decisionID: last.decisionID, changes };
      this.commits.push(commit);
      newCommits.push(commit);
    }
    return { snapshot, newCommits };
  }

  /** The first tokens that came late since the last look, each charged to what the scaler was doing when it arrived. */
  private attributeLateFirstTokens(roles: readonly RoleView[], nowMs: number): void {
    this.causes.push({ atMs: nowMs, cause: lateCause(roles) });
    const now = mergedCumulative([...this.tallies.values()].map((t) => t.ttft));
    const late = lateByArrival(this.firstTokens, now, this.ttftTargetMs / 1000, nowMs, (atMs) =>
      causeAt(this.causes, atMs),
    );
    this.firstTokens = now;
    for (const [cause, count] of late) this.lateByCause.set(cause, (this.lateByCause.get(cause) ?? 0) + count);
  }

  private tallyFleet(nowMs: number): void {
    const dtSeconds = this.lastSampleMs === undefined ? 0 : (nowMs - this.lastSampleMs) / 1000;
    this.lastSampleMs = nowMs;
    for (const pod of this.fleet.listPods()) {
      if (pod.phase === "Ready")
        this.replicaSeconds.set(pod.role, (this.replicaSeconds.get(pod.role) ?? 0) + dtSeconds);
      const t = pod.replica.totals();
      // A request is served once its last token is out: on a decode or unified engine.
      const serving = pod.replica.spec.serving;
      this.tallies.set(pod.replica, {
        served: serving === "prefill" ? 0 : t.finishedRequests,
        ttft: serving === "decode" ? [] : t.ttftCumulative,
        itl: serving === "prefill" ? [] : t.itlCumulative,
      });
    }
  }

  summary(opts: {
    nowMs: number;
    speedup: number;
    requestsOffered: number;
    ttftTargetMs: number;
    itlTargetMs: number;
  }): Summary {
    this.tallyFleet(opts.nowMs);
    const tallies = [...this.tallies.values()];
    const ttft = attainment(
      tallies.map((t) => t.ttft),
      opts.ttftTargetMs / 1000,
    );
    const itl = attainment(
      tallies.map((t) => t.itl),
      opts.itlTargetMs / 1000,
    );
    const replaySeconds = (opts.nowMs - this.startedMs) / 1000;
    const directions = (c: Commit, up: boolean): boolean => c.changes.some((x) => (up ? x.to > x.from : x.to < x.from));
    return {
      replaySeconds,
      traceSeconds: replaySeconds * opts.speedup,
      requestsOffered: opts.requestsOffered,
      requestsServed: tallies.reduce((n, t) => n + t.served, 0),
      ttftTargetMs: opts.ttftTargetMs,
      itlTargetMs: opts.itlTargetMs,
      ttftAttainment: ttft?.fraction,
      ttftBoundMs: ttft === undefined ? undefined : ttft.boundSeconds * 1000,
      itlAttainment: itl?.fraction,
      itlBoundMs: itl === undefined ? undefined : itl.boundSeconds * 1000,
      replicaSecondsByRole: Object.fromEntries(this.replicaSeconds),
      commits: [...this.commits],
      commitsUp: this.commits.filter((c) => directions(c, true)).length,
      commitsDown: this.commits.filter((c) => directions(c, false)).length,
      lateFirstTokensByCause: Object.fromEntries(this.lateByCause),
    };
  }
}

/**
 * What the scaler was doing at one look, in the words its status uses, to
 * charge late first tokens to: replicas it committed that are not ready yet (starting), or
 * else each role's reason for its last decision (the rule that set the
 * replica count, e.g. `TokenThroughput`, `MaxReplicas`, `ScaleDownStabilization`).
 */
export function lateCause(roles: readonly RoleView[]): string {
  const starting = roles.filter((r) => r.ready !== undefined && r.committed !== undefined && r.ready < r.committed);
  if (starting.length > 0)
    return `replicas starting (${starting.map((r) => `${r.name} ${r.ready} of ${r.committed} ready`).join(", ")})`;
  return roles.map((r) => `${r.name} ${r.reason === "" ? "no decision yet" : r.reason}`).join(", ");
}

/** Cumulative counts by bucket upper bound, summed over histograms. */
export function mergedCumulative(histograms: readonly (readonly Histo[])[]): Map<number, number> {
  const out = new Map<number, number>();
  for (const h of histograms) for (const b of h) out.set(b.upperBound, (out.get(b.upperBound) ?? 0) + b.count);
  return out;
}

/**
 * The first tokens late between two looks at the merged TTFT histogram, by what the scaler was doing when
 * each arrived. Late is above the largest bucket bound not above the target, as `countsWithin` counts
 * within. A first token in the bucket (L, U] came out by `nowMs` after waiting more than L, so it arrived
 * before `nowMs` − L: it is charged to `causeAt` that instant, the latest state it can have arrived in.
 * Charged at arrival, a request that waited out a scale-up counts against the fleet it arrived to, not
 * against the rule in force once the replicas it waited for were ready.
 */
export function lateByArrival(
  before: ReadonlyMap<number, number>,
  after: ReadonlyMap<number, number>,
  targetSeconds: number,
  nowMs: number,
  causeAt: (atMs: number) => string,
): Map<string, number> {
  const out = new Map<string, number>();
  const bounds = [...after.keys()].sort((a, b) => a - b);
  let lower = 0;
  let previous = 0;
  for (const bound of bounds) {
    const cumulative = (after.get(bound) ?? 0) - (before.get(bound) ?? 0);
    const inBucket = cumulative - previous;
    previous = cumulative;
    if (bound > targetSeconds + 1e-12 && inBucket > 0) {
      const cause = causeAt(nowMs - lower * 1000);
      out.set(cause, (out.get(cause) ?? 0) + inBucket);
    }
    lower = bound;
  }
  return out;
}

/** The cause recorded at the latest look at or before `atMs`; the first look's for earlier instants. */
export function causeAt(causes: readonly { atMs: number; cause: string }[], atMs: number): string {
  let found = causes[0]?.cause ?? "no look yet";
  for (const c of causes) {
    if (c.atMs > atMs) break;
    found = c.cause;
  }
  return found;
}

/** Observations, and those at or below the largest bucket bound not above `targetSeconds`. */
export function countsWithin(
  histograms: readonly (readonly Histo[])[],
  targetSeconds: number,
): { total: number; within: number } {
  let total = 0;
  let within = 0;
  for (const h of histograms) {
    const inf = h.find((b) => !Number.isFinite(b.upperBound)) ?? h.at(-1);
    if (inf === undefined) continue;
    total += inf.count;
    let best: Histo | undefined;
    for (const b of h) if (b.upperBound <= targetSeconds + 1e-12) best = b;
    within += best?.count ?? 0;
  }
  return { total, within };
}

/**
 * The fraction of observations at or below the largest bucket bound not above
 * `targetSeconds`, over cumulative histograms; undefined when nothing was observed.
 */
export function attainment(
  histograms: readonly (readonly Histo[])[],
  targetSeconds: number,
): { fraction: number; boundSeconds: number } | undefined {
  const { total, within } = countsWithin(histograms, targetSeconds);
  const bounds = histograms.flatMap((h) =>
    h.filter((b) => b.upperBound <= targetSeconds + 1e-12).map((b) => b.upperBound),
  );
  if (total === 0 || bounds.length === 0) return undefined;
  return { fraction: within / total, boundSeconds: Math.max(...bounds) };
}
