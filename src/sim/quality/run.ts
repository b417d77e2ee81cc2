/**
 * The simulated-time loop: arrivals enter the fleet, Prometheus scrapes the
 * ready pods, the policy decides at its interval, the engines advance one
 * step. Deterministic for a seed: no clock, no I/O, one seeded generator per
 * random source. GPU time is charged up to the trace's end; after it the
 * engines keep running (at most `tailSeconds`) so late requests can finish.
 */
import { QualityFleet, serverRoles, type FleetOptions, type FleetRole, type RequestRecord } from "./cluster.js";
import type { RoleMinutes } from "../../core/calibrate/minute.js";
import { MinuteRecorder, minuteSeconds } from "./minutes.js";
import { ScrapeHistory, scrapeOf } from "./observations.js";
import type { Policy, PolicyContext } from "./policy.js";
import type { Trace } from "./traces.js";

export interface SloTargets {
  /** Fixed part of the TTFT target; the per-request part is the prompt's full-speed prefill time. */
  readonly ttftBaseSeconds: number;
  readonly itlSeconds: number;
}

export const defaultSlo: SloTargets = { ttftBaseSeconds: 1, itlSeconds: 0.05 };

/** How often the simulated Prometheus scrapes every replica unless a run says otherwise, as the chart's PodMonitor does. */
export const defaultScrapeIntervalSeconds = 15;

export interface RunOptions {
  readonly seed: number;
  readonly fleet?: Omit<FleetOptions, "seed" | "initialReplicas">;
  readonly slo?: SloTargets;
  /** Longest engine step; the fleet splits it at every arrival and KV landing, so admission does not wait for it. */
  readonly stepSeconds?: number;
  readonly scrapeIntervalSeconds?: number;
  readonly tailSeconds?: number;
  /** Width of a time-series point. */
  readonly seriesSeconds?: number;
}

export interface Attainment {
  readonly both: number;
  readonly ttft: number;
  readonly itl: number;
}

export interface SeriesPoint {
  readonly atSeconds: number;
  readonly arrivalsPerSecond: number;
  readonly desiredReplicas: number;
  readonly readyReplicas: number;
  /** p95 TTFT of the requests arriving in this point's interval (unfinished ones excluded), seconds. */
  readonly ttftP95Seconds?: number;
  readonly itlMeanSeconds?: number;
}

export interface RunResult {
  readonly policy: string;
  readonly family: string;
  readonly trace: string;
  readonly requests: number;
  readonly completed: number;
  /** Arrivals not finished when the tail ended (counted as missing the SLO). */
  readonly unfinished: number;
  readonly attainment: Attainment;
  /** Replica-hours × GPUs per replica. */
  readonly gpuHours: number;
  readonly replicaHours: number;
  readonly gpusPerReplica: number;
  /** GPU-hours per role (one entry for an aggregated fleet). */
  readonly gpuHoursByRole: Readonly<Record<string, number>>;
  readonly scaleEvents: number;
  readonly maxBacklog: number;
  readonly maxReplicas: number;
  readonly spanSeconds: number;
  readonly wallSeconds: number;
  /** CPU time of this process during the run (user + system): the figure a loaded machine does not inflate. */
  readonly cpuSeconds: number;
  /** The policy's own account of the run (mds-scaler: its reasons by share of passes). */
  readonly notes?: string;
  readonly series: readonly SeriesPoint[];
  /** Per role, every simulated minute as `mds-scaler calibrate` reads it. */
  readonly minutes: readonly RoleMinutes[];
  readonly records: readonly RequestRecord[];
}

export function ttftTargetSeconds(record: RequestRecord, slo: SloTargets, prefillTokensPerSecond: number): number {
  return slo.ttftBaseSeconds + record.promptTokens / prefillTokensPerSecond;
}

export function meetsTtft(record: RequestRecord, slo: SloTargets, prefillTokensPerSecond: number): boolean {
  return (
    record.firstTokenSeconds !== undefined &&
    record.endSeconds !== undefined &&
    record.firstTokenSeconds - record.arrivalSeconds <= ttftTargetSeconds(record, slo, prefillTokensPerSecond)
  );
}

export function meetsItl(record: RequestRecord, slo: SloTargets): boolean {
  return record.endSeconds !== undefined && (record.meanItlSeconds ?? 0) <= slo.itlSeconds;
}

function percentile(values: number[], q: number): number | undefined {
  if (values.length === 0) return undefined;
  values.sort((a, b) => a - b);
  return values[Math.min(values.length - 1, Math.ceil(q * values.length) - 1)];
}

/**
 * A scaler drives every role of the fleet: one role whatever its name, or the
 * fleet's roles by name.
 */
function checkPolicyRoles(policy: Policy, fleetRoles: readonly FleetRole[]): void {
  const roles = policy.roles;
  if (roles === undefined || (roles.length === 1 && fleetRoles.length === 1)) return;
  const names = fleetRoles.map((r) => r.name);
  if (roles.length !== names.length || names.some((n) => !roles.includes(n)))
    throw new Error(
      `spec.roles: the scaler names ${roles.join(", ")} and the simulated fleet has roles ${names.join(", ")}`,
    );
}

/** One point of the run's time series, as the loop records it: arrivals since the last point and the fleet's counts. */
interface SeriesSample {
  readonly atSeconds: number;
  readonly arrivals: number;
  readonly desired: number;
  readonly ready: number;
}

/** What the loop over simulated time produces besides the fleet's own records. */
interface LoopOutcome {
  readonly series: readonly SeriesSample[];
  readonly maxReplicas: number;
  readonly minutes: MinuteRecorder;
}

/** The step cadences of one run, in ticks of `dt` seconds. */
interface Cadence {
  readonly dt: number;
  readonly scrape: number;
  readonly decision: number;
  readonly second: number;
  readonly series: number;
  readonly minute: number;
}

/** The time series' point spacing: 30 s unless the run asks for another. */
function seriesSecondsOf(options: RunOptions): number {
  return options.seriesSeconds ?? 30;
}

function cadenceOf(options: RunOptions, policy: Policy): Cadence {
  const dt = options.stepSeconds ?? 0.25;
  const ticks = (seconds: number): number => Math.max(1, Math.round(seconds / dt));
  return {
    dt,
    scrape: ticks(options.scrapeIntervalSeconds ?? defaultScrapeIntervalSeconds),
    decision: ticks(policy.intervalSeconds),
    second: ticks(1),
    series: ticks(seriesSecondsOf(options)),
    minute: ticks(minuteSeconds),
  };
}

/** Scrapes are kept this long: the longest window a policy reads, with room. */
const scrapeKeepSeconds = 900;
/** A source trace's second 0 as a wall-clock instant, for the policies' timestamps (status, predictor history). */
const traceEpochMs = Date.parse("2026-01-01T00:00:00Z");

/** Simulated second 0 is the trace's origin: the policies' clock reads the source trace's time of day. */
const originOf = (trace: Trace): number => trace.originSeconds ?? 0;

/** Scrapes every ready or draining replica into its history, as Prometheus would at `nowSeconds`. */
function scrapeFleet(fleet: QualityFleet, scrapes: Map<string, ScrapeHistory>, nowSeconds: number): void {
  for (const r of fleet.replicas) {
    if (r.phase !== "Ready" && r.phase !== "Draining") continue;
    let history = scrapes.get(r.name);
    if (history === undefined) scrapes.set(r.name, (history = new ScrapeHistory(scrapeKeepSeconds)));
    history.add(scrapeOf(nowSeconds, r.engine.totals()));
  }
}

/** The policy samples once a second and decides once an interval, while the trace lasts. */
function consultPolicy(policy: Policy, cadence: Cadence, tick: number, ctx: () => PolicyContext): void {
  if (policy.sample !== undefined && tick % cadence.second === 0) policy.sample(ctx());
  if (tick > 0 && tick % cadence.decision === 0) policy.decide(ctx());
}

/** Runs the trace through the fleet and the policy until every request is served or the tail ends. */
function simulateRun(trace: Trace, policy: Policy, options: RunOptions, fleet: QualityFleet): LoopOutcome {
  const cadence = cadenceOf(options, policy);
  const { dt } = cadence;
  const tail = options.tailSeconds ?? 900;
  const scrapes = new Map<string, ScrapeHistory>();
  const origin = originOf(trace);
  const epochMs = traceEpochMs + origin * 1000;
  const ctx = (nowSeconds: number): PolicyContext => ({ nowSeconds, fleet, scrapes, epochMs });
  policy.start?.(fleet);
  const requests = trace.requests;
  const span = trace.spanSeconds;
  const minutes = new MinuteRecorder(fleet, options.scrapeIntervalSeconds ?? defaultScrapeIntervalSeconds, origin);
  const series: SeriesSample[] = [];
  let next = 0;
  let arrivalsInPoint = 0;
  let maxReplicas = 0;
  for (let tick = 0; ; tick++) {
    const now = tick * dt;
    fleet.advance(now);
    if (now >= span && next >= requests.length && (fleet.outstanding() === 0 || now >= span + tail)) break;
    if (tick % cadence.scrape === 0) scrapeFleet(fleet, scrapes, now);
    // After the scrape of the same tick, as Prometheus would hold it at the minute's end.
    if (tick > 0 && tick % cadence.minute === 0 && now <= span) minutes.record(fleet, scrapes, epochMs, now);
    if (tick % cadence.second === 0) fleet.sampleBacklog();
    if (now < span) consultPolicy(policy, cadence, tick, () => ctx(now));
    const first = next;
    while (next < requests.length && (requests[next] as { arrivalSeconds: number }).arrivalSeconds < now + dt) next++;
    arrivalsInPoint += next - first;
    fleet.step(now, dt, first === next ? [] : requests.slice(first, next));
    maxReplicas = Math.max(maxReplicas, fleet.admitted());
    if (tick % cadence.series === 0 && now < span) {
      series.push({
        atSeconds: now,
        arrivals: arrivalsInPoint,
        desired: fleet.desiredReplicas,
        ready: fleet.count("Ready"),
      });
      arrivalsInPoint = 0;
    }
  }
  return { series, maxReplicas, minutes };
}

/** Shares of requests within their TTFT target, their ITL target and both; and how many finished. */
function attainmentOf(
  records: readonly RequestRecord[],
  slo: SloTargets,
  prefillTokensPerSecond: number,
): { readonly attainment: Attainment; readonly completed: number } {
  let both = 0;
  let ttft = 0;
  let itl = 0;
  let completed = 0;
  for (const r of records) {
    if (r.endSeconds !== undefined) completed++;
    const t = meetsTtft(r, slo, prefillTokensPerSecond);
    const i = meetsItl(r, slo);
    if (t) ttft++;
    if (i) itl++;
    if (t && i) both++;
  }
  const n = Math.max(1, records.length);
  return { attainment: { both: both / n, ttft: ttft / n, itl: itl / n }, completed };
}

/** The run's time series: arrivals and replicas per point, with the latency of the requests that arrived in it. */
function seriesPoints(
  series: readonly SeriesSample[],
  records: readonly RequestRecord[],
  seriesEvery: number,
): SeriesPoint[] {
  const byPoint = new Map<number, { ttft: number[]; itl: number[] }>();
  for (const r of records) {
    if (r.firstTokenSeconds === undefined) continue;
    const k = Math.floor(r.arrivalSeconds / seriesEvery);
    let b = byPoint.get(k);
    if (b === undefined) byPoint.set(k, (b = { ttft: [], itl: [] }));
    b.ttft.push(r.firstTokenSeconds - r.arrivalSeconds);
    if (r.meanItlSeconds !== undefined) b.itl.push(r.meanItlSeconds);
  }
  return series.map((p, i) => {
    const b = byPoint.get(i - 1);
    const ttftP95 = b === undefined ? undefined : percentile(b.ttft, 0.95);
    const itlMean = b === undefined || b.itl.length === 0 ? undefined : b.itl.reduce((a, x) => a + x, 0) / b.itl.length;
    return {
      atSeconds: p.atSeconds,
      arrivalsPerSecond: p.arrivals / seriesEvery,
      desiredReplicas: p.desired,
      readyReplicas: p.ready,
      ...(ttftP95 === undefined ? {} : { ttftP95Seconds: ttftP95 }),
      ...(itlMean === undefined ? {} : { itlMeanSeconds: itlMean }),
    };
  });
}

export function runPolicy(trace: Trace, policy: Policy, options: RunOptions): RunResult {
  const wallStart = performance.now();
  const cpuStart = process.cpuUsage();
  checkPolicyRoles(policy, options.fleet?.roles ?? serverRoles);
  const fleet = new QualityFleet({ ...options.fleet, seed: options.seed, initialReplicas: policy.initialReplicas });
  const loop = simulateRun(trace, policy, options, fleet);
  const span = trace.spanSeconds;
  const records = fleet.records;
  const { attainment, completed } = attainmentOf(
    records,
    options.slo ?? defaultSlo,
    fleet.capacity.prefillTokensPerSecond,
  );
  return {
    policy: policy.name,
    family: policy.family,
    trace: trace.name,
    requests: records.length,
    completed,
    unfinished: records.length - completed,
    attainment,
    gpuHours: fleet.gpuSeconds(span) / 3600,
    replicaHours: fleet.replicaSeconds(span) / 3600,
    gpusPerReplica: fleet.gpusPerReplica,
    gpuHoursByRole: Object.fromEntries(fleet.roles.map((r) => [r.name, fleet.gpuSeconds(span, r.name) / 3600])),
    scaleEvents: fleet.scaleEvents,
    maxBacklog: fleet.maxBacklog,
    maxReplicas: loop.maxReplicas,
    spanSeconds: span,
    wallSeconds: (performance.now() - wallStart) / 1000,
    cpuSeconds: ((u) => (u.user + u.system) / 1e6)(process.cpuUsage(cpuStart)),
    ...(policy.notes === undefined ? {} : { notes: policy.notes() }),
    series: seriesPoints(loop.series, records, seriesSecondsOf(options)),
    minutes: loop.minutes.result(),
    records,
  };
}
