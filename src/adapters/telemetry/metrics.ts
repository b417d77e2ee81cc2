/**
 * The scaler's own metrics, on its own prom-client registry (never the global
 * one). Gauges are filled at scrape time from the latest report of each scaler,
 * so the series of a deleted scaler or role disappear with its report.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";

/** One role's figures after a pass; absent fields are unknown and export no series. */
export interface RoleReport {
  readonly role: string;
  readonly currentReplicas: number;
  readonly readyReplicas: number;
  readonly rawRecommendedReplicas?: number;
  readonly constrainedReplicas?: number;
  readonly committedReplicas?: number;
  readonly stableDemandTokensPerSecond?: number;
  readonly panicDemandTokensPerSecond?: number;
  readonly forecastDemandTokensPerSecond?: number;
  readonly capacityPerReplicaTokensPerSecond?: number;
  readonly ttftMilliseconds?: number;
  readonly ttftTargetMilliseconds?: number;
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
}

export interface ScalerReport {
  readonly namespace: string;
  readonly scaler: string;
  readonly target: string;
  readonly mode: string;
  readonly bindingTerm?: number;
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
    "mds_role_capacity_tokens_per_second",
    "Per-replica token capacity the algorithm divides by.",
    "capacityPerReplicaTokensPerSecond",
  ],
  ["mds_role_ttft_p95_milliseconds", "p95 time to first token (bucket boundary).", "ttftMilliseconds"],
  ["mds_role_ttft_target_milliseconds", "Time-to-first-token target.", "ttftTargetMilliseconds"],
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

export class ScalerMetrics {
  readonly registry: Registry;
  private readonly reports = new Map<string, ScalerReport>();
  readonly commits: Counter<(typeof scalerLabels)[number]>;
  readonly conflicts: Counter<(typeof scalerLabels)[number]>;
  readonly rollbacks: Counter<(typeof scalerLabels)[number]>;
  readonly abortedScaleDowns: Counter<(typeof scalerLabels)[number]>;
  readonly rebalanceSteps: Counter<(typeof scalerLabels)[number]>;
  readonly errors: Counter<"kind">;
  readonly passDuration: Histogram<never>;
  readonly queryDuration: Histogram<"query">;

  constructor(opts: { defaultMetrics?: boolean } = {}) {
    this.registry = new Registry();
    if (opts.defaultMetrics !== false) collectDefaultMetrics({ register: this.registry, prefix: "mds_process_" });
    const reports = this.reports;
    const registers = [this.registry];

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

    const counter = (name: string, help: string) => new Counter({ name, help, labelNames: scalerLabels, registers });
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
    this.errors = new Counter({ name: "mds_errors_total", help: "Errors by kind.", labelNames: ["kind"], registers });
    // Zero from the start, so rate() reads 0 rather than no data before the first error.
    for (const kind of errorKinds) this.errors.inc({ kind }, 0);
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

  /** Replaces a scaler's figures with this pass's report. */
  report(report: ScalerReport): void {
    const id = key(report.namespace, report.scaler);
    if (!this.reports.has(id)) {
      // A scaler's counters exist from its first report at zero, so increase()
      // and rate() read 0, not no data, until the first commit or rollback.
      for (const c of [this.commits, this.conflicts, this.rollbacks, this.abortedScaleDowns, this.rebalanceSteps])
        c.inc(scalerKey(report), 0);
    }
    this.reports.set(id, report);
  }

  /** Drops every series of a deleted scaler, counters included. */
  forget(namespace: string, scaler: string): void {
    const report = this.reports.get(key(namespace, scaler));
    this.reports.delete(key(namespace, scaler));
    if (report === undefined) return;
    for (const c of [this.commits, this.conflicts, this.rollbacks, this.abortedScaleDowns, this.rebalanceSteps]) {
      c.remove(scalerKey(report));
    }
  }

  /** The scalers with a report, as "namespace/name". */
  known(): string[] {
    return [...this.reports.keys()];
  }
}

/** The `kind` values of mds_errors_total the controller counts. */
export const errorKinds = ["kubernetes", "invalid_scaler", "prometheus", "conflict", "reconcile"] as const;

function key(namespace: string, scaler: string): string {
  return `${namespace}/${scaler}`;
}

function scalerKey(report: ScalerReport): Record<(typeof scalerLabels)[number], string> {
  return { namespace: report.namespace, scaler: report.scaler, target: report.target };
}

function roleKey(report: ScalerReport, role: string): Record<(typeof roleLabels)[number], string> {
  return { ...scalerKey(report), role };
}
