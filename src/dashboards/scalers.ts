/**
 * `mds-scaler / Scalers`: one scaler's story, in the order a user asks it: is
 * it working, what did it decide and why, what did it see, what did it write.
 */
import { scalerStateTable, writeCounterTargets, type DashboardSpec } from "./panels.js";

const sel = 'namespace=~"$namespace", scaler=~"$scaler"';
const roleSel = `${sel}, role=~"$role"`;
/** Per-role gauges, one series per scaler and role whatever the scrape added (instance, pod). */
const perRole = (metric: string, extra = ""): string =>
  `max by (namespace, scaler, role${extra}) (${metric}{${roleSel}})`;
/** A per-role gauge as one panel series, its legend the scaler, the role and what the series is. */
const roleSeries = (metric: string, what: string): { expr: string; legend: string } => ({
  expr: perRole(metric),
  legend: `{{scaler}}/{{role}} ${what}`,
});
const perScaler = (counter: string, window = "15m"): string =>
  `sum by (namespace, scaler) (increase(${counter}{${sel}}[${window}]))`;

export const scalersDashboard: DashboardSpec = {
  uid: "mds-scaler-overview",
  title: "mds-scaler / Scalers",
  description: "What each ModelDeploymentScaler saw, decided and why.",
  variables: [
    { name: "namespace", label: "Namespace", query: "label_values(mds_scaler_mode, namespace)" },
    { name: "scaler", label: "Scaler", query: 'label_values(mds_scaler_mode{namespace=~"$namespace"}, scaler)' },
    {
      name: "role",
      label: "Role",
      query: 'label_values(mds_role_current_replicas{namespace=~"$namespace", scaler=~"$scaler"}, role)',
    },
  ],
  annotations: [
    {
      name: "Commits",
      expr: `sum by (namespace, scaler) (increase(mds_commits_total{${sel}}[2m])) > 0`,
      title: "Commit",
      text: "{{namespace}}/{{scaler}} committed a replica vector",
      color: "blue",
    },
    {
      name: "Rollbacks",
      expr: `sum by (namespace, scaler) (increase(mds_rollbacks_total{${sel}}[2m])) > 0`,
      title: "Rollback",
      text: "{{namespace}}/{{scaler}} rolled back a scale-up",
      color: "red",
    },
  ],
  rows: [
    {
      title: "Is it working?",
      panels: [
        {
          type: "table",
          title: "Conditions",
          question:
            "Is the scaler bound, active, fed with metrics, and unblocked? Bound, Active, MetricsReady and Blocked with their reasons, as in the scaler's status.",
          targets: [{ expr: `max by (namespace, scaler, type, status, reason) (mds_scaler_condition{${sel}} == 1)` }],
          columns: [
            ["namespace", "Namespace"],
            ["scaler", "Scaler"],
            ["type", "Condition"],
            ["status", "Status"],
            ["reason", "Reason"],
          ],
          width: 16,
        },
        {
          type: "table",
          title: "Mode, binding term, floors' age",
          question:
            "Does the scaler only compute (Shadow) or commit (Active), under which binding term, and, where it writes floors by the hour, how old are they (hours since the day they were read from ended; refreshed daily, MdsScalerFloorsStale past 26)?",
          ...scalerStateTable(sel),
          width: 8,
        },
      ],
    },
    {
      title: "What did it decide, and why?",
      panels: [
        {
          type: "timeseries",
          title: "Replicas: current, ready, recommended, constrained, committed, floor by the hour",
          question:
            "How many replicas does each role run, how many would the algorithm run (recommended), how many do bounds, ratios, pacing and guards allow (constrained), what was last written (committed), and what floor the hour sets where the scaler writes floorReplicasByUtcHour?",
          targets: [
            roleSeries("mds_role_current_replicas", "current"),
            roleSeries("mds_role_ready_replicas", "ready"),
            roleSeries("mds_role_recommended_replicas", "recommended"),
            roleSeries("mds_role_constrained_replicas", "constrained"),
            roleSeries("mds_role_committed_replicas", "committed"),
            roleSeries("mds_role_hourly_floor_replicas", "floor by the hour"),
          ],
          unit: "none",
          width: 12,
        },
        {
          type: "state-timeline",
          title: "Reason per role",
          question:
            "Why is each role at its count? The algorithm's reason, or the constraint that replaced it (WithinTolerance, Panic, LatencyGuardHold, PacingBounded, ...).",
          targets: [
            { expr: `${perRole("mds_role_reason", ", reason")} == 1`, legend: "{{scaler}}/{{role}}: {{reason}}" },
          ],
          width: 12,
        },
        {
          type: "state-timeline",
          title: "Panic mode",
          question: "Is a role scaling on the short panic window because demand jumped past its capacity?",
          targets: [{ expr: perRole("mds_role_panic"), legend: "{{scaler}}/{{role}}" }],
          valueText: { "0": { text: "Stable", color: "green" }, "1": { text: "Panic", color: "orange" } },
          width: 24,
          height: 5,
        },
      ],
    },
    {
      title: "What did it see?",
      panels: [
        {
          type: "timeseries",
          title: "Token demand and ready capacity",
          question:
            "Is demand above what the ready replicas can serve? Cache-adjusted demand over the stable and panic windows, the forecast, and the ready replicas' capacity.",
          targets: [
            { expr: perRole("mds_role_demand_tokens_per_second", ", window"), legend: "{{scaler}}/{{role}} {{window}}" },
            {
              expr: `${perRole("mds_role_capacity_tokens_per_second")} * on (namespace, scaler, role) ${perRole("mds_role_ready_replicas")}`,
              legend: "{{scaler}}/{{role}} ready capacity",
            },
          ],
          unit: "short",
          width: 12,
        },
        {
          type: "timeseries",
          title: "p95 latency against targets",
          question:
            "Are the roles within their latency targets? TTFT guards prefill and server roles, ITL guards decode and server roles; above 1.2x the target the guard adds a replica. Read on queueing, a TTFT breach counts only while queue time is above half the TTFT target; where the scaler writes a queue-time target, queue time is guarded against it too.",
          targets: [
            roleSeries("mds_role_ttft_p95_milliseconds", "TTFT p95"),
            roleSeries("mds_role_ttft_target_milliseconds", "TTFT target"),
            roleSeries("mds_role_queue_time_p95_milliseconds", "queue time p95"),
            roleSeries("mds_role_queue_time_target_milliseconds", "queue time target"),
            roleSeries("mds_role_itl_p95_milliseconds", "ITL p95"),
            roleSeries("mds_role_itl_target_milliseconds", "ITL target"),
          ],
          unit: "ms",
          width: 12,
        },
        {
          type: "timeseries",
          title: "Requests running and waiting",
          question: "Are requests queueing? Across sampled replicas; a decode role's waiting count includes the transfer queue.",
          targets: [
            roleSeries("mds_role_running_requests", "running"),
            roleSeries("mds_role_waiting_requests", "waiting"),
          ],
          unit: "short",
          width: 8,
        },
        {
          type: "timeseries",
          title: "KV-cache usage",
          question: "How full is the KV cache? Mean reported fraction across sampled replicas.",
          targets: [{ expr: perRole("mds_role_kv_cache_usage_ratio"), legend: "{{scaler}}/{{role}}" }],
          unit: "percentunit",
          width: 8,
        },
        {
          type: "state-timeline",
          title: "Signal state",
          question:
            "Can the scaler trust its inputs? Fresh, Idle, Missing or Stale; Missing and Stale hold scale-down, because unknown is never zero.",
          targets: [
            { expr: `${perRole("mds_role_signal_state", ", state")} == 1`, legend: "{{scaler}}/{{role}}: {{state}}" },
          ],
          width: 8,
        },
        {
          type: "timeseries",
          title: "Engine series read",
          question:
            "Which engine series did each signal come from? Pods per signal and series: an older vLLM or SGLang shows its fallback names here.",
          targets: [
            {
              expr: perRole("mds_role_signal_series_pods", ", signal, series"),
              legend: "{{scaler}}/{{role}} {{signal}}: {{series}}",
            },
          ],
          unit: "short",
          width: 24,
        },
        {
          type: "timeseries",
          title: "Predictor level and trend",
          question:
            "Where does the Predictive algorithm think demand is heading? Its Kalman estimate of demand and its change per second (Predictive scalers only).",
          targets: [
            roleSeries("mds_role_predictor_level_tokens_per_second", "level"),
            {
              expr: perRole("mds_role_predictor_trend_tokens_per_second_per_second"),
              legend: "{{scaler}}/{{role}} trend",
            },
          ],
          unit: "short",
          width: 24,
        },
      ],
    },
    {
      title: "What did it write?",
      panels: [
        {
          type: "timeseries",
          title: "Commits, conflicts, rollbacks, aborted scale-downs, rebalance steps",
          question:
            "How often does the scaler write, and do its writes hold? Per 15 minutes; conflicts are re-planned, never lost or doubled.",
          targets: writeCounterTargets((counter) => perScaler(counter), "{{scaler}}"),
          unit: "short",
          width: 24,
        },
      ],
    },
  ],
};
