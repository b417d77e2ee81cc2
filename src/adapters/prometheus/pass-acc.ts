/**
 * What a sampling pass has read so far (source.ts): per pod and scrape target, per window, and the
 * buckets Prometheus summed per role, with the keys they are filed under and the questions a pass asks of
 * them (which sums are native, which are missing).
 */
import type { EngineKind, LatencyField } from "../../core/signals/types.js";
import type { ScalerSamplingInput } from "./source.js";

export interface WindowAcc {
  rates: Map<string, number>;
  resets?: number;
  /**
   * Counter groups with a sample in the window (their `resets()` part answered), `<engine>/<group>`
   * (`resetGroups`).
   */
  present: Set<string>;
  itlSeries?: string;
  /** The fewest samples of the pod's running gauge in the window, over its scrape targets. */
  samples?: number;
  /** Scrape targets (`instance`) seen in the window, per engine: the rows of its samples part. */
  targetsByEngine: Partial<Record<EngineKind, number>>;
  ttft: HistogramAcc;
  itl: HistogramAcc;
  queue: HistogramAcc;
}

export interface HistogramAcc {
  /** By upper bound; absent until the first bucket is read. */
  buckets?: Map<number, number>;
  count?: number;
  sum?: number;
  /** The engines whose count part answered for the pod, whichever it runs: the pods a role's sum covers. */
  counted: readonly EngineKind[];
}

/** One histogram's buckets of one role and window, summed by Prometheus (`roles` plan). */
export type RoleBuckets = Map<number, number>;

/** A role's sums of one window: each histogram's buckets and, where native (`native`), its sum. */
export type RoleWindowAcc = Record<HistogramName, RoleBuckets> & { sums: Partial<Record<HistogramName, number>> };

/** A role's summed buckets, by window. */
export type RoleAcc = Map<number, RoleWindowAcc>;

export const histogramNames = ["ttft", "itl", "queue"] as const;

export type HistogramName = (typeof histogramNames)[number];

/** The `PodWindowRates` field each histogram fills. */
export const fieldOfHistogram: Readonly<Record<HistogramName, LatencyField>> = {
  ttft: "ttftSeconds",
  itl: "itlSeconds",
  queue: "queueTimeSeconds",
};

/** The gauges of one scrape target of a pod. */
export interface TargetAcc {
  engine?: EngineKind;
  timestamp?: number;
  gauges: Map<string, number>;
  /** The series a renamed gauge was read from, by `<engine>/<signal>`. */
  gaugeSeries?: Map<string, string>;
}

export interface PodAcc {
  namespace: string;
  deployment: string;
  role: string;
  pod: string;
  /** By `instance`: a recreated pod's old target stays in the lookback until its series go stale. */
  targets: Map<string, TargetAcc>;
  windows: Map<number, WindowAcc>;
}

/** What a pass has read so far: per pod, and the buckets Prometheus summed per role (`roleKey`). */
export interface PassAcc {
  /** Every pod, in the order the answers first named it. */
  readonly pods: PodAcc[];
  /**
   * The same pods by pod name (a name under several roles, or namespaces, has several): what a sample is
   * looked up by (`podOf`), since a key built from its labels for each of a pass's hundreds of thousands
   * of series cost more than the lookup.
   */
  readonly podsByName: Map<string, PodAcc[]>;
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

export function cellOf(key: string, w: number): string {
  return `${key}\u0000${w}`;
}

export function roleOfCell(cell: string): string {
  return cell.slice(0, cell.lastIndexOf("\u0000"));
}

export function windowOfCell(cell: string): number {
  return Number(cell.slice(cell.lastIndexOf("\u0000") + 1));
}

/**
 * The roles (`roleKey`) with a window read from the classic series, with the histograms whose native sums were
 * missing.
 */
export function classicHistogramsByRole(acc: PassAcc): Map<string, ReadonlySet<HistogramName>> {
  const out = new Map<string, Set<HistogramName>>();
  for (const [cell, histograms] of acc.classic) {
    const key = roleOfCell(cell);
    const set = out.get(key) ?? new Set<HistogramName>();
    for (const h of histograms) set.add(h);
    out.set(key, set);
  }
  return out;
}

/**
 * Whether the pods' histogram sums of a role's window were asked: under every plan but `native`, and under
 * `native` where classic buckets were asked, which come with the pods' sums: the roles read from their pods' own
 * buckets (`perPodRoles`, both windows) and the windows read from the classic sums by role (`classic`).
 */
export function podSumsAsked(
  acc: PassAcc,
  key: string,
  w: number,
  perPodRoles: ReadonlySet<string> | undefined,
): boolean {
  return !acc.native || perPodRoles?.has(key) === true || acc.classic.has(cellOf(key, w));
}

/** Whether a role's sums of this window are native histograms: under `native`, unless they were missing there. */
export function nativeSumsAt(acc: PassAcc, key: string, w: number): boolean {
  return acc.native && !acc.classic.has(cellOf(key, w));
}

export function markSummed(acc: PassAcc, s: ScalerSamplingInput, role: string, seconds: number): void {
  const key = roleKey(s.namespace, s.deployment, role);
  let windows = acc.summed.get(key);
  if (!windows) acc.summed.set(key, (windows = new Set()));
  windows.add(windowSeconds(seconds));
}

/**
 * The pass's pods by role (`roleKey`), indexed once: a scan of every pod for every scaler and role grows with the
 * square of the fleet.
 */
export function podsByRole(acc: PassAcc): Map<string, PodAcc[]> {
  const byRole = new Map<string, PodAcc[]>();
  for (const pod of acc.pods) {
    const key = roleKey(pod.namespace, pod.deployment, pod.role);
    const list = byRole.get(key);
    if (list) list.push(pod);
    else byRole.set(key, [pod]);
  }
  return byRole;
}

/** The pods whose count part answered for this window and histogram (the pods a role's sum covers), by name. */
export function coveredPods(
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
 * not add) is a sum not known, not an empty one: its `+Inf` count is unknown, which no proof accepts, and the
 * window is read from the classic series instead (follow-up.ts). `answeredBounds`: the bounds the sum answered.
 */
export function nativeSumMissing(podsCounted: boolean, answeredBounds: number): boolean {
  return podsCounted && answeredBounds === 0;
}

/**
 * The histograms of one role and window whose native sums are missing (`nativeSumMissing`); none where they are
 * not native.
 */
export function missingHistograms(acc: PassAcc, key: string, pods: readonly PodAcc[], w: number): HistogramName[] {
  if (!nativeSumsAt(acc, key, w)) return [];
  return histogramNames.filter((histogram) => {
    const counted = pods.some((pod) => (pod.windows.get(w)?.[histogram].counted.length ?? 0) > 0);
    return nativeSumMissing(counted, acc.roles.get(key)?.get(w)?.[histogram].size ?? 0);
  });
}

/** Drops what the pass read of a family that turned unknown: its fields are absent, never partial. */
export function forgetFamily(acc: PassAcc, family: "ttft" | "itl"): void {
  const names: readonly HistogramName[] = family === "ttft" ? ["ttft", "queue"] : ["itl"];
  for (const pod of acc.pods)
    for (const win of pod.windows.values()) {
      for (const name of names) win[name] = emptyHistogram();
      if (family === "itl") delete win.itlSeries;
    }
  for (const role of acc.roles.values())
    for (const win of role.values())
      for (const name of names) {
        win[name] = new Map();
        delete win.sums[name];
      }
}

/**
 * The engine list of every histogram no count part answered for, shared. A pass keeps six histograms for each of
 * its thousands of pods, most with no buckets (the plans that sum them by role) and one count, so neither list nor
 * bucket map is made until it holds something: what a pass keeps is what its collector copies
 * (docs/prometheus-signals.md, "What a pass keeps, made smaller").
 */
const noEngines: readonly EngineKind[] = [];

export function emptyHistogram(): HistogramAcc {
  return { counted: noEngines };
}

/** Kubernetes names and label values hold no NUL, so the key names one role. */
export function roleKey(
  namespace: string | undefined,
  deployment: string | undefined,
  role: string | undefined,
): string {
  return `${namespace}\u0000${deployment}\u0000${role}`;
}

/** Prometheus ranges take whole seconds; windows below one second are not meaningful. */
export function windowSeconds(w: number): number {
  return Math.max(1, Math.round(w));
}

/** The pod's newest scrape target: a recreated pod's old target, still in the lookback, is older. */
export function newestTarget(acc: PodAcc): TargetAcc | undefined {
  let newest: TargetAcc | undefined;
  for (const target of acc.targets.values()) {
    if (target.engine === undefined || target.timestamp === undefined) continue;
    if (newest === undefined || (newest.timestamp ?? -Infinity) < target.timestamp) newest = target;
  }
  return newest;
}
