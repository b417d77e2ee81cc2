/**
 * `mds-scaler / Engines`: what the engines of a scaler's target report, per
 * role, from the vLLM and SGLang series themselves (not the scaler's reading of
 * them), against the scaler's latency targets. The engine series are selected by
 * the labels the chart's PodMonitor adds: `app_kubernetes_io_instance` (the
 * ModelDeployment) and `app_kubernetes_io_component` (the role). SGLang's
 * scheduler gauges are read from TP rank 0, which writes them.
 */
import type { DashboardSpec } from "./panels.js";

const engineSel =
  'namespace=~"$namespace", app_kubernetes_io_instance=~"$target", app_kubernetes_io_component=~"$role"';
const by = "namespace, app_kubernetes_io_component";
const roleLegend = "{{app_kubernetes_io_component}}";
const rate = (vllm: string, sglang: string): string =>
  `sum by (${by}) (rate(vllm:${vllm}{${engineSel}}[$__rate_interval])) or sum by (${by}) (rate(sglang:${sglang}{${engineSel}}[$__rate_interval]))`;
const p95 = (vllm: string, sglang: string): string =>
  `histogram_quantile(0.95, sum by (${by}, le) (rate(vllm:${vllm}_bucket{${engineSel}}[$__rate_interval]) or rate(sglang:${sglang}_bucket{${engineSel}}[$__rate_interval])))`;
const gauge = (agg: "sum" | "avg", vllm: string, sglang: string): string =>
  `${agg} by (${by}) (vllm:${vllm}{${engineSel}}) or ${agg} by (${by}) (sglang:${sglang}{${engineSel}, tp_rank=~"0|"})`;
const target = (metric: string): string =>
  `max by (namespace, role) (${metric}{namespace=~"$namespace", scaler=~"$scaler", role=~"$role"}) / 1000`;

export const enginesDashboard: DashboardSpec = {
  uid: "mds-scaler-engines",
  title: "mds-scaler / Engines",
  description: "The vLLM and SGLang engines of a scaler's target, per role, against the scaler's targets.",
  variables: [
    { name: "namespace", label: "Namespace", query: "label_values(mds_scaler_mode, namespace)" },
    { name: "scaler", label: "Scaler", query: 'label_values(mds_scaler_mode{namespace=~"$namespace"}, scaler)' },
    {
      name: "target",
      label: "ModelDeployment",
      query: 'label_values(mds_scaler_mode{namespace=~"$namespace", scaler=~"$scaler"}, target)',
    },
    {
      name: "role",
      label: "Role",
      query: 'label_values(mds_role_current_replicas{namespace=~"$namespace", scaler=~"$scaler"}, role)',
    },
  ],
  rows: [
    {
      title: "How much work do the engines do?",
      panels: [
        {
          type: "timeseries",
          title: "Prompt and generation tokens per second",
          question:
            "How many tokens does each role prefill (prompt) and decode (generation) per second, as the engines count them?",
          targets: [
            { expr: rate("prompt_tokens_total", "prompt_tokens_total"), legend: `${roleLegend} prompt` },
            { expr: rate("generation_tokens_total", "generation_tokens_total"), legend: `${roleLegend} generation` },
          ],
          width: 12,
        },
        {
          type: "timeseries",
          title: "Requests running and waiting",
          question: "How many requests does each role serve now, and how many wait for a slot?",
          targets: [
            { expr: gauge("sum", "num_requests_running", "num_running_reqs"), legend: `${roleLegend} running` },
            { expr: gauge("sum", "num_requests_waiting", "num_queue_reqs"), legend: `${roleLegend} waiting` },
          ],
          width: 12,
        },
      ],
    },
    {
      title: "Are users served fast enough?",
      panels: [
        {
          type: "timeseries",
          title: "Time to first token p95 against the target",
          question: "Does each role meet the scaler's time-to-first-token target? The engines' p95 over the rate interval.",
          targets: [
            { expr: p95("time_to_first_token_seconds", "time_to_first_token_seconds"), legend: `${roleLegend} p95` },
            { expr: target("mds_role_ttft_target_milliseconds"), legend: "{{role}} target" },
          ],
          unit: "s",
          width: 12,
        },
        {
          type: "timeseries",
          title: "Inter-token latency p95 against the target",
          question: "Does each role meet the scaler's inter-token latency target? The engines' p95 over the rate interval.",
          targets: [
            { expr: p95("inter_token_latency_seconds", "inter_token_latency_seconds"), legend: `${roleLegend} p95` },
            { expr: target("mds_role_itl_target_milliseconds"), legend: "{{role}} target" },
          ],
          unit: "s",
          width: 12,
        },
      ],
    },
    {
      title: "Is memory the limit?",
      panels: [
        {
          type: "timeseries",
          title: "KV-cache usage",
          question: "How full is each role's KV cache, averaged over its replicas? Near 1, requests wait or are preempted.",
          targets: [{ expr: gauge("avg", "kv_cache_usage_perc", "token_usage"), legend: roleLegend }],
          unit: "percentunit",
          width: 12,
        },
        {
          type: "timeseries",
          title: "Preemptions per second",
          question:
            "Does a role evict running requests to free KV cache? vLLM counts preemptions; SGLang exports no such counter.",
          targets: [
            {
              expr: `sum by (${by}) (rate(vllm:num_preemptions_total{${engineSel}}[$__rate_interval]))`,
              legend: roleLegend,
            },
          ],
          width: 12,
        },
      ],
    },
  ],
};
