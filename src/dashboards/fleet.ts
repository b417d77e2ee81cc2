/**
 * `mds-scaler / Fleet`: every scaler at once, the first page a platform
 * engineer opens. How many scalers commit, which are blocked or blind, and how
 * often the fleet writes and rolls back.
 */
import { scalerStateTable, writeCounterTargets, type DashboardSpec } from "./panels.js";

const ns = 'namespace=~"$namespace"';
/** Counts scalers per namespace whose condition matches, 0 (not absent) where none does. */
const countWhere = (condition: string): string =>
  `count by (namespace) (max by (namespace, scaler) (mds_scaler_condition{${ns}, ${condition}} == 1))` +
  ` or count by (namespace) (max by (namespace, scaler) (mds_scaler_mode{${ns}} == 1)) * 0`;
const perNamespace = (counter: string): string => `sum by (namespace) (increase(${counter}{${ns}}[1h]))`;

export const fleetDashboard: DashboardSpec = {
  uid: "mds-scaler-fleet",
  title: "mds-scaler / Fleet",
  description: "Every scaler at once: modes, conditions, commits and rollbacks.",
  variables: [{ name: "namespace", label: "Namespace", query: "label_values(mds_scaler_mode, namespace)" }],
  annotations: [
    {
      name: "Commits",
      expr: `sum by (namespace, scaler) (increase(mds_commits_total{${ns}}[2m])) > 0`,
      title: "Commit",
      text: "{{namespace}}/{{scaler}} committed a replica vector",
      color: "blue",
    },
  ],
  rows: [
    {
      title: "How is the fleet?",
      panels: [
        {
          type: "stat",
          title: "Scalers by mode",
          question: "How many scalers commit (Active), and how many only compute (Shadow)?",
          targets: [
            {
              expr: `count by (namespace, mode) (max by (namespace, scaler, mode) (mds_scaler_mode{${ns}} == 1))`,
              legend: "{{namespace}} {{mode}}",
            },
          ],
          width: 8,
          height: 5,
        },
        {
          type: "stat",
          title: "Blocked",
          question: "How many scalers cannot move their target toward the recommendation?",
          targets: [{ expr: countWhere('type="Blocked", status="True"'), legend: "{{namespace}}" }],
          width: 8,
          height: 5,
        },
        {
          type: "stat",
          title: "Metrics not ready",
          question: "How many scalers lack the engine signals they need, and so hold scale-down?",
          targets: [{ expr: countWhere('type="MetricsReady", status="False"'), legend: "{{namespace}}" }],
          width: 8,
          height: 5,
        },
        {
          type: "table",
          title: "Scalers",
          question:
            "Which scalers exist, what do they target, are they Active, under which binding term, and how old are their floors by the hour (hours since the day they were read from ended)?",
          ...scalerStateTable(ns),
          width: 10,
          height: 10,
        },
        {
          type: "table",
          title: "Conditions",
          question: "Which scaler is blocked, blind or unbound, and for what reason?",
          targets: [{ expr: `max by (namespace, scaler, type, status, reason) (mds_scaler_condition{${ns}} == 1)` }],
          columns: [
            ["namespace", "Namespace"],
            ["scaler", "Scaler"],
            ["type", "Condition"],
            ["status", "Status"],
            ["reason", "Reason"],
          ],
          width: 14,
          height: 10,
        },
      ],
    },
    {
      title: "What is the fleet doing?",
      panels: [
        {
          type: "timeseries",
          title: "Commits and rollbacks per hour",
          question:
            "How often does the fleet write replicas, and how often do writes fail, conflict or get undone (rollbacks, aborted scale-downs)?",
          targets: writeCounterTargets(perNamespace, "{{namespace}}"),
          width: 12,
        },
        {
          type: "timeseries",
          title: "Replicas wanted minus replicas running",
          question:
            "Which scalers want more (positive) or fewer (negative) replicas than their target runs? Shadow scalers show what they would change.",
          targets: [
            {
              expr: `sum by (namespace, scaler) (max by (namespace, scaler, role) (mds_role_constrained_replicas{${ns}}) - on (namespace, scaler, role) max by (namespace, scaler, role) (mds_role_current_replicas{${ns}}))`,
              legend: "{{namespace}}/{{scaler}}",
            },
          ],
          unit: "none",
          width: 12,
        },
        {
          type: "timeseries",
          title: "Replicas per scaler",
          question: "How many replicas does each scaler's target run, all roles together?",
          targets: [
            {
              expr: `sum by (namespace, scaler) (max by (namespace, scaler, role) (mds_role_current_replicas{${ns}}))`,
              legend: "{{namespace}}/{{scaler}}",
            },
          ],
          unit: "none",
          width: 12,
        },
        {
          type: "timeseries",
          title: "Demand over ready capacity",
          question: "Which roles run hot (above 1) or idle (well below 1) on their stable-window demand?",
          targets: [
            {
              expr: `max by (namespace, scaler, role) (mds_role_demand_tokens_per_second{${ns}, window="stable"}) / on (namespace, scaler, role) (max by (namespace, scaler, role) (mds_role_capacity_tokens_per_second{${ns}}) * on (namespace, scaler, role) max by (namespace, scaler, role) (mds_role_ready_replicas{${ns}}) > 0)`,
              legend: "{{namespace}}/{{scaler}}/{{role}}",
            },
          ],
          unit: "percentunit",
          width: 12,
        },
      ],
    },
  ],
};
