/**
 * The Grafana dashboard, as code: `npm run generate` writes it to
 * dashboards/mds-scaler.json and a test fails when the two differ. Every panel
 * answers one question a user asks of a scaler, in the order they ask it.
 */

const ds = { type: "prometheus", uid: "${datasource}" } as const;
const sel = 'namespace=~"$namespace", scaler=~"$scaler"';
const roleSel = `${sel}, role=~"$role"`;

interface Target {
  readonly expr: string;
  readonly legend: string;
  readonly instant?: boolean;
}

interface PanelSpec {
  readonly title: string;
  readonly description: string;
  readonly type: "timeseries" | "table" | "state-timeline" | "stat";
  readonly targets: readonly Target[];
  readonly unit?: string;
  readonly width?: number;
  readonly height?: number;
}

const rows: readonly (readonly [string, readonly PanelSpec[]])[] = [
  [
    "Is it working?",
    [
      {
        title: "Conditions",
        description: "Bound, Active, MetricsReady and Blocked with their reasons, as in the scaler's status.",
        type: "table",
        targets: [{ expr: `mds_scaler_condition{${sel}} == 1`, legend: "{{scaler}} {{type}}", instant: true }],
        width: 16,
      },
      {
        title: "Mode and binding term",
        description: "Shadow computes; Active commits under the binding term.",
        type: "table",
        targets: [
          { expr: `mds_scaler_mode{${sel}} == 1`, legend: "{{scaler}} {{mode}}", instant: true },
          { expr: `mds_scaler_binding_term{${sel}}`, legend: "{{scaler}} term", instant: true },
        ],
        width: 8,
      },
    ],
  ],
  [
    "What did it decide, and why?",
    [
      {
        title: "Replicas: current, ready, recommended, constrained",
        description: "rawRecommendedReplicas is the algorithm's answer; constrainedReplicas is what bounds, ratios, pacing and guards allow.",
        type: "timeseries",
        targets: [
          { expr: `mds_role_current_replicas{${roleSel}}`, legend: "{{role}} current" },
          { expr: `mds_role_ready_replicas{${roleSel}}`, legend: "{{role}} ready" },
          { expr: `mds_role_recommended_replicas{${roleSel}}`, legend: "{{role}} recommended" },
          { expr: `mds_role_constrained_replicas{${roleSel}}`, legend: "{{role}} constrained" },
        ],
        unit: "none",
        width: 12,
      },
      {
        title: "Reason per role",
        description: "The algorithm's reason, or the constraint that replaced it (WithinTolerance, Panic, LatencyGuardHold, PacingBounded, ...).",
        type: "state-timeline",
        targets: [{ expr: `mds_role_reason{${roleSel}} == 1`, legend: "{{role}}: {{reason}}" }],
        width: 12,
      },
    ],
  ],
  [
    "What did it see?",
    [
      {
        title: "Token demand and ready capacity",
        description: "Cache-adjusted demand over the stable and panic windows, the forecast, and the ready replicas' capacity.",
        type: "timeseries",
        targets: [
          { expr: `mds_role_demand_tokens_per_second{${roleSel}}`, legend: "{{role}} {{window}}" },
          { expr: `mds_role_capacity_tokens_per_second{${roleSel}} * on (namespace, scaler, target, role) mds_role_ready_replicas{${roleSel}}`, legend: "{{role}} ready capacity" },
        ],
        unit: "short",
        width: 12,
      },
      {
        title: "p95 latency against targets",
        description: "TTFT guards prefill and server roles, ITL guards decode and server roles. Above 1.2x the target the guard adds a replica.",
        type: "timeseries",
        targets: [
          { expr: `mds_role_ttft_p95_milliseconds{${roleSel}}`, legend: "{{role}} TTFT p95" },
          { expr: `mds_role_ttft_target_milliseconds{${roleSel}}`, legend: "{{role}} TTFT target" },
          { expr: `mds_role_itl_p95_milliseconds{${roleSel}}`, legend: "{{role}} ITL p95" },
          { expr: `mds_role_itl_target_milliseconds{${roleSel}}`, legend: "{{role}} ITL target" },
        ],
        unit: "ms",
        width: 12,
      },
      {
        title: "Requests running and waiting",
        description: "Across sampled replicas; a decode role's waiting count includes the transfer queue.",
        type: "timeseries",
        targets: [
          { expr: `mds_role_running_requests{${roleSel}}`, legend: "{{role}} running" },
          { expr: `mds_role_waiting_requests{${roleSel}}`, legend: "{{role}} waiting" },
        ],
        unit: "short",
        width: 8,
      },
      {
        title: "KV-cache usage",
        description: "Mean reported fraction across sampled replicas.",
        type: "timeseries",
        targets: [{ expr: `mds_role_kv_cache_usage_ratio{${roleSel}}`, legend: "{{role}}" }],
        unit: "percentunit",
        width: 8,
      },
      {
        title: "Signal state",
        description: "Fresh, Idle, Missing or Stale. Missing and Stale hold scale-down: unknown is never zero.",
        type: "state-timeline",
        targets: [{ expr: `mds_role_signal_state{${roleSel}} == 1`, legend: "{{role}}: {{state}}" }],
        width: 8,
      },
      {
        title: "Predictor level and trend",
        description: "The Predictive algorithm's Kalman estimate of demand and its change per second.",
        type: "timeseries",
        targets: [
          { expr: `mds_role_predictor_level_tokens_per_second{${roleSel}}`, legend: "{{role}} level" },
          { expr: `mds_role_predictor_trend_tokens_per_second_per_second{${roleSel}}`, legend: "{{role}} trend" },
        ],
        unit: "short",
        width: 24,
      },
    ],
  ],
  [
    "Is the controller healthy?",
    [
      {
        title: "Commits, conflicts, rollbacks, aborted scale-downs",
        description: "Per 15 minutes. Conflicts are re-planned, never lost or doubled.",
        type: "timeseries",
        targets: [
          { expr: `sum by (scaler) (increase(mds_commits_total{${sel}}[15m]))`, legend: "{{scaler}} commits" },
          { expr: `sum by (scaler) (increase(mds_commit_conflicts_total{${sel}}[15m]))`, legend: "{{scaler}} conflicts" },
          { expr: `sum by (scaler) (increase(mds_rollbacks_total{${sel}}[15m]))`, legend: "{{scaler}} rollbacks" },
          { expr: `sum by (scaler) (increase(mds_aborted_scale_downs_total{${sel}}[15m]))`, legend: "{{scaler}} aborted scale-downs" },
        ],
        unit: "short",
        width: 12,
      },
      {
        title: "Pass and query duration (p95) and errors",
        description: "One pass samples and plans every due scaler; errors by kind.",
        type: "timeseries",
        targets: [
          { expr: "histogram_quantile(0.95, sum by (le) (rate(mds_pass_duration_seconds_bucket[5m])))", legend: "pass p95" },
          { expr: "histogram_quantile(0.95, sum by (le) (rate(mds_promql_query_duration_seconds_bucket[5m])))", legend: "PromQL query p95" },
          { expr: "sum by (kind) (rate(mds_errors_total[5m]))", legend: "errors: {{kind}}" },
        ],
        unit: "s",
        width: 12,
      },
    ],
  ],
];

function variable(name: string, label: string, query: string): Record<string, unknown> {
  return {
    name,
    label,
    type: "query",
    datasource: ds,
    query: { query, refId: name },
    definition: query,
    includeAll: true,
    multi: true,
    current: { text: "All", value: "$__all" },
    refresh: 2,
    sort: 1,
  };
}

/** The dashboard JSON model. */
export function overviewDashboard(): Record<string, unknown> {
  const panels: Record<string, unknown>[] = [];
  let id = 1;
  let y = 0;
  for (const [title, specs] of rows) {
    panels.push({ id: id++, type: "row", title, collapsed: false, gridPos: { h: 1, w: 24, x: 0, y } });
    y += 1;
    let x = 0;
    let rowHeight = 0;
    for (const spec of specs) {
      const w = spec.width ?? 12;
      const h = spec.height ?? 8;
      if (x + w > 24) {
        x = 0;
        y += rowHeight;
        rowHeight = 0;
      }
      panels.push({
        id: id++,
        type: spec.type,
        title: spec.title,
        description: spec.description,
        datasource: ds,
        gridPos: { h, w, x, y },
        fieldConfig: { defaults: { unit: spec.unit ?? "short" }, overrides: [] },
        options: spec.type === "table" ? { showHeader: true } : { legend: { displayMode: "list", placement: "bottom" } },
        targets: spec.targets.map((t, i) => ({
          datasource: ds,
          expr: t.expr,
          legendFormat: t.legend,
          refId: String.fromCharCode(65 + i),
          ...(t.instant === true ? { instant: true, range: false, format: "table" } : {}),
        })),
      });
      x += w;
      rowHeight = Math.max(rowHeight, h);
    }
    y += rowHeight;
  }
  return {
    uid: "mds-scaler-overview",
    title: "mds-scaler / Scalers",
    description: "What each ModelDeploymentScaler saw, decided and why.",
    tags: ["mds-scaler", "llm", "autoscaling"],
    editable: true,
    schemaVersion: 39,
    time: { from: "now-3h", to: "now" },
    refresh: "30s",
    templating: {
      list: [
        { name: "datasource", label: "Data source", type: "datasource", query: "prometheus", current: {} },
        variable("namespace", "Namespace", "label_values(mds_scaler_mode, namespace)"),
        variable("scaler", "Scaler", 'label_values(mds_scaler_mode{namespace=~"$namespace"}, scaler)'),
        variable("role", "Role", 'label_values(mds_role_current_replicas{namespace=~"$namespace", scaler=~"$scaler"}, role)'),
      ],
    },
    annotations: { list: [] },
    panels,
  };
}

/** Every dashboard the project ships, by file name. */
export const dashboards: Readonly<Record<string, () => Record<string, unknown>>> = {
  "mds-scaler.json": overviewDashboard,
};
