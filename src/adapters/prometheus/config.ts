/**
 * How engine series are labelled and named in the Prometheus the scaler reads.
 *
 * The defaults match the chart's PodMonitor: prometheus-operator adds
 * `namespace` and `pod`, and `podTargetLabels` copies the pod labels
 * `app.kubernetes.io/instance` (the ModelDeployment name) and
 * `app.kubernetes.io/component` (the role name) onto every series, sanitised
 * to `app_kubernetes_io_instance` and `app_kubernetes_io_component`.
 */

export interface PrometheusLabelNames {
  readonly namespace: string;
  readonly pod: string;
  readonly deployment: string;
  readonly role: string;
}

/** `:` as the engines expose names; `_` where an ingestion pipeline rewrote them. */
export type MetricNameSeparator = ":" | "_";

export interface PrometheusSignalConfig {
  readonly labels: PrometheusLabelNames;
  readonly metricNameSeparator: MetricNameSeparator;
  /** Budget of one query: the HTTP request and Prometheus' own evaluation timeout. */
  readonly queryTimeoutMs: number;
}

export const defaultLabelNames: PrometheusLabelNames = {
  namespace: "namespace",
  pod: "pod",
  deployment: "app_kubernetes_io_instance",
  role: "app_kubernetes_io_component",
};

export const defaultPrometheusSignalConfig: PrometheusSignalConfig = {
  labels: defaultLabelNames,
  metricNameSeparator: ":",
  queryTimeoutMs: 10_000,
};

const labelNamePattern = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** Label names go into queries unquoted, so they must be valid names; anything else is a configuration error. */
export function validatePrometheusSignalConfig(config: PrometheusSignalConfig): PrometheusSignalConfig {
  for (const [field, name] of Object.entries(config.labels)) {
    if (!labelNamePattern.test(name) || name.startsWith("__") || name.startsWith("mds_")) {
      throw new Error(`labels.${field}: ${JSON.stringify(name)} is not a usable Prometheus label name`);
    }
  }
  const names = Object.values(config.labels);
  if (new Set(names).size !== names.length) throw new Error("label names must be distinct");
  if (config.metricNameSeparator !== ":" && config.metricNameSeparator !== "_") {
    throw new Error(`metricNameSeparator must be ":" or "_"`);
  }
  if (!(config.queryTimeoutMs > 0)) throw new Error("queryTimeoutMs must be positive");
  return config;
}
