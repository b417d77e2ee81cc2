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
 * whose sums stand for the pods' histogram sums (not asked: `asksPodSums`), and a
 * window whose native sums are missing from the classic series summed by role,
 * as `roles` does, with the pods' sums beside them. Each of these asks is the
 * same six queries whatever the number of roles in it (twelve where it asks the
 * pods' sums). Under both, the counters' resets are asked for each scaler's
 * longer window, and the shorter window's (four queries) only for the roles a
 * pod of which saw a reset there (window-resets.ts).
 *
 * This file runs a pass's asks; what the pass has read is pass-acc.ts, reading
 * answers into it pass-read.ts, turning it into `RoleSamples` pass-build.ts, and
 * which roles are asked again follow-up.ts.
 */
import type { RoleSamples, SignalFamily } from "../../core/signals/types.js";
import type { InstantQueryResult, PrometheusQueryClient } from "./client.js";
import { validatePrometheusSignalConfig, type PrometheusSignalConfig } from "./config.js";
import {
  classicReads,
  filterRoles,
  missingNativeSums,
  quietRoles,
  rolesWithoutNativeSums,
  unprovenRoles,
} from "./follow-up.js";
import {
  cellOf,
  forgetFamily,
  markSummed,
  roleKey,
  roleOfCell,
  windowOfCell,
  windowSeconds,
  type PassAcc,
} from "./pass-acc.js";
import { buildPass } from "./pass-build.js";
import { readAnswers, readSample, Tags, type IssuedQuery, type PassAnswers, type UsableAnswer } from "./pass-read.js";
import {
  asksPodSums,
  bucketParts,
  buildPartQueries,
  buildSamplingQueries,
  defaultQueryPlan,
  queryNames,
  samplingParts,
  resetParts,
  signalLabel,
  sumsByRole,
  windowLabel,
  type BucketsBy,
  type Part,
  type QueryContext,
  type QueryName,
  type QueryPlan,
  type SamplingQueries,
  type TargetSelection,
  type WindowSelection,
} from "./queries.js";
import { longerAndShorter, readShorterFromLonger } from "./window-resets.js";

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
    const firstIssued = this.issuedFor(scalers);
    const firstSettled = await this.ask(firstIssued, atUnixMs);
    const first = readAnswers(firstIssued, firstSettled);
    const gaugeFailure = first.failures.get("gauges");
    if (gaugeFailure !== undefined) {
      // The gauge query names the pods and their freshness: without it no pod is known.
      const reason = `gauges: ${gaugeFailure}`;
      const out = new Map<string, Map<string, RoleSamples>>();
      for (const s of scalers) out.set(s.key, new Map(s.roles.map((r) => [r, { pods: [], queryFailed: { reason } }])));
      const { warnings, infos, unknownFamilies } = first;
      return {
        kind: "no pods",
        pass: {
          atUnixMs,
          queries: firstIssued.length,
          scalers: out,
          warnings,
          infos,
          unknownFamilies,
          nativeSumsMissing: [],
        },
      };
    }
    const acc: PassAcc = {
      pods: [],
      podsByName: new Map(),
      roles: new Map(),
      summed: new Map(),
      native: this.sums === "native",
      classic: new Map(),
    };
    this.accumulate(acc, first.usable);
    const asked: Asked = { issued: firstIssued, settled: firstSettled, answers: first };
    const { issued, settled, answers } = sumsByRole(this.plan)
      ? await this.shorterWindowResets(scalers, atUnixMs, acc, asked)
      : asked;
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
   * queries whatever its roles (twelve under `native` where classic buckets are asked with the pods' sums); under
   * `roles` there are at most two asks (the second for roles whose stable sum is unproven), under `native` one
   * or two more where native sums are missing (the classic sums, then the pods of roles whose classic sums fail
   * the proof). Undefined when nothing is left to ask.
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
    // Where the first ask left the pods' sums out (`native`), classic buckets are asked with the pods' sums.
    const withPodSums = !asksPodSums(this.sums);
    const classicQueries = [
      ...this.bucketQueries(missing.panic, (ctx, _gauges, _windows, panic) =>
        bucketParts(ctx, panic, "role", withPodSums),
      ),
      ...this.bucketQueries(classic.stable, (ctx, _gauges, _windows, _panic, stable) =>
        bucketParts(ctx, stable, "role", withPodSums),
      ),
    ];
    const podQueries = this.bucketQueries(unproven, (ctx, _gauges, windows) =>
      bucketParts(ctx, windows, "pod", withPodSums),
    );
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

  /**
   * Under the `roles` and `native` plans, the shorter window's counter resets (window-resets.ts): the longer
   * window's reading where it saw no reset, asked (four queries) for the roles where it saw one; before the
   * pass is built, since a window with a reset is not established and the roles' proofs read that.
   */
  private async shorterWindowResets(
    scalers: readonly ScalerSamplingInput[],
    atUnixMs: number,
    acc: PassAcc,
    first: Asked,
  ): Promise<Asked> {
    const { asked, cells } = readShorterFromLonger(scalers, acc);
    if (asked.length === 0) return first;
    const again = buildPartQueries(
      this.partsFor(asked, (ctx, _g, _w, _p, _s, _l, shorter) => resetParts(ctx, shorter)),
    );
    const issued = [...first.issued, ...again];
    const settled = [...first.settled, ...(await this.ask(again, atUnixMs))];
    const answers = readAnswers(issued, settled);
    const set = new Set<IssuedQuery>(again);
    this.accumulate(
      acc,
      answers.usable.filter((a) => set.has(a.query)),
      (key, w) => cells.has(cellOf(key, w)),
    );
    return { issued, settled, answers };
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
      windowsOf((s) => [longerAndShorter(s).longer]),
      windowsOf((s) => [longerAndShorter(s).shorter]),
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

/** Queries asked so far in a pass, their outcomes in the same order, and those read. */
interface Asked {
  readonly issued: readonly IssuedQuery[];
  readonly settled: readonly PromiseSettledResult<InstantQueryResult>[];
  readonly answers: PassAnswers;
}

/**
 * Builds a pass's parts from the windows of its scalers: every window, the panic windows, the stable windows,
 * and the longer and the shorter of each scaler's two.
 */
type PartsBuilder = (
  ctx: QueryContext,
  gauges: TargetSelection,
  windows: readonly WindowSelection[],
  panic: readonly WindowSelection[],
  stable: readonly WindowSelection[],
  longer: readonly WindowSelection[],
  shorter: readonly WindowSelection[],
) => PassParts;

/** Every part of every window, the buckets per pod (`unions` and `parts`). */
const everyPart: PartsBuilder = (ctx, gauges, windows) => samplingParts(ctx, gauges, windows);

/**
 * The `roles` and `native` plans' first parts: the histogram buckets summed by
 * role (from the `_bucket` series, or from the native histograms), of the
 * panic window alone (the stable window's are asked where they are read); the
 * counts and sums of every window; the counters' resets of each scaler's longer
 * window alone (the shorter window's are asked where it differs, window-resets.ts).
 */
const summedByRoleInPanicWindow =
  (sums: BucketsBy): PartsBuilder =>
  (ctx, gauges, windows, panic, _stable, longer) =>
    samplingParts(ctx, gauges, windows, sums, panic, longer);
