/**
 * The scaler's own metrics, on its own prom-client registry (never the global
 * one). Gauges are filled at scrape time from the latest report of each scaler,
 * so the series of a deleted scaler or role disappear with its report.
 *
 * Only the leader exports per-scaler series and the last-pass stamp: a replica
 * that loses the Lease stops exporting them at its next scrape, so two replicas
 * never report the same scaler and queries by namespace and scaler stay unique.
 */
import {
  Counter,
  Gauge,
  Histogram,
  Registry,
  collectDefaultMetrics,
  type CounterConfiguration,
  type MetricObjectWithValues,
  type MetricValue,
} from "prom-client";

/** One role's figures after a pass; absent fields are unknown and export no series. */
export interface RoleReport {
  readonly role: string;
  readonly currentReplicas: number;
  readonly readyReplicas: number;
  readonly rawRecommendedReplicas?: number;
  readonly constrainedReplicas?: number;
  readonly committedReplicas?: number;
  /** The floor `floorReplicasByUtcHour` (an extension) sets in the hour of the last pass, when the scaler writes floors. */
  readonly hourlyFloorReplicas?: number;
  readonly stableDemandTokensPerSecond?: number;
  readonly panicDemandTokensPerSecond?: number;
  readonly forecastDemandTokensPerSecond?: number;
  readonly capacityPerReplicaTokensPerSecond?: number;
  readonly ttftMilliseconds?: number;
  readonly ttftTargetMilliseconds?: number;
  /** p95 queue time (bucket boundary) when every sampled pod exports it: what the queueing guard reads. */
  readonly queueTimeMilliseconds?: number;
  /** The scaler's `queueTimeTargetMilliseconds` (an extension), when it writes one. */
  readonly queueTimeTargetMilliseconds?: number;
  readonly itlMilliseconds?: number;
  readonly itlTargetMilliseconds?: number;
  readonly runningRequests?: number;
  readonly waitingRequests?: number;
  readonly kvCacheUsage?: number;
  readonly signalState: string;
  readonly reason?: string;
  readonly panic?: boolean;
  readonly predictorLevelTokensPerSecond?: number;
  readonly predictorTrendTokensPerSecondPerSecond?: number;
  /** `signal → engine series → pods` read from it (which of an engine's old and new names answered). */
  readonly seriesUsed?: Readonly<Record<string, Readonly<Record<string, number>>>>;
}

export interface ScalerReport {
  readonly namespace: string;
  readonly scaler: string;
  readonly target: string;
  readonly mode: string;
  readonly bindingTerm?: number;
  /** The floors' date (Unix seconds): the end of the day they were read from; absent without floors or their date. */
  readonly floorsCalibratedAtSeconds?: number;
  readonly conditions: readonly { readonly type: string; readonly status: string; readonly reason: string }[];
  readonly roles: readonly RoleReport[];
}

const scalerLabels = ["namespace", "scaler", "target"] as const;
const roleLabels = [...scalerLabels, "role"] as const;
const signalStates = ["Fresh", "Idle", "Missing", "Stale"] as const;

type RoleNumber = { [K in keyof RoleReport]-?: RoleReport[K] extends number | undefined ? K : never }[keyof RoleReport];

/** Role gauges read straight from a report field: name, help, field. */
const roleGauges: readonly (readonly [string, string, RoleNumber])[] = [
  ["mds_role_current_replicas", "Desired replicas currently on the target.", "currentReplicas"],
  ["mds_role_ready_replicas", "Ready serving replicas used for capacity.", "readyReplicas"],
  ["mds_role_recommended_replicas", "The algorithm's raw recommendation.", "rawRecommendedReplicas"],
  [
    "mds_role_constrained_replicas",
    "The recommendation after bounds, ratios, pacing and guards.",
    "constrainedReplicas",
  ],
  ["mds_role_committed_replicas", "Replicas in the last committed vector.", "committedReplicas"],
  [
    "mds_role_hourly_floor_replicas",
    "The floor by the UTC hour (floorReplicasByUtcHour) in the hour of the last pass, when the scaler writes floors.",
    "hourlyFloorReplicas",
  ],
  [
    "mds_role_capacity_tokens_per_second",
    "Per-replica token capacity the algorithm divides by.",
    "capacityPerReplicaTokensPerSecond",
  ],
  ["mds_role_ttft_p95_milliseconds", "p95 time to first token (bucket boundary).", "ttftMilliseconds"],
  ["mds_role_ttft_target_milliseconds", "Time-to-first-token target.", "ttftTargetMilliseconds"],
  [
    "mds_role_queue_time_p95_milliseconds",
    "p95 time requests waited before the engine scheduled them (bucket boundary); what the queueing latency guard reads.",
    "queueTimeMilliseconds",
  ],
  [
    "mds_role_queue_time_target_milliseconds",
    "Queue-time target (queueTimeTargetMilliseconds), when the scaler writes one.",
    "queueTimeTargetMilliseconds",
  ],
  ["mds_role_itl_p95_milliseconds", "p95 inter-token latency (bucket boundary).", "itlMilliseconds"],
  ["mds_role_itl_target_milliseconds", "Inter-token latency target.", "itlTargetMilliseconds"],
  ["mds_role_running_requests", "Running requests across sampled replicas.", "runningRequests"],
  ["mds_role_waiting_requests", "Waiting requests across sampled replicas.", "waitingRequests"],
  ["mds_role_kv_cache_usage_ratio", "Mean reported KV-cache usage fraction.", "kvCacheUsage"],
  [
    "mds_role_predictor_level_tokens_per_second",
    "Predictive filter: estimated demand level.",
    "predictorLevelTokensPerSecond",
  ],
  [
    "mds_role_predictor_trend_tokens_per_second_per_second",
    "Predictive filter: demand trend.",
    "predictorTrendTokensPerSecondPerSecond",
  ],
];

/**
 * An unlabelled gauge with no sample while its value is unknown; prom-client's
 * own would export 0, and a timestamp of 0 would read as "very long ago".
 */
class OptionalGauge extends Gauge<never> {
  constructor(
    config: { name: string; help: string; registers: Registry[] },
    private readonly read: () => number | undefined,
  ) {
    super(config);
  }

  override async get(): Promise<MetricObjectWithValues<MetricValue<never>>> {
    const metric = await super.get();
    const value = this.read();
    return { ...metric, values: value === undefined ? [] : [{ value, labels: {} }] };
  }
}

/**
 * A counter only the leader exports. A follower keeps its counts, hidden, so a
 * replica that loses and regains the Lease continues its series instead of
 * restarting it, and no two replicas ever export the same scaler's counter.
 */
class LeaderCounter<T extends string> extends Counter<T> {
  constructor(
    config: CounterConfiguration<T>,
    private readonly exported: () => boolean,
  ) {
    super(config);
  }

  override async get(): Promise<MetricObjectWithValues<MetricValue<T>>> {
    const metric = await super.get();
    return this.exported() ? metric : { ...metric, values: [] };
  }
}

/** Error kinds of the controller as a whole (listing scalers, sampling Prometheus). */
export const controllerErrorKinds = ["kubernetes", "invalid_scaler", "prometheus"] as const;
/** The `query` label of mds_promql_query_duration_seconds. */
export function queryLabel(query: string): string {
  return query.slice(0, 40).replace(/\s+/g, " ");
}

/** Error kinds of one scaler's pass; counted under the scaler's namespace and name. */
export const scalerErrorKinds = ["conflict", "reconcile"] as const;
export type ScalerErrorKind = (typeof scalerErrorKinds)[number];

/** The per-role gauges read from the scalers' last reports at each scrape (followers pass an empty set). */
function registerRoleReportGauges(registers: Registry[], reports: { values(): Iterable<ScalerReport> }): void {
  for (const [name, help, field] of roleGauges) {
    new Gauge({
      name,
      help,
      labelNames: roleLabels,
      registers,
      collect() {
        this.reset();
        for (const report of reports.values()) {
          for (const role of report.roles) {
            const value = role[field];
            if (value !== undefined && Number.isFinite(value)) this.set(roleKey(report, role.role), value);
          }
        }
      },
    });
  }
  new Gauge({
    name: "mds_role_demand_tokens_per_second",
    help: "Token demand the algorithm saw, by window (stable, panic, forecast).",
    labelNames: [...roleLabels, "window"],
    registers,
    collect() {
      this.reset();
      for (const report of reports.values()) {
        for (const role of report.roles) {
          const windows = {
            stable: role.stableDemandTokensPerSecond,
            panic: role.panicDemandTokensPerSecond,
            forecast: role.forecastDemandTokensPerSecond,
          };
          for (const [window, value] of Object.entries(windows)) {
            if (value !== undefined && Number.isFinite(value))
              this.set({ ...roleKey(report, role.role), window }, value);
          }
        }
      }
    },
  });
  new Gauge({
    name: "mds_role_signal_state",
    help: "1 for the role's current signal state (Fresh, Idle, Missing, Stale), 0 for the others.",
    labelNames: [...roleLabels, "state"],
    registers,
    collect() {
      this.reset();
      for (const report of reports.values()) {
        for (const role of report.roles) {
          for (const state of signalStates)
            this.set({ ...roleKey(report, role.role), state }, role.signalState === state ? 1 : 0);
        }
      }
    },
  });
  new Gauge({
    name: "mds_role_signal_series_pods",
    help: "Pods whose signal was read from this engine series (shows fallbacks to older engines' names).",
    labelNames: [...roleLabels, "signal", "series"],
    registers,
    collect() {
      this.reset();
      for (const report of reports.values()) {
        for (const role of report.roles) {
          for (const [signal, bySeries] of Object.entries(role.seriesUsed ?? {}))
            for (const [series, pods] of Object.entries(bySeries))
              this.set({ ...roleKey(report, role.role), signal, series }, pods);
        }
      }
    },
  });
  new Gauge({
    name: "mds_role_reason",
    help: "1 for the reason that explains the role's constrained count.",
    labelNames: [...roleLabels, "reason"],
    registers,
    collect() {
      this.reset();
      for (const report of reports.values()) {
        for (const role of report.roles)
          if (role.reason !== undefined) this.set({ ...roleKey(report, role.role), reason: role.reason }, 1);
      }
    },
  });
  new Gauge({
    name: "mds_role_panic",
    help: "1 while the role is in panic mode.",
    labelNames: roleLabels,
    registers,
    collect() {
      this.reset();
      for (const report of reports.values()) {
        for (const role of report.roles)
          if (role.panic !== undefined) this.set(roleKey(report, role.role), role.panic ? 1 : 0);
      }
    },
  });
}

/** The per-scaler gauges read from the last reports at each scrape. */
function registerScalerReportGauges(registers: Registry[], reports: { values(): Iterable<ScalerReport> }): void {
  new Gauge({
    name: "mds_scaler_condition",
    help: "Scaler conditions, one series per type, status and reason (value 1), as kube-state-metrics exports them.",
    labelNames: [...scalerLabels, "type", "status", "reason"],
    registers,
    collect() {
      this.reset();
      for (const report of reports.values()) {
        for (const c of report.conditions)
          this.set({ ...scalerKey(report), type: c.type, status: c.status, reason: c.reason }, 1);
      }
    },
  });
  new Gauge({
    name: "mds_scaler_mode",
    help: "1 for the scaler's mode (Shadow or Active).",
    labelNames: [...scalerLabels, "mode"],
    registers,
    collect() {
      this.reset();
      for (const report of reports.values()) this.set({ ...scalerKey(report), mode: report.mode }, 1);
    },
  });
  new Gauge({
    name: "mds_scaler_binding_term",
    help: "The binding term the scaler commits under.",
    labelNames: scalerLabels,
    registers,
    collect() {
      this.reset();
      for (const report of reports.values())
        if (report.bindingTerm !== undefined) this.set(scalerKey(report), report.bindingTerm);
    },
  });
  new Gauge({
    name: "mds_scaler_floors_calibrated_timestamp_seconds",
    help: "As of when the floors by the hour in force stand: the end of the day calibrate read them from (annotation worker.gpustack.ai/floors-calibrated-at); absent without floors or that annotation.",
    labelNames: scalerLabels,
    registers,
    collect() {
      this.reset();
      for (const report of reports.values())
        if (report.floorsCalibratedAtSeconds !== undefined)
          this.set(scalerKey(report), report.floorsCalibratedAtSeconds);
    },
  });
}

export class ScalerMetrics {
  readonly registry: Registry;
  private readonly reports = new Map<string, ScalerReport>();
  /** Error kinds counted per scaler, so forget() can drop exactly those series. */
  private readonly scalerErrorKinds = new Map<string, Set<ScalerErrorKind>>();
  /** Targets each scaler's counters were counted under, so forget() can drop exactly those series. */
  private readonly countedTargets = new Map<string, Set<string>>();
  private leading = true;
  readonly commits: Counter<(typeof scalerLabels)[number]>;
  readonly commitFailures: Counter<(typeof scalerLabels)[number]>;
  readonly conflicts: Counter<(typeof scalerLabels)[number]>;
  readonly rollbacks: Counter<(typeof scalerLabels)[number]>;
  readonly abortedScaleDowns: Counter<(typeof scalerLabels)[number]>;
  readonly rebalanceSteps: Counter<(typeof scalerLabels)[number]>;
  readonly errors: Counter<"kind" | "namespace" | "scaler">;
  readonly passDuration: Histogram<never>;
  readonly queryDuration: Histogram<"query">;
  readonly webhookDuration: Histogram<"webhook" | "allowed" | "code">;
  readonly webhookShed: Counter<"reason">;

  constructor(opts: { defaultMetrics?: boolean } = {}) {
    this.registry = new Registry();
    if (opts.defaultMetrics !== false) collectDefaultMetrics({ register: this.registry, prefix: "mds_process_" });
    // Followers export no per-scaler series: collect() sees an empty report set.
    const reports = {
      values: (): Iterable<ScalerReport> => (this.leading ? this.reports.values() : []),
    };
    const isLeading = (): boolean => this.leading;
    const registers = [this.registry];

    registerRoleReportGauges(registers, reports);
    registerScalerReportGauges(registers, reports);

    const counter = (name: string, help: string) =>
      new LeaderCounter({ name, help, labelNames: scalerLabels, registers }, isLeading);
    this.commits = counter("mds_commits_total", "Replica vectors committed to the target.");
    this.conflicts = counter(
      "mds_commit_conflicts_total",
      "Commits refused for a stale resourceVersion and re-planned.",
    );
    this.rollbacks = counter(
      "mds_rollbacks_total",
      "Scale-up cohorts restored to their baseline after the pending timeout.",
    );
    this.abortedScaleDowns = counter(
      "mds_aborted_scale_downs_total",
      "Scale-downs restored after an aborted retirement.",
    );
    this.rebalanceSteps = counter("mds_rebalance_steps_total", "Donor releases and receiver acquisitions committed.");
    this.commitFailures = counter(
      "mds_commit_failures_total",
      "Commits of a replica vector that failed (refused, timed out, or still conflicting after the retries).",
    );
    this.errors = new LeaderCounter(
      {
        name: "mds_errors_total",
        help: "Errors by kind; a scaler's own errors (conflict, reconcile) carry its namespace and name.",
        labelNames: ["kind", "namespace", "scaler"],
        registers,
      },
      isLeading,
    );
    // Zero from the start, so rate() and increase() read 0 rather than no data before the first error.
    for (const kind of controllerErrorKinds) this.errors.inc({ kind }, 0);
    new Gauge({
      name: "mds_leader",
      help: "1 while this replica holds the leader Lease and runs the control loop.",
      registers,
      collect() {
        this.set(isLeading() ? 1 : 0);
      },
    });
    let lastPassSeconds: number | undefined;
    new OptionalGauge(
      {
        name: "mds_last_pass_timestamp_seconds",
        help: "Unix time the leader's last pass over the due scalers ended; absent on followers and before the first pass.",
        registers,
      },
      () => (isLeading() ? lastPassSeconds : undefined),
    );
    this.passEnded = (nowMs: number): void => {
      lastPassSeconds = nowMs / 1000;
    };
    this.passForgotten = (): void => {
      lastPassSeconds = undefined;
    };
    this.webhookDuration = new Histogram({
      name: "mds_webhook_duration_seconds",
      help: "Admission answers by webhook and verdict (code 403 and 422 are refusals, 5xx internal errors).",
      labelNames: ["webhook", "allowed", "code"],
      buckets: [0.005, 0.01, 0.05, 0.1, 0.5, 1, 5],
      registers,
    });
    this.webhookShed = new Counter({
      name: "mds_webhook_shed_total",
      help: "Admission requests refused with HTTP 429 before being read: queue-full or queue-timeout (docs/webhooks.md, Limits).",
      labelNames: ["reason"],
      registers,
    });
    // Both series exist from the start at 0, so a rate reads 0 rather than nothing.
    for (const reason of ["queue-full", "queue-timeout"]) this.webhookShed.inc({ reason }, 0);
    this.passDuration = new Histogram({
      name: "mds_pass_duration_seconds",
      help: "Duration of one sampling and planning pass over all due scalers.",
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.queryDuration = new Histogram({
      name: "mds_promql_query_duration_seconds",
      help: "Duration of one PromQL query.",
      labelNames: ["query"],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    });
  }

  /**
   * Starts timing one PromQL query; call the result when it ends. The query
   * label is the query's first 40 characters, whitespace then collapsed: enough
   * to tell the four signal families apart, and a bounded label set.
   */
  timeQuery(query: string, name?: string): () => void {
    // The source's queries carry their name (gauges, counters, ttft, itl): a label a dashboard legend can show.
    const end = this.queryDuration.startTimer({ query: name ?? queryLabel(query) });
    return () => {
      end();
    };
  }

  /** Records one admission answer: allowed, and the HTTP code (200 when the verdict has none). */
  observeWebhookAnswer(
    webhook: string,
    verdict: { readonly allowed: boolean; readonly code?: number },
    seconds: number,
  ): void {
    this.webhookDuration.observe(
      { webhook, allowed: String(verdict.allowed), code: String(verdict.code ?? 200) },
      seconds,
    );
  }

  /** Records the end of a pass; exported as mds_last_pass_timestamp_seconds while leading. */
  readonly passEnded: (nowMs: number) => void;
  private readonly passForgotten: () => void;

  /**
   * Whether this replica leads. A replica that stops leading exports no
   * per-scaler series from then on: it forgets every scaler's figures and its
   * last pass (the next leader reports them afresh) and hides its counters.
   */
  setLeading(leading: boolean): void {
    this.leading = leading;
    if (!leading) {
      this.reports.clear();
      this.passForgotten();
    }
  }

  /**
   * Drops the counters of every scaler not in `keys` ("namespace/name"): a
   * replica that leads again calls it with the scalers that exist now, so a
   * scaler deleted while it followed does not come back with its counters.
   */
  retain(keys: ReadonlySet<string>): void {
    for (const k of new Set([...this.countedTargets.keys(), ...this.scalerErrorKinds.keys()])) {
      if (keys.has(k)) continue;
      const [namespace = "", scaler = ""] = k.split("/");
      this.forget(namespace, scaler);
    }
  }

  /** Counts an error of one scaler's pass under its namespace and name. */
  scalerError(namespace: string, scaler: string, kind: ScalerErrorKind, count = 1): void {
    const k = key(namespace, scaler);
    const kinds = this.scalerErrorKinds.get(k) ?? new Set<ScalerErrorKind>();
    kinds.add(kind);
    this.scalerErrorKinds.set(k, kinds);
    this.errors.inc({ kind, namespace, scaler }, count);
  }

  /** Replaces a scaler's figures with this pass's report. */
  report(report: ScalerReport): void {
    const id = key(report.namespace, report.scaler);
    const targets = this.countedTargets.get(id) ?? new Set<string>();
    if (!targets.has(report.target)) {
      // A scaler's counters exist from its first report at zero, so increase() and rate()
      // read 0, not no data, until its first commit, rollback or error.
      for (const c of this.scalerCounters()) c.inc(scalerKey(report), 0);
      for (const kind of scalerErrorKinds) this.scalerError(report.namespace, report.scaler, kind, 0);
      targets.add(report.target);
      this.countedTargets.set(id, targets);
    }
    this.reports.set(id, report);
  }

  private scalerCounters(): Counter<(typeof scalerLabels)[number]>[] {
    return [
      this.commits,
      this.commitFailures,
      this.conflicts,
      this.rollbacks,
      this.abortedScaleDowns,
      this.rebalanceSteps,
    ];
  }

  /** Drops every series of a deleted scaler, counters included. */
  forget(namespace: string, scaler: string): void {
    for (const kind of this.scalerErrorKinds.get(key(namespace, scaler)) ?? [])
      this.errors.remove({ kind, namespace, scaler });
    this.scalerErrorKinds.delete(key(namespace, scaler));
    this.reports.delete(key(namespace, scaler));
    for (const target of this.countedTargets.get(key(namespace, scaler)) ?? [])
      for (const c of this.scalerCounters()) c.remove({ namespace, scaler, target });
    this.countedTargets.delete(key(namespace, scaler));
  }

  /** The scalers with a report, as "namespace/name". */
  known(): string[] {
    return [...this.reports.keys()];
  }
}

function key(namespace: string, scaler: string): string {
  return `${namespace}/${scaler}`;
}

function scalerKey(report: ScalerReport): Record<(typeof scalerLabels)[number], string> {
  return { namespace: report.namespace, scaler: report.scaler, target: report.target };
}

function roleKey(report: ScalerReport, role: string): Record<(typeof roleLabels)[number], string> {
  return { ...scalerKey(report), role };
}
