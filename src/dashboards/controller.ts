/**
 * `mds-scaler / Controller`: is the controller itself healthy? Leadership, the
 * decision loop, its PromQL queries, its admission webhooks and its process.
 * Controller-wide series carry the controller's own namespace (from the scrape
 * target); the namespace variable here selects the controller's namespace.
 */
import type { DashboardSpec } from "./panels.js";

const c = 'namespace=~"$namespace"';

export const controllerDashboard: DashboardSpec = {
  uid: "mds-scaler-controller",
  title: "mds-scaler / Controller",
  description: "Leadership, decision loop, PromQL, webhooks and process health of the mds-scaler controller.",
  variables: [{ name: "namespace", label: "Controller namespace", query: "label_values(mds_leader, namespace)" }],
  rows: [
    {
      title: "Who leads, and is the loop turning?",
      panels: [
        {
          type: "table",
          title: "Replicas",
          question: "Which replica leads, and which follow (serving webhooks and /metrics only)?",
          targets: [{ expr: `max by (namespace, pod) (mds_leader{${c}})` }],
          columns: [
            ["namespace", "Namespace"],
            ["pod", "Pod"],
            ["Value", "Role"],
          ],
          valueText: { "0": { text: "Follower", color: "text" }, "1": { text: "Leader", color: "green" } },
          width: 6,
        },
        {
          type: "timeseries",
          title: "Replicas holding the Lease",
          question: "Is exactly one replica leading? 0 means nothing scales; more than 1 means replicas compete.",
          targets: [{ expr: `sum by (namespace) (mds_leader{${c}})`, legend: "{{namespace}} leaders" }],
          unit: "none",
          width: 6,
        },
        {
          type: "timeseries",
          title: "Seconds since the last pass",
          question: "Is the leader's decision loop still completing passes? It should stay near the tick interval.",
          targets: [
            {
              expr: `time() - max by (namespace) (mds_last_pass_timestamp_seconds{${c}})`,
              legend: "{{namespace}}",
            },
          ],
          unit: "s",
          width: 6,
        },
        {
          type: "timeseries",
          title: "Pass duration",
          question: "How long does one pass over all due scalers take (p50 and p95)?",
          targets: [
            {
              expr: `histogram_quantile(0.5, sum by (namespace, le) (rate(mds_pass_duration_seconds_bucket{${c}}[$__rate_interval])))`,
              legend: "{{namespace}} p50",
            },
            {
              expr: `histogram_quantile(0.95, sum by (namespace, le) (rate(mds_pass_duration_seconds_bucket{${c}}[$__rate_interval])))`,
              legend: "{{namespace}} p95",
            },
          ],
          unit: "s",
          width: 6,
        },
      ],
    },
    {
      title: "Does it read Prometheus and the API server?",
      panels: [
        {
          type: "timeseries",
          title: "PromQL query latency p95",
          question: "Which of the controller's PromQL queries are slow?",
          targets: [
            {
              expr: `histogram_quantile(0.95, sum by (namespace, query, le) (rate(mds_promql_query_duration_seconds_bucket{${c}}[$__rate_interval])))`,
              legend: "{{query}}",
            },
          ],
          unit: "s",
          width: 12,
        },
        {
          type: "timeseries",
          title: "Errors per second by kind",
          question:
            "What fails: Prometheus queries (prometheus), API server calls (kubernetes), a scaler's pass (reconcile, conflict), invalid scalers?",
          targets: [
            {
              expr: `sum by (kind) (rate(mds_errors_total[$__rate_interval]))`,
              legend: "{{kind}}",
            },
          ],
          width: 12,
        },
      ],
    },
    {
      title: "Do the webhooks answer?",
      panels: [
        {
          type: "timeseries",
          title: "Webhook answer time p99",
          question:
            "How long does each admission webhook take? Every guarded write waits for it, and past timeoutSeconds the API server refuses the write.",
          targets: [
            {
              expr: `histogram_quantile(0.99, sum by (namespace, webhook, le) (rate(mds_webhook_duration_seconds_bucket{${c}}[$__rate_interval])))`,
              legend: "{{webhook}}",
            },
          ],
          unit: "s",
          width: 12,
        },
        {
          type: "timeseries",
          title: "Webhook answers by verdict",
          question:
            "How many writes does each webhook admit, deny on purpose (403 fence, 422 invalid), fail with an internal error (5xx), or shed at the admission limit (429)?",
          targets: [
            {
              expr: `sum by (namespace, webhook, allowed, code) (rate(mds_webhook_duration_seconds_count{${c}}[$__rate_interval]))`,
              legend: "{{webhook}} allowed={{allowed}} {{code}}",
            },
            {
              expr: `sum by (namespace, reason) (rate(mds_webhook_shed_total{${c}}[$__rate_interval]))`,
              legend: "shed 429 {{reason}}",
            },
          ],
          unit: "reqps",
          width: 12,
        },
      ],
    },
    {
      title: "Is the process healthy?",
      panels: [
        {
          type: "timeseries",
          title: "Memory",
          question: "Is a replica near its memory limit? Resident memory and the JavaScript heap in use.",
          targets: [
            {
              expr: `max by (namespace, pod) (mds_process_process_resident_memory_bytes{${c}})`,
              legend: "{{pod}} resident",
            },
            {
              expr: `max by (namespace, pod) (mds_process_nodejs_heap_size_used_bytes{${c}})`,
              legend: "{{pod}} heap used",
            },
          ],
          unit: "bytes",
          width: 8,
        },
        {
          type: "timeseries",
          title: "Event-loop lag p99",
          question: "Is a replica starved of CPU? Event-loop lag delays passes and webhook answers alike.",
          targets: [
            {
              expr: `max by (namespace, pod) (mds_process_nodejs_eventloop_lag_p99_seconds{${c}})`,
              legend: "{{pod}}",
            },
          ],
          unit: "s",
          width: 8,
        },
        {
          type: "timeseries",
          title: "CPU",
          question: "How much CPU does each replica use, in cores?",
          targets: [
            {
              expr: `sum by (namespace, pod) (rate(mds_process_process_cpu_seconds_total{${c}}[$__rate_interval]))`,
              legend: "{{pod}}",
            },
          ],
          unit: "none",
          width: 8,
        },
      ],
    },
  ],
};
