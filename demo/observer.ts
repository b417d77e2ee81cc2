/**
 * Watches the demo run once a second: what the scaler decided (its status and
 * commits, read from the API server) and what the engines served (the
 * simulator's ground truth), and adds up the summary.
 */
import type { EngineFleet } from "../src/sim/engines/engine-fleet.js";
import type { EngineReplica } from "../src/sim/engines/model.js";
import { ruleAt, type DemoRules, type Look } from "./late-rules.js";
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
  /** First tokens later than the TTFT target, by the rule that kept the fleet below their need when they arrived (`ruleAt`). */
  readonly lateFirstTokensByRule: Readonly<Record<string, number>>;
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
  /** Each look's roles, oldest first: what late first tokens are charged to (`ruleAt`). */
  private readonly looks: Look[] = [];
  /** Late first tokens by the index in `looks` of the look they arrived at. */
  private readonly lateByLook = new Map<number, number>();

  constructor(
    private readonly world: DemoWorld,
    private readonly fleet: EngineFleet,
    private readonly namespace: string,
    private readonly targetName: string,
    private readonly scalerName: string,
    private readonly startedMs: number,
    private readonly ttftTargetMs: number,
    private readonly rules: DemoRules,
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

  /** The first tokens that came late since the last look, each charged to the look at which it arrived. */
  private attributeLateFirstTokens(roles: readonly RoleView[], nowMs: number): void {
    this.looks.push({ atMs: nowMs, roles });
    const now = mergedCumulative([...this.tallies.values()].map((t) => t.ttft));
    const late = lateByArrival(this.firstTokens, now, this.ttftTargetMs / 1000, nowMs, (atMs) =>
      lookIndexAt(this.looks, atMs),
    );
    this.firstTokens = now;
    for (const [look, count] of late) this.lateByLook.set(look, (this.lateByLook.get(look) ?? 0) + count);
  }

  /** The late first tokens by rule, judged with every look so far (a rule may need the look a pass after the arrival). */
  private lateByRule(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [look, count] of this.lateByLook) {
      const rule = ruleAt(this.looks, look, this.rules);
      out[rule] = (out[rule] ?? 0) + count;
    }
    return out;
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
      lateFirstTokensByRule: this.lateByRule(),
    };
  }
}

/** Cumulative counts by bucket upper bound, summed over histograms. */
export function mergedCumulative(histograms: readonly (readonly Histo[])[]): Map<number, number> {
  const out = new Map<number, number>();
  for (const h of histograms) for (const b of h) out.set(b.upperBound, (out.get(b.upperBound) ?? 0) + b.count);
  return out;
}

/**
 * The first tokens late between two looks at the merged TTFT histogram, by when each arrived. Late is above
 * the largest bucket bound not above the target, as `countsWithin` counts within. A first token in the
 * bucket (L, U] came out by `nowMs` after waiting more than L, so it arrived before `nowMs` − L: it is
 * charged to `chargeTo` that instant, the latest it can have arrived. Charged at arrival, a request that
 * waited out a scale-up counts against the fleet it arrived to, not against the rule in force once the
 * replicas it waited for were ready.
 */
export function lateByArrival<K>(
  before: ReadonlyMap<number, number>,
  after: ReadonlyMap<number, number>,
  targetSeconds: number,
  nowMs: number,
  chargeTo: (atMs: number) => K,
): Map<K, number> {
  const out = new Map<K, number>();
  const bounds = [...after.keys()].sort((a, b) => a - b);
  let lower = 0;
  let previous = 0;
  for (const bound of bounds) {
    const cumulative = (after.get(bound) ?? 0) - (before.get(bound) ?? 0);
    const inBucket = cumulative - previous;
    previous = cumulative;
    if (bound > targetSeconds + 1e-12 && inBucket > 0) {
      const key = chargeTo(nowMs - lower * 1000);
      out.set(key, (out.get(key) ?? 0) + inBucket);
    }
    lower = bound;
  }
  return out;
}

/** The index of the latest look at or before `atMs`; the first look's (0) for earlier instants. */
export function lookIndexAt(looks: readonly { atMs: number }[], atMs: number): number {
  let found = 0;
  for (const [i, look] of looks.entries()) {
    if (look.atMs > atMs) break;
    found = i;
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
