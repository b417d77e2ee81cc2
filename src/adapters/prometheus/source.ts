/**
 * The PromQL signal source: one sampling pass for all due scalers issues the
 * fixed set of queries in queries.ts, then splits the results in memory into
 * one `RoleSamples` per scaler role, one `PodSample` per pod (ranks already
 * filtered and summed). Nothing unknown becomes zero: a missing or non-finite
 * value is an absent field; a query that fails, or answers with warnings (a
 * partial answer), costs only its family of fields (`unknownFamilies`), except
 * the gauge query, which names the pods: its failure marks every role of the
 * pass `queryFailed`. In the `roles` plan the latency buckets come summed by
 * role, with the pods each sum covers, and for the panic window only: the
 * stable window's buckets are read only where the panic window holds no
 * observation, so they are asked for those roles alone; a role whose sum the
 * core would not use (core/signals/role-histogram.ts) is asked again for its
 * pods' own buckets. The `native` plan reads those sums from native histograms,
 * and a window whose native sums are missing from the classic series summed by
 * role, as `roles` does. Each of these asks is the same six queries whatever the
 * number of roles in it.
 */
import { holdsObservation, sampledPods, staleAfterSeconds } from "../../core/signals/observe.js";
import { roleSumsHold } from "../../core/signals/role-histogram.js";
import type {
  EngineKind,
  HistogramWindow,
  LatencyField,
  PodSample,
  PodWindowRates,
  RoleHistogram,
  RoleSamples,
  SignalFamily,
  WindowName,
} from "../../core/signals/types.js";
import type { InstantQueryResult, NativeHistogram, PrometheusQueryClient, VectorSample } from "./client.js";
import { validatePrometheusSignalConfig, type PrometheusLabelNames, type PrometheusSignalConfig } from "./config.js";
import { nativeCumulativeCounts } from "./native-histogram.js";
import {
  bucketParts,
  buildPartQueries,
  buildSamplingQueries,
  defaultQueryPlan,
  firstUseCounters,
  instanceLabel,
  queryNames,
  samplingParts,
  seriesLabel,
  signalLabel,
  startupCounters,
  sumsByRole,
  windowLabel,
  type BucketsBy,
  type Part,
  type PartQuery,
  type QueryContext,
  type QueryName,
  type QueryPlan,
  type SamplingQueries,
  type TargetSelection,
  type WindowSelection,
} from "./queries.js";

/** What the source needs to know about one scaler; engine-agnostic. */
export interface ScalerSamplingInput {
  /** Identifies the scaler across passes, e.g. `<namespace>/<name>`. */
  readonly key: string;
  readonly namespace: string;
  /** The target ModelDeployment's name. */
  readonly deployment: string;
  readonly roles: readonly string[];
  readonly stableWindowSeconds: number;
  readonly panicWindowSeconds: number;
  readonly intervalSeconds: number;
}

export interface SamplingPass {
  readonly atUnixMs: number;
  /** Queries issued: fixed per pass, zero when nothing was due. */
  readonly queries: number;
  /** Per sampled scaler key, per role name. */
  readonly scalers: ReadonlyMap<string, ReadonlyMap<string, RoleSamples>>;
  /** Prometheus warnings, each prefixed with its query; every one made its query's family unknown. */
  readonly warnings: readonly string[];
  /** Prometheus info annotations (Prometheus 3), prefixed with their query: reported, not a partial answer. */
  readonly infos: readonly string[];
  /** The families this pass could not read in full, with the reason (also on every role's `unknownFamilies`). */
  readonly unknownFamilies: Readonly<Partial<Record<SignalFamily, string>>>;
  /**
   * `native` plan: the roles, as `<scaler key> <role> (<fields>)`, whose native sum Prometheus did not answer
   * though their pods counted observations (`nativeSumMissing`), so their classic buckets were read instead.
   * Empty under every other plan.
   */
  readonly nativeSumsMissing: readonly string[];
}

interface WindowAcc {
  rates: Map<string, number>;
  resets?: number;
  /** Counters with a sample in the window (their `resets()` part answered). */
  present: Set<string>;
  itlSeries?: string;
  samples?: number;
  /** Scrape targets (`instance`) seen in the window. */
  instances?: number;
  ttft: HistogramAcc;
  itl: HistogramAcc;
  queue: HistogramAcc;
}

interface HistogramAcc {
  buckets: Map<number, number>;
  count?: number;
  sum?: number;
  /** The engines whose count part answered for the pod, whichever it runs: the pods a role's sum covers. */
  counted: EngineKind[];
}

/** One histogram's buckets of one role and window, summed by Prometheus (`roles` plan). */
type RoleBuckets = Map<number, number>;

/** A role's summed buckets, by window and histogram. */
type RoleAcc = Map<number, Record<HistogramName, RoleBuckets>>;

const histogramNames = ["ttft", "itl", "queue"] as const;
type HistogramName = (typeof histogramNames)[number];

/** The `PodWindowRates` field each histogram fills. */
const fieldOfHistogram: Readonly<Record<HistogramName, LatencyField>> = {
  ttft: "ttftSeconds",
  itl: "itlSeconds",
  queue: "queueTimeSeconds",
};

/** The gauges of one scrape target of a pod. */
interface TargetAcc {
  engine?: EngineKind;
  timestamp?: number;
  gauges: Map<string, number>;
  /** The series a renamed gauge was read from, by `<engine>/<signal>`. */
  gaugeSeries: Map<string, string>;
}

interface PodAcc {
  namespace: string;
  deployment: string;
  role: string;
  pod: string;
  /** By `instance`: a recreated pod's old target stays in the lookback until its series go stale. */
  targets: Map<string, TargetAcc>;
  windows: Map<number, WindowAcc>;
}

/** The family of fields each query carries: what its failure or partial answer costs. */
const familyOfQuery: Readonly<Record<QueryName, SignalFamily>> = {
  gauges: "gauges",
  counters: "counters",
  ttft: "ttft",
  itl: "itl",
};

/** Which answers a pass may use: all of a complete one; only the pod names and times of a partial gauge answer. */
type Usable = "all" | "podsOnly";

/**
 * One query of a pass: its family, and, in the `parts` plan, the signal (and
 * window, when it holds one) that the `unions` plan's tags would carry.
 */
type IssuedQuery = Pick<PartQuery, "family" | "text"> &
  Partial<Pick<PartQuery, "signal" | "windowSeconds" | "perRole">>;

/**
 * What a pass has asked and read so far. The accumulators and the set of roles read from their pods'
 * own buckets grow with each ask; `scalers` is the pass as those answers give it.
 */
interface PassState {
  readonly issued: readonly IssuedQuery[];
  readonly settled: readonly PromiseSettledResult<InstantQueryResult>[];
  readonly answers: PassAnswers;
  readonly acc: PassAcc;
  /** Roles (`roleKey`) read from their pods' own buckets; undefined outside the `roles` plan. */
  readonly perPod: Set<string> | undefined;
  readonly scalers: Map<string, Map<string, RoleSamples>>;
}

/** A pass's answers as read: what may be used, and what each family's failed or partial queries cost. */
interface PassAnswers {
  readonly usable: UsableAnswer[];
  readonly failures: Map<QueryName, string>;
  readonly warnings: string[];
  readonly infos: string[];
  readonly unknownFamilies: Partial<Record<SignalFamily, string>>;
}

/** One answer a pass may use, with the query it answers. */
interface UsableAnswer {
  readonly query: IssuedQuery;
  readonly result: InstantQueryResult;
  readonly use: Usable;
}

export class PrometheusSignalSource {
  private readonly config: PrometheusSignalConfig;
  /** Queries issued since construction. */
  queriesIssued = 0;

  private readonly plan: QueryPlan;
  /** Where the `roles` and `native` plans' sums come from: the `_bucket` series, or the native histograms. */
  private readonly sums: BucketsBy;

  constructor(
    private readonly client: PrometheusQueryClient,
    config: PrometheusSignalConfig,
  ) {
    this.config = validatePrometheusSignalConfig(config);
    this.plan = this.config.queryPlan ?? defaultQueryPlan;
    this.sums = this.plan === "native" ? "native" : "role";
  }

  /**
   * One pass over exactly these scalers, evaluated at `atUnixMs`, in phases: the first ask (every part of
   * the plan), under the `roles` and `native` plans follow-up asks (`followUp`), then the pass as read.
   */
  async sample(scalers: readonly ScalerSamplingInput[], atUnixMs: number): Promise<SamplingPass> {
    if (scalers.length === 0)
      return {
        atUnixMs,
        queries: 0,
        scalers: new Map(),
        warnings: [],
        infos: [],
        unknownFamilies: {},
        nativeSumsMissing: [],
      };
    const first = await this.firstAsk(scalers, atUnixMs);
    if (first.kind === "no pods") return first.pass;
    let state = first.state;
    for (;;) {
      const next = await this.followUp(scalers, atUnixMs, state);
      if (next === undefined) break;
      state = next;
    }
    const { warnings, infos, unknownFamilies } = state.answers;
    return {
      atUnixMs,
      queries: state.issued.length,
      scalers: state.scalers,
      warnings,
      infos,
      unknownFamilies,
      nativeSumsMissing: rolesWithoutNativeSums(scalers, state.acc),
    };
  }

  /** Every part of the plan, asked and read; without the gauges no pod is known, and the pass ends there. */
  private async firstAsk(
    scalers: readonly ScalerSamplingInput[],
    atUnixMs: number,
  ): Promise<
    { readonly kind: "no pods"; readonly pass: SamplingPass } | { readonly kind: "read"; readonly state: PassState }
  > {
    const issued = this.issuedFor(scalers);
    const settled = await this.ask(issued, atUnixMs);
    const answers = readAnswers(issued, settled);
    const gaugeFailure = answers.failures.get("gauges");
    if (gaugeFailure !== undefined) {
      // The gauge query names the pods and their freshness: without it no pod is known.
      const reason = `gauges: ${gaugeFailure}`;
      const out = new Map<string, Map<string, RoleSamples>>();
      for (const s of scalers) out.set(s.key, new Map(s.roles.map((r) => [r, { pods: [], queryFailed: { reason } }])));
      const { warnings, infos, unknownFamilies } = answers;
      return {
        kind: "no pods",
        pass: {
          atUnixMs,
          queries: issued.length,
          scalers: out,
          warnings,
          infos,
          unknownFamilies,
          nativeSumsMissing: [],
        },
      };
    }
    const acc: PassAcc = {
      pods: new Map(),
      roles: new Map(),
      summed: new Map(),
      native: this.sums === "native",
      classic: new Map(),
    };
    this.accumulate(acc, answers.usable);
    const perPod = sumsByRole(this.plan) ? new Set<string>() : undefined;
    if (perPod !== undefined)
      for (const s of scalers) for (const r of s.roles) markSummed(acc, s, r, s.panicWindowSeconds);
    // Roles whose native sums are missing are read again by the follow-up, which builds the whole pass; built
    // now are only the others, whose proofs decide what else that follow-up asks.
    const missing = perPod === undefined ? undefined : missingNativeSums(scalers, acc, perPod);
    const built =
      missing === undefined || missing.cells.size === 0
        ? scalers
        : filterRoles(scalers, (key) => !missing.roles.has(key));
    const out = buildPass(built, acc, answers.unknownFamilies, perPod);
    return { kind: "read", state: { issued, settled, answers, acc, perPod, scalers: out } };
  }

  /**
   * Under the `roles` and `native` plans, one more ask when the pass so far leaves roles unread: the pods' own
   * buckets of roles whose sums failed their proof, the stable window's sums of roles whose panic window is
   * empty, and under `native` the classic sums of windows whose native sums are missing. Each kind is six
   * queries whatever its roles; under `roles` there are at most two asks (the second for roles whose stable sum
   * is unproven), under `native` one or two more where native sums are missing (the classic sums, then the pods
   * of roles whose classic sums fail the proof). Undefined when nothing is left to ask.
   */
  private async followUp(
    scalers: readonly ScalerSamplingInput[],
    atUnixMs: number,
    state: PassState,
  ): Promise<PassState | undefined> {
    const { acc, perPod } = state;
    if (perPod === undefined) return undefined;
    // Under `native`, a window whose native sums are missing is read first from the classic series summed by
    // role, as the `roles` plan reads it, with the same proof; its pods are asked only if that proof fails.
    const missing = missingNativeSums(scalers, acc, perPod);
    const unproven = filterRoles(unprovenRoles(scalers, state.scalers, atUnixMs), (key) => !missing.roles.has(key));
    const quietAll = filterRoles(
      quietRoles(scalers, state.scalers, atUnixMs, acc, perPod, unproven, state.answers.unknownFamilies),
      (key) => !missing.roles.has(key),
    );
    const classic = classicReads(missing, quietAll, acc);
    const { quiet, quietClassic } = classic;
    if (unproven.length === 0 && quietAll.length === 0 && classic.cells.size === 0) return undefined;
    const classicQueries = [
      ...this.bucketQueries(missing.panic, (ctx, _gauges, _windows, panic) => bucketParts(ctx, panic, "role")),
      ...this.bucketQueries(classic.stable, (ctx, _gauges, _windows, _panic, stable) =>
        bucketParts(ctx, stable, "role"),
      ),
    ];
    const podQueries = this.bucketQueries(unproven, (ctx, _gauges, windows) => bucketParts(ctx, windows, "pod"));
    const stableQueries = this.bucketQueries(quiet, (ctx, _gauges, _windows, _panic, stable) =>
      bucketParts(ctx, stable, this.sums),
    );
    const again = [...classicQueries, ...podQueries, ...stableQueries];
    const issued = [...state.issued, ...again];
    const settled = [...state.settled, ...(await this.ask(again, atUnixMs))];
    const all = readAnswers(issued, settled);
    const newPerPod = new Set(unproven.flatMap((s) => s.roles.map((r) => roleKey(s.namespace, s.deployment, r))));
    for (const key of newPerPod) perPod.add(key);
    const stableOf = new Set<string>();
    for (const s of quiet)
      for (const r of s.roles) {
        markSummed(acc, s, r, s.stableWindowSeconds);
        stableOf.add(cellOf(roleKey(s.namespace, s.deployment, r), windowSeconds(s.stableWindowSeconds)));
      }
    for (const s of quietClassic) for (const r of s.roles) markSummed(acc, s, r, s.stableWindowSeconds);
    const asked = (list: readonly IssuedQuery[]): UsableAnswer[] => {
      const set = new Set<IssuedQuery>(list);
      return all.usable.filter((a) => set.has(a.query));
    };
    // The windows read from the classic series start afresh: none of their native sums is mixed with them.
    for (const [cell, histograms] of classic.cells) {
      acc.roles.get(roleOfCell(cell))?.delete(windowOfCell(cell));
      acc.classic.set(cell, histograms);
    }
    this.accumulate(acc, asked(classicQueries), (key, w) => classic.cells.has(cellOf(key, w)));
    this.accumulate(acc, asked(podQueries), (key) => newPerPod.has(key));
    this.accumulate(acc, asked(stableQueries), (key, w) => stableOf.has(cellOf(key, w)));
    // A family one of these queries failed or answered partially is unknown for the pass, as for any of its queries.
    for (const family of ["ttft", "itl"] as const)
      if (all.unknownFamilies[family] !== undefined && state.answers.unknownFamilies[family] === undefined)
        forgetFamily(acc, family);
    return {
      issued,
      settled,
      answers: all,
      acc,
      perPod,
      scalers: buildPass(scalers, acc, all.unknownFamilies, perPod),
    };
  }

  /** A follow-up's bucket queries for these scalers (six, whatever their number), none for no scaler. */
  private bucketQueries(scalers: readonly ScalerSamplingInput[], build: PartsBuilder): IssuedQuery[] {
    return scalers.length === 0 ? [] : buildPartQueries(this.partsFor(scalers, build));
  }

  /** The queries, independent: each one's failure or partial answer costs its family's fields only. */
  private ask(queries: readonly IssuedQuery[], atUnixMs: number): Promise<PromiseSettledResult<InstantQueryResult>[]> {
    this.queriesIssued += queries.length;
    return Promise.allSettled(queries.map((q) => this.client.instantQuery(q.text, atUnixMs, q.family)));
  }

  /** The queries a pass over these scalers issues under the configured plan, gauges first. */
  issuedFor(scalers: readonly ScalerSamplingInput[]): IssuedQuery[] {
    const plan = this.plan;
    if (sumsByRole(plan)) return buildPartQueries(this.partsFor(scalers, summedByRoleInPanicWindow(this.sums)));
    if (plan !== "unions") return buildPartQueries(this.partsFor(scalers));
    const unions = buildSamplingQueries(this.partsFor(scalers));
    return queryNames.map((family) => ({ family, text: unions[family] }));
  }

  /** The four queries of the `unions` plan over these scalers (exposed for tests and docs). */
  queriesFor(scalers: readonly ScalerSamplingInput[]): SamplingQueries {
    return buildSamplingQueries(this.partsFor(scalers));
  }

  /** Every part a pass over these scalers reads, by family (`samplingParts`, or another builder of the same shape). */
  private partsFor(scalers: readonly ScalerSamplingInput[], build: PartsBuilder = everyPart): PassParts {
    const selection = (list: readonly ScalerSamplingInput[]): TargetSelection => ({
      namespaces: list.map((s) => s.namespace),
      deployments: list.map((s) => s.deployment),
      roles: list.flatMap((s) => s.roles),
    });
    const windowsOf = (pick: (s: ScalerSamplingInput) => readonly number[]): WindowSelection[] => {
      const byWindow = new Map<number, ScalerSamplingInput[]>();
      for (const s of scalers) {
        for (const w of new Set(pick(s).map(windowSeconds))) {
          const list = byWindow.get(w);
          if (list) list.push(s);
          else byWindow.set(w, [s]);
        }
      }
      return [...byWindow.entries()]
        .sort((a, b) => a[0] - b[0])
        .map(([w, list]) => ({ windowSeconds: w, selection: selection(list) }));
    };
    return build(
      { labels: this.config.labels, separator: this.config.metricNameSeparator, matchers: this.config.matchers ?? [] },
      selection(scalers),
      windowsOf((s) => [s.stableWindowSeconds, s.panicWindowSeconds]),
      windowsOf((s) => [s.panicWindowSeconds]),
      windowsOf((s) => [s.stableWindowSeconds]),
    );
  }

  /**
   * Reads the answers in the order the queries were issued: the gauges first, so each pod's engine is known.
   * With `only`, reads the series of the roles (`roleKey`) and windows it accepts alone: a query's selection
   * is a cross product of namespaces, deployments and roles, wider than the roles it was asked for.
   */
  private accumulate(
    acc: PassAcc,
    answers: readonly UsableAnswer[],
    only?: (key: string, windowSeconds: number) => boolean,
  ): void {
    const l = this.config.labels;
    const tags = new Tags();
    for (const answer of answers) {
      // A `parts` query names its signal (and its window when it holds one); a union's parts carry them as tags.
      const signal = answer.query.signal;
      const queryTag = signal === undefined ? undefined : tags.of(signal);
      for (const s of answer.result.samples) {
        if (
          only !== undefined &&
          !only(
            roleKey(s.labels[l.namespace], s.labels[l.deployment], s.labels[l.role]),
            answer.query.windowSeconds ?? Number(s.labels[windowLabel]),
          )
        )
          continue;
        // NaN and ±Inf are unknown, never a reading; a native histogram is read by the sums alone.
        if (!Number.isFinite(s.value) && (s.histogram === undefined || answer.query.perRole !== true)) continue;
        const tag = signal === undefined ? tags.of(s.labels[signalLabel]) : queryTag;
        if (tag !== undefined) readSample(acc, l, answer, s, tag);
      }
    }
  }
}

type PassParts = Readonly<Record<QueryName, readonly Part[]>>;
/** Builds a pass's parts from the windows of its scalers: every window, the panic windows, the stable windows. */
type PartsBuilder = (
  ctx: QueryContext,
  gauges: TargetSelection,
  windows: readonly WindowSelection[],
  panic: readonly WindowSelection[],
  stable: readonly WindowSelection[],
) => PassParts;

/** Every part of every window, the buckets per pod (`unions` and `parts`). */
const everyPart: PartsBuilder = (ctx, gauges, windows) => samplingParts(ctx, gauges, windows);

/**
 * The `roles` and `native` plans' first parts: the histogram buckets summed by
 * role (from the `_bucket` series, or from the native histograms), of the
 * panic window alone (the stable window's are asked where they are read); the
 * counts and sums of every window.
 */
const summedByRoleInPanicWindow =
  (sums: BucketsBy): PartsBuilder =>
  (ctx, gauges, windows, panic) =>
    samplingParts(ctx, gauges, windows, sums, panic);

/** What a pass has read so far: per pod, and the buckets Prometheus summed per role (`roleKey`). */
interface PassAcc {
  readonly pods: Map<string, PodAcc>;
  readonly roles: Map<string, RoleAcc>;
  /** Per role (`roleKey`), the windows (in seconds) whose summed buckets were asked. */
  readonly summed: Map<string, Set<number>>;
  /** The sums are native histograms (`native` plan): a role they did not answer for has no sum, not an empty one. */
  readonly native: boolean;
  /**
   * `native` plan: by `<roleKey>\0<window seconds>`, the windows whose native sums were missing (`nativeSumMissing`),
   * with the histograms missing: those windows' sums are read from the classic `_bucket` series instead.
   */
  readonly classic: Map<string, ReadonlySet<HistogramName>>;
}

function cellOf(key: string, w: number): string {
  return `${key}\u0000${w}`;
}

function roleOfCell(cell: string): string {
  return cell.slice(0, cell.lastIndexOf("\u0000"));
}

function windowOfCell(cell: string): number {
  return Number(cell.slice(cell.lastIndexOf("\u0000") + 1));
}

/** The roles (`roleKey`) with a window read from the classic series, with the histograms whose native sums were missing. */
function classicHistogramsByRole(acc: PassAcc): Map<string, ReadonlySet<HistogramName>> {
  const out = new Map<string, Set<HistogramName>>();
  for (const [cell, histograms] of acc.classic) {
    const key = roleOfCell(cell);
    const set = out.get(key) ?? new Set<HistogramName>();
    for (const h of histograms) set.add(h);
    out.set(key, set);
  }
  return out;
}

/** Whether a role's sums of this window are native histograms: under `native`, unless they were missing there. */
function nativeSumsAt(acc: PassAcc, key: string, w: number): boolean {
  return acc.native && !acc.classic.has(cellOf(key, w));
}

function markSummed(acc: PassAcc, s: ScalerSamplingInput, role: string, seconds: number): void {
  const key = roleKey(s.namespace, s.deployment, role);
  let windows = acc.summed.get(key);
  if (!windows) acc.summed.set(key, (windows = new Set()));
  windows.add(windowSeconds(seconds));
}

/**
 * One `RoleSamples` per scaler and role. `perPodRoles` is set in the `roles`
 * plan: every role not in it (by `roleKey`) carries its summed buckets (`roleHistograms`).
 */
function buildPass(
  scalers: readonly ScalerSamplingInput[],
  acc: PassAcc,
  unknownFamilies: Partial<Record<SignalFamily, string>>,
  perPodRoles: ReadonlySet<string> | undefined,
): Map<string, Map<string, RoleSamples>> {
  const partial = Object.keys(unknownFamilies).length > 0 ? { unknownFamilies } : {};
  const byRole = podsByRole(acc);
  const out = new Map<string, Map<string, RoleSamples>>();
  for (const s of scalers) {
    const roles = new Map<string, RoleSamples>();
    for (const role of s.roles) {
      const key = roleKey(s.namespace, s.deployment, role);
      const pods = byRole.get(key) ?? [];
      const samples: PodSample[] = [];
      for (const pod of pods) {
        const sample = toPodSample(pod, s);
        if (sample) samples.push(sample);
      }
      samples.sort((a, b) => (a.pod < b.pod ? -1 : a.pod > b.pod ? 1 : 0));
      const summed =
        perPodRoles === undefined || perPodRoles.has(key)
          ? undefined
          : roleHistograms(pods, acc.roles.get(key), acc.summed.get(key), s, (w) => nativeSumsAt(acc, key, w));
      roles.set(role, { pods: samples, ...partial, ...(summed === undefined ? {} : { roleHistograms: summed }) });
    }
    out.set(s.key, roles);
  }
  return out;
}

/** The pass's pods by role (`roleKey`), indexed once: a scan of every pod for every scaler and role grows with the square of the fleet. */
function podsByRole(acc: PassAcc): Map<string, PodAcc[]> {
  const byRole = new Map<string, PodAcc[]>();
  for (const pod of acc.pods.values()) {
    const key = roleKey(pod.namespace, pod.deployment, pod.role);
    const list = byRole.get(key);
    if (list) list.push(pod);
    else byRole.set(key, [pod]);
  }
  return byRole;
}

/**
 * The scalers, each with the roles whose stable window's summed buckets the
 * core will read and the pass has not asked: a role read from its sums (not
 * per pod, not unproven) whose panic window holds no observation of a latency
 * field of a family the pass could read and whose stable window, another
 * window, holds one (`holdsObservation`: the pods' counts of both windows are
 * in the first answers).
 */
function quietRoles(
  scalers: readonly ScalerSamplingInput[],
  out: ReadonlyMap<string, ReadonlyMap<string, RoleSamples>>,
  atUnixMs: number,
  acc: PassAcc,
  perPod: ReadonlySet<string>,
  unproven: readonly ScalerSamplingInput[],
  unknownFamilies: Partial<Record<SignalFamily, string>>,
): ScalerSamplingInput[] {
  const excluded = new Set(unproven.flatMap((s) => s.roles.map((r) => roleKey(s.namespace, s.deployment, r))));
  const fields = histogramNames
    .filter((h) => unknownFamilies[h === "itl" ? "itl" : "ttft"] === undefined)
    .map((h) => fieldOfHistogram[h]);
  const quiet: ScalerSamplingInput[] = [];
  for (const s of scalers) {
    const stable = windowSeconds(s.stableWindowSeconds);
    if (stable === windowSeconds(s.panicWindowSeconds)) continue;
    const stale = staleAfterSeconds(s.intervalSeconds);
    const roles = s.roles.filter((role) => {
      const key = roleKey(s.namespace, s.deployment, role);
      if (perPod.has(key) || excluded.has(key) || acc.summed.get(key)?.has(stable) === true) return false;
      const samples = out.get(s.key)?.get(role);
      if (samples === undefined || samples.queryFailed !== undefined) return false;
      const pods = sampledPods(samples.pods, atUnixMs, stale);
      // Where the stable window holds no observation either (the counts say so), latency is unknown whatever its buckets.
      return fields.some((field) => !holdsObservation(pods, "panic", field) && holdsObservation(pods, "stable", field));
    });
    if (roles.length > 0) quiet.push({ ...s, roles });
  }
  return quiet;
}

/** The scalers with the roles (`roleKey`) `keep` accepts, and without those left with none. */
function filterRoles(
  scalers: readonly ScalerSamplingInput[],
  keep: (roleKey: string) => boolean,
): ScalerSamplingInput[] {
  return scalers
    .map((s) => ({ ...s, roles: s.roles.filter((r) => keep(roleKey(s.namespace, s.deployment, r))) }))
    .filter((s) => s.roles.length > 0);
}

/** The scalers, each with the roles whose summed buckets the core would not use (`roleSumsHold`). */
function unprovenRoles(
  scalers: readonly ScalerSamplingInput[],
  out: ReadonlyMap<string, ReadonlyMap<string, RoleSamples>>,
  atUnixMs: number,
): ScalerSamplingInput[] {
  const unproven: ScalerSamplingInput[] = [];
  for (const s of scalers) {
    const stale = staleAfterSeconds(s.intervalSeconds);
    const roles = s.roles.filter((role) => {
      const samples = out.get(s.key)?.get(role);
      return samples !== undefined && !roleSumsHold(samples, sampledPods(samples.pods, atUnixMs, stale));
    });
    if (roles.length > 0) unproven.push({ ...s, roles });
  }
  return unproven;
}

/** A role's summed buckets by window name and histogram, with the pods each sum covers. */
function roleHistograms(
  pods: readonly PodAcc[],
  role: RoleAcc | undefined,
  asked: ReadonlySet<number> | undefined,
  scaler: ScalerSamplingInput,
  nativeAt: (windowSeconds: number) => boolean,
): RoleSamples["roleHistograms"] {
  const out: Partial<Record<WindowName, Partial<Record<LatencyField, RoleHistogram>>>> = {};
  const windows: [WindowName, number][] = [
    ["stable", scaler.stableWindowSeconds],
    ["panic", scaler.panicWindowSeconds],
  ];
  for (const [name, seconds] of windows) {
    const w = windowSeconds(seconds);
    // A window whose sums were not asked (the stable one, where the panic window held observations) is not read.
    if (asked?.has(w) !== true) continue;
    const byField: Partial<Record<LatencyField, RoleHistogram>> = {};
    for (const histogram of histogramNames) {
      const covered = coveredPods(pods, w, histogram);
      const answered = role?.get(w)?.[histogram] ?? new Map<number, number>();
      // Classic bucket series absent are a role without buckets, as its pods' merge would read them.
      const buckets =
        nativeAt(w) && nativeSumMissing(covered.length > 0, answered) ? new Map([[Infinity, NaN]]) : answered;
      if (covered.length > 0 || buckets.size > 0)
        byField[fieldOfHistogram[histogram]] = { pods: covered, buckets: cumulativeBuckets(buckets) };
    }
    if (Object.keys(byField).length > 0) out[name] = byField;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** The pods whose count part answered for this window and histogram (the pods a role's sum covers), by name. */
function coveredPods(
  pods: readonly PodAcc[],
  w: number,
  histogram: HistogramName,
): { readonly pod: string; readonly engine: EngineKind }[] {
  return pods
    .flatMap((pod) => (pod.windows.get(w)?.[histogram].counted ?? []).map((engine) => ({ pod: pod.pod, engine })))
    .sort((a, b) => (a.pod < b.pod ? -1 : a.pod > b.pod ? 1 : 0));
}

/**
 * A role's native histogram absent though its pods counted observations (a Prometheus that does not convert,
 * a store without native histograms, a pod scraped before the conversion, pods whose buckets Prometheus could
 * not add) is a sum not known: its `+Inf` count is unknown, which no proof accepts, so the pods' own buckets
 * are asked.
 */
function nativeSumMissing(podsCounted: boolean, answered: ReadonlyMap<number, number>): boolean {
  return podsCounted && answered.size === 0;
}

/** The histograms of one role and window whose native sums are missing (`nativeSumMissing`); none where they are not native. */
function missingHistograms(acc: PassAcc, key: string, pods: readonly PodAcc[], w: number): HistogramName[] {
  if (!nativeSumsAt(acc, key, w)) return [];
  return histogramNames.filter((histogram) => {
    const answered = acc.roles.get(key)?.get(w)?.[histogram] ?? new Map<number, number>();
    const counted = pods.some((pod) => (pod.windows.get(w)?.[histogram].counted.length ?? 0) > 0);
    return nativeSumMissing(counted, answered);
  });
}

/**
 * `native` plan, after a pass's asks: each role with a window whose native sums were missing (read since from
 * the classic series, or still missing), as `<scaler key> <role> (<fields>)`. What a user who chose the plan
 * needs to see: Prometheus is not converting the histograms these roles' pods expose.
 */
function rolesWithoutNativeSums(scalers: readonly ScalerSamplingInput[], acc: PassAcc): string[] {
  if (!acc.native) return [];
  const byRole = podsByRole(acc);
  const out: string[] = [];
  for (const s of scalers)
    for (const role of s.roles) {
      const key = roleKey(s.namespace, s.deployment, role);
      const pods = byRole.get(key) ?? [];
      const missing = new Set<HistogramName>();
      for (const w of acc.summed.get(key) ?? [])
        for (const histogram of [...(acc.classic.get(cellOf(key, w)) ?? []), ...missingHistograms(acc, key, pods, w)])
          missing.add(histogram);
      const fields = histogramNames.filter((h) => missing.has(h)).map((h) => fieldOfHistogram[h]);
      if (fields.length > 0) out.push(`${s.key} ${role} (${fields.join(", ")})`);
    }
  return out;
}

/**
 * What a follow-up reads from the classic series summed by role (`native` plan): the windows whose native sums
 * are missing, and the stable window of a quiet role whose native sums were missing in its panic window (its
 * pods' histograms are not converted either), read from the classic series at once; the other quiet roles.
 */
function classicReads(
  missing: MissingNativeSums,
  quietAll: readonly ScalerSamplingInput[],
  acc: PassAcc,
): {
  readonly cells: Map<string, ReadonlySet<HistogramName>>;
  readonly stable: ScalerSamplingInput[];
  readonly quiet: ScalerSamplingInput[];
  readonly quietClassic: ScalerSamplingInput[];
} {
  const classicOf = classicHistogramsByRole(acc);
  const quiet = filterRoles(quietAll, (key) => !classicOf.has(key));
  const quietClassic = filterRoles(quietAll, (key) => classicOf.has(key));
  const cells = new Map(missing.cells);
  for (const s of quietClassic)
    for (const r of s.roles) {
      const key = roleKey(s.namespace, s.deployment, r);
      cells.set(cellOf(key, windowSeconds(s.stableWindowSeconds)), classicOf.get(key) ?? new Set());
    }
  return { cells, stable: [...missing.stable, ...quietClassic], quiet, quietClassic };
}

/** The windows of roles (not read per pod) whose native sums are missing, not yet read from the classic series. */
interface MissingNativeSums {
  /** The scalers with the roles missing them in their panic window, and in their (other) stable window. */
  readonly panic: ScalerSamplingInput[];
  readonly stable: ScalerSamplingInput[];
  /** By `cellOf(roleKey, window)`, the histograms missing. */
  readonly cells: Map<string, ReadonlySet<HistogramName>>;
  /** The roles (`roleKey`) of those cells. */
  readonly roles: Set<string>;
}

function missingNativeSums(
  scalers: readonly ScalerSamplingInput[],
  acc: PassAcc,
  perPod: ReadonlySet<string>,
): MissingNativeSums {
  const out: MissingNativeSums = { panic: [], stable: [], cells: new Map(), roles: new Set() };
  if (!acc.native) return out;
  const byRole = podsByRole(acc);
  for (const s of scalers) {
    const panic = windowSeconds(s.panicWindowSeconds);
    const inPanic: string[] = [];
    const inStable: string[] = [];
    for (const role of s.roles) {
      const key = roleKey(s.namespace, s.deployment, role);
      if (perPod.has(key)) continue;
      for (const w of acc.summed.get(key) ?? []) {
        const missing = missingHistograms(acc, key, byRole.get(key) ?? [], w);
        if (missing.length === 0) continue;
        out.cells.set(cellOf(key, w), new Set(missing));
        out.roles.add(key);
        (w === panic ? inPanic : inStable).push(role);
      }
    }
    if (inPanic.length > 0) out.panic.push({ ...s, roles: inPanic });
    if (inStable.length > 0) out.stable.push({ ...s, roles: inStable });
  }
  return out;
}

/** Drops what the pass read of a family that turned unknown: its fields are absent, never partial. */
function forgetFamily(acc: PassAcc, family: "ttft" | "itl"): void {
  const names: readonly HistogramName[] = family === "ttft" ? ["ttft", "queue"] : ["itl"];
  for (const pod of acc.pods.values())
    for (const win of pod.windows.values()) {
      for (const name of names) win[name] = emptyHistogram();
      if (family === "itl") delete win.itlSeries;
    }
  for (const role of acc.roles.values())
    for (const win of role.values()) for (const name of names) win[name] = new Map();
}

/** What a sample's tag says: the engine, the signal and, for a reset count or a queue-time part, the counter. */
interface Tag {
  readonly engine: EngineKind;
  readonly signal: string;
  readonly counter: string | undefined;
}

/** Each tag read once per pass, however many series carry it. */
class Tags {
  private readonly read = new Map<string, Tag | undefined>();

  of(text: string | undefined): Tag | undefined {
    if (text === undefined) return undefined;
    if (this.read.has(text)) return this.read.get(text);
    const [engine, signal, counter] = text.split("/");
    const tag: Tag | undefined =
      (engine === "vllm" || engine === "sglang") && signal ? { engine, signal, counter } : undefined;
    this.read.set(text, tag);
    return tag;
  }
}

/** Adds one sample of a usable answer to its pod: a gauge to its scrape target, anything else to its window. */
function readSample(
  pass: PassAcc,
  labels: PrometheusLabelNames,
  answer: UsableAnswer,
  s: VectorSample,
  tag: Tag,
): void {
  if (answer.query.perRole === true) return readRoleBuckets(pass.roles, labels, answer, s, tag);
  const acc = podOf(pass.pods, labels, s);
  if (!acc) return;
  const family = answer.query.family;
  if (family === "gauges") return readGauge(targetOf(acc, s), s, tag, answer.use);
  const win = windowOf(acc, answer.query.windowSeconds ?? Number(s.labels[windowLabel]));
  if (!win) return;
  if (family === "counters") return readCounter(win, s, tag);
  readHistogramPart(acc, win, family, s, tag);
}

/** A bucket of a role's sum (`roles` plan): per role, window and histogram, both engines' parts added. */
function readRoleBuckets(
  roles: Map<string, RoleAcc>,
  l: PrometheusLabelNames,
  answer: UsableAnswer,
  s: VectorSample,
  { signal }: Tag,
): void {
  const namespace = s.labels[l.namespace];
  const deployment = s.labels[l.deployment];
  const role = s.labels[l.role];
  const w = answer.query.windowSeconds ?? Number(s.labels[windowLabel]);
  const le = parseLe(s.labels["le"]);
  if (!namespace || !deployment || !role || !Number.isFinite(w) || (le === undefined && s.histogram === undefined))
    return;
  const key = roleKey(namespace, deployment, role);
  let acc = roles.get(key);
  if (!acc) roles.set(key, (acc = new Map()));
  let win = acc.get(w);
  if (!win) acc.set(w, (win = { ttft: new Map(), itl: new Map(), queue: new Map() }));
  const buckets = signal === "queue" ? win.queue : answer.query.family === "ttft" ? win.ttft : win.itl;
  if (s.histogram !== undefined) return addNativeSum(buckets, s.histogram);
  if (le !== undefined) buckets.set(le, (buckets.get(le) ?? 0) + s.value);
}

/**
 * A role's native histogram (`native` plan) as the cumulative counts at bounds a role's `_bucket` sums give
 * (`nativeCumulativeCounts`). Only the bounds of the buckets the answer names are known, so a second histogram
 * for the same role and window (both engines' parts of a mixed role) cannot be added bound by bound as
 * `_bucket` series are: the sum is then not known, and its pods' own buckets are asked.
 */
function addNativeSum(buckets: Map<number, number>, histogram: NativeHistogram): void {
  if (buckets.size > 0) {
    buckets.set(Infinity, NaN);
    return;
  }
  for (const [bound, count] of nativeCumulativeCounts(histogram)) buckets.set(bound, count);
}

function podOf(pods: Map<string, PodAcc>, l: PrometheusLabelNames, s: VectorSample): PodAcc | undefined {
  const namespace = s.labels[l.namespace];
  const deployment = s.labels[l.deployment];
  const role = s.labels[l.role];
  const pod = s.labels[l.pod];
  if (!namespace || !deployment || !role || !pod) return undefined;
  const key = `${roleKey(namespace, deployment, role)}\u0000${pod}`;
  let acc = pods.get(key);
  if (!acc) pods.set(key, (acc = { namespace, deployment, role, pod, targets: new Map(), windows: new Map() }));
  return acc;
}

function targetOf(acc: PodAcc, s: VectorSample): TargetAcc {
  const instance = s.labels[instanceLabel] ?? "";
  let target = acc.targets.get(instance);
  if (!target) acc.targets.set(instance, (target = { gauges: new Map(), gaugeSeries: new Map() }));
  return target;
}

function windowOf(acc: PodAcc, w: number): WindowAcc | undefined {
  if (!Number.isFinite(w)) return undefined;
  let win = acc.windows.get(w);
  if (!win)
    acc.windows.set(
      w,
      (win = {
        rates: new Map(),
        present: new Set(),
        ttft: emptyHistogram(),
        itl: emptyHistogram(),
        queue: emptyHistogram(),
      }),
    );
  return win;
}

function emptyHistogram(): HistogramAcc {
  return { buckets: new Map(), counted: [] };
}

/** The scrape time names the target's engine; gauge values count only from a complete answer. */
function readGauge(target: TargetAcc, s: VectorSample, { engine, signal }: Tag, use: Usable): void {
  if (signal === "timestamp") {
    if (target.engine === undefined || (target.timestamp ?? -Infinity) < s.value) target.engine = engine;
    target.timestamp = Math.max(target.timestamp ?? -Infinity, s.value);
  } else if (use === "all") {
    target.gauges.set(`${engine}/${signal}`, s.value);
    const series = s.labels[seriesLabel];
    if (series !== undefined) target.gaugeSeries.set(`${engine}/${signal}`, `${engine}:${series}`);
  }
}

function readCounter(win: WindowAcc, s: VectorSample, { engine, signal, counter }: Tag): void {
  if (signal === "resets") {
    win.resets = (win.resets ?? 0) + s.value;
    if (counter !== undefined) win.present.add(`${engine}/${counter}`);
  } else if (signal === "cached") {
    // Storage tiers are named per backend (`storage_HiCacheNixl`); an unlabelled series is a total.
    const source = s.labels["cache_source"] ?? "";
    const tier = source === "" ? "total" : source.startsWith("storage") ? "storage" : source;
    const key = `${engine}/cached/${tier}`;
    win.rates.set(key, (win.rates.get(key) ?? 0) + s.value);
  } else if (signal === "samples") win.samples = Math.min(win.samples ?? Infinity, s.value);
  else if (signal === "instances") win.instances = Math.max(win.instances ?? 0, s.value);
  else if (signal === "effective") win.rates.set(`${engine}/effective/${s.labels["mode"] ?? ""}`, s.value);
  else win.rates.set(`${engine}/${signal}`, s.value);
}

/** A TTFT, ITL or queue-time part, counted only when it comes from the engine the pod's newest target runs. */
function readHistogramPart(
  acc: PodAcc,
  win: WindowAcc,
  family: QueryName,
  s: VectorSample,
  { engine: tagEngine, signal, counter }: Tag,
): void {
  // Queue-time parts ride in the TTFT answer, tagged `<engine>/queue/<part>`.
  const queue = signal === "queue";
  const h = queue ? win.queue : family === "ttft" ? win.ttft : win.itl;
  const part = queue ? counter : signal;
  if (part === "count") h.counted.push(tagEngine);
  const engine = newestTarget(acc)?.engine;
  if (tagEngine !== engine && engine !== undefined) return;
  if (family === "itl" && s.labels[seriesLabel] !== undefined) win.itlSeries = `${tagEngine}:${s.labels[seriesLabel]}`;
  if (part === "bucket") {
    // `le="1.0"` (Prometheus 2) and `le="1"` (Prometheus 3) are one bucket: a window
    // spanning an upgrade holds both series, each with part of the increase.
    const le = parseLe(s.labels["le"]);
    if (le !== undefined) h.buckets.set(le, (h.buckets.get(le) ?? 0) + s.value);
  } else if (part === "count") h.count = s.value;
  else if (part === "sum") h.sum = s.value;
}

/** Kubernetes names and label values hold no NUL, so the key names one role. */
function roleKey(namespace: string | undefined, deployment: string | undefined, role: string | undefined): string {
  return `${namespace}\u0000${deployment}\u0000${role}`;
}

/** Prometheus ranges take whole seconds; windows below one second are not meaningful. */
function windowSeconds(w: number): number {
  return Math.max(1, Math.round(w));
}

function parseLe(le: string | undefined): number | undefined {
  if (le === undefined) return undefined;
  if (le === "+Inf" || le === "Inf") return Infinity;
  const v = Number(le);
  return Number.isNaN(v) ? undefined : v;
}

/**
 * Prometheus 3's warnings where native histograms of one group, or of one series over its window, have bucket
 * layouts it cannot add (`util/annotations`): the group or series is left out of the answer.
 */
const histogramLayoutWarning = /incompatible custom buckets|mix of histograms with exponential and custom buckets/;

/**
 * Reads the answers of a pass: what may be used, and what each family's failed or partial
 * queries cost. A family is as good as its worst query: one failed query fails the family
 * (the first failure in issue order is its reason), one partial answer makes it partial.
 */
function readAnswers(
  queries: readonly IssuedQuery[],
  settled: readonly PromiseSettledResult<InstantQueryResult>[],
): PassAnswers {
  const failures = new Map<QueryName, string>();
  const partial = new Map<QueryName, string[]>();
  const infos: string[] = [];
  const answered: { query: IssuedQuery; result: InstantQueryResult }[] = [];
  settled.forEach((s, i) => {
    const query = queries[i];
    if (!query) return;
    const name = query.family;
    if (s.status === "rejected") {
      if (!failures.has(name)) failures.set(name, s.reason instanceof Error ? s.reason.message : String(s.reason));
      return;
    }
    answered.push({ query, result: s.value });
    // A native sum Prometheus could not add (pods of a role with other bucket layouts) is left out of the
    // answer, with this warning; a role without its sum, or whose sum misses a pod, is asked for its pods'
    // own buckets, so nothing is read from what is missing: the family stays known, the warning is reported.
    const layout = (w: string): boolean => query.perRole === true && histogramLayoutWarning.test(w);
    const warnings = s.value.warnings.filter((w) => !layout(w));
    for (const info of [...(s.value.infos ?? []), ...s.value.warnings.filter(layout)])
      if (!infos.includes(`${name}: ${info}`)) infos.push(`${name}: ${info}`);
    if (warnings.length === 0) return;
    // The queries of one family read the same stores: each warning once.
    const seen = partial.get(name) ?? [];
    for (const warning of warnings) if (!seen.includes(warning)) seen.push(warning);
    partial.set(name, seen);
  });
  const warnings: string[] = [];
  const unknownFamilies: Partial<Record<SignalFamily, string>> = {};
  for (const name of queryNames) {
    const family = familyOfQuery[name];
    const failure = failures.get(name);
    const partialWarnings = partial.get(name);
    if (partialWarnings !== undefined) warnings.push(...partialWarnings.map((warning) => `${name}: ${warning}`));
    if (failure !== undefined) unknownFamilies[family] = `${name} query failed: ${failure}`;
    // A warning may mean a store did not answer (remote read, a federating layer's partial
    // response): what came back may be half the demand, so the family is unknown, not smaller.
    else if (partialWarnings !== undefined)
      unknownFamilies[family] = `${name} query answered partially: ${partialWarnings.join("; ")}`;
  }
  const usable: UsableAnswer[] = [];
  for (const { query, result } of answered) {
    const name = query.family;
    if (failures.has(name)) continue;
    if (!partial.has(name)) usable.push({ query, result, use: "all" });
    // The pods a partial gauge answer names did answer; their gauge values may be partial sums.
    else if (name === "gauges") usable.push({ query, result, use: "podsOnly" });
  }
  return { usable, failures, warnings, infos, unknownFamilies };
}

/** The pod's newest scrape target: a recreated pod's old target, still in the lookback, is older. */
function newestTarget(acc: PodAcc): TargetAcc | undefined {
  let newest: TargetAcc | undefined;
  for (const target of acc.targets.values()) {
    if (target.engine === undefined || target.timestamp === undefined) continue;
    if (newest === undefined || (newest.timestamp ?? -Infinity) < target.timestamp) newest = target;
  }
  return newest;
}

function toPodSample(acc: PodAcc, scaler: ScalerSamplingInput): PodSample | undefined {
  // A pod without a current gauge sample did not answer.
  const target = newestTarget(acc);
  const engine = target?.engine;
  if (target === undefined || engine === undefined || target.timestamp === undefined) return undefined;
  const g = (name: string): number | undefined => target.gauges.get(`${engine}/${name}`);
  const running = g("running");
  const waiting = g("waiting");
  const kv = g("kv");
  const transfer = g("transfer");
  const prealloc = g("prealloc");
  const bootstrap = g("bootstrap");
  const kvSeries = target.gaugeSeries.get(`${engine}/kv`) ?? (engine === "sglang" ? "sglang:token_usage" : undefined);
  const bootstrapSeries = target.gaugeSeries.get(`${engine}/bootstrap`);
  const gaugeSeries = {
    ...(kv !== undefined && kvSeries !== undefined ? { kvCacheUsage: kvSeries } : {}),
    ...(bootstrap !== undefined && bootstrapSeries !== undefined
      ? { prefillBootstrapQueueRequests: bootstrapSeries }
      : {}),
  };
  return {
    pod: acc.pod,
    engine,
    lastSampleUnixSeconds: target.timestamp,
    ...(running !== undefined ? { runningRequests: running } : {}),
    ...(waiting !== undefined ? { waitingRequests: waiting } : {}),
    ...(transfer !== undefined ? { decodeTransferQueueRequests: transfer } : {}),
    ...(prealloc !== undefined ? { decodePreallocQueueRequests: prealloc } : {}),
    ...(bootstrap !== undefined ? { prefillBootstrapQueueRequests: bootstrap } : {}),
    ...(kv !== undefined ? { kvCacheUsage: kv } : {}),
    ...(Object.keys(gaugeSeries).length > 0 ? { gaugeSeries } : {}),
    windows: {
      stable: toWindowRates(acc.windows.get(windowSeconds(scaler.stableWindowSeconds)), engine),
      panic: toWindowRates(acc.windows.get(windowSeconds(scaler.panicWindowSeconds)), engine),
    },
  };
}

function toWindowRates(win: WindowAcc | undefined, engine: EngineKind): PodWindowRates {
  if (!win) return { established: false };
  // Two samples, no counter reset, and one scrape target: a pod recreated inside the window
  // (a new `instance`) has two series whose rates and histograms would add up, and whose
  // `resets()` each read zero; it is established again once the window holds only the new one.
  const established =
    win.samples !== undefined &&
    win.samples >= 2 &&
    win.resets !== undefined &&
    win.resets === 0 &&
    win.instances !== undefined &&
    win.instances <= 1;
  const r = (name: string): number | undefined => win.rates.get(`${engine}/${name}`);
  const entries: [keyof PodWindowRates, number | undefined][] =
    engine === "vllm"
      ? [
          ["promptTokensPerSecond", r("prompt")],
          ["generationTokensPerSecond", r("generation")],
          ["prefixCacheHitTokensPerSecond", r("prefix_hits")],
        ]
      : [
          ["promptTokensPerSecond", r("prompt")],
          ["generationTokensPerSecond", r("generation")],
          ["effectivePrefillTokensPerSecond", r("effective/input")],
          ...sglangHits(win),
        ];
  const rates: Record<string, number> = {};
  for (const [k, v] of entries) if (v !== undefined) rates[k] = v;
  const ttft = toHistogram(win.ttft);
  const itl = toHistogram(win.itl);
  const queueTime = toHistogram(win.queue);
  const cacheSeries = engine === "sglang" ? sglangCacheSeries(win) : undefined;
  const present = [...win.present].filter((c) => c.startsWith(`${engine}/`)).map((c) => c.slice(engine.length + 1));
  return {
    established,
    ...rates,
    ...(cacheSeries !== undefined ? { cacheSeries } : {}),
    ...(ttft ? { ttftSeconds: ttft } : {}),
    ...(itl ? { itlSeconds: itl, ...(win.itlSeries !== undefined ? { itlSeries: win.itlSeries } : {}) } : {}),
    ...(queueTime ? { queueTimeSeconds: queueTime } : {}),
    ...(engine === "sglang"
      ? {
          counterPresence: {
            firstUseFamily: present.some((c) => firstUseCounters.has(c)),
            startupCounter: present.some((c) => startupCounters.has(c)),
          },
        }
      : {}),
  };
}

/** Whether this SGLang window's hit tiers come from `prefill_effective_tokens_total` (2026) or `cached_tokens_total`. */
function usesEffectiveCounter(win: WindowAcc): boolean {
  return [...win.rates.keys()].some((k) => k.startsWith("sglang/effective/"));
}

/** SGLang hit rates per tier, from the effective-prefill counter when the pod has it, else from cached tokens. */
function sglangHits(win: WindowAcc): [keyof PodWindowRates, number | undefined][] {
  const r = (name: string): number | undefined => win.rates.get(`sglang/${name}`);
  if (usesEffectiveCounter(win)) {
    return [
      ["deviceHitTokensPerSecond", r("effective/device_hit")],
      ["hostHitTokensPerSecond", r("effective/host_hit")],
      ["storageHitTokensPerSecond", r("effective/storage_hit")],
    ];
  }
  return [
    ["deviceHitTokensPerSecond", r("cached/device")],
    ["hostHitTokensPerSecond", r("cached/host")],
    ["storageHitTokensPerSecond", r("cached/storage")],
    ["totalCachedTokensPerSecond", r("cached/total")],
  ];
}

function sglangCacheSeries(win: WindowAcc): string | undefined {
  if (usesEffectiveCounter(win)) return "sglang:prefill_effective_tokens_total";
  return [...win.rates.keys()].some((k) => k.startsWith("sglang/cached/")) ? "sglang:cached_tokens_total" : undefined;
}

function toHistogram(h: HistogramAcc): HistogramWindow | undefined {
  if (h.count === undefined || h.sum === undefined) return undefined;
  return { buckets: cumulativeBuckets(h.buckets), count: h.count, sum: h.sum };
}

/**
 * Buckets by upper bound, ascending. A bucket whose series changed name inside the window
 * (`le="1.0"` → `le="1"`) loses the increase between the two series, and can fall below the
 * bucket before it. A cumulative count never falls, so it is at least the previous bucket's:
 * a lower bound that keeps the percentile from moving down.
 */
function cumulativeBuckets(buckets: ReadonlyMap<number, number>): HistogramWindow["buckets"] {
  let floor = 0;
  return [...buckets.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([upperBound, count]) => ({ upperBound, count: (floor = Math.max(floor, count)) }));
}
