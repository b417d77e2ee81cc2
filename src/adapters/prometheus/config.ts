/**
 * How engine series are labelled and named in the Prometheus the scaler reads.
 *
 * The defaults match the chart's PodMonitor: prometheus-operator adds
 * `namespace` and `pod`, and `podTargetLabels` copies the pod labels
 * `app.kubernetes.io/instance` (the ModelDeployment name) and
 * `app.kubernetes.io/component` (the role name) onto every series, sanitised
 * to `app_kubernetes_io_instance` and `app_kubernetes_io_component`.
 */
import type { LabelMatcher } from "./matchers.js";
import { queryPlans, type QueryPlan } from "./queries.js";

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
  /** How a pass asks for its parts (queries.ts `QueryPlan`); `defaultQueryPlan` when absent. */
  readonly queryPlan?: QueryPlan;
  /** Matchers every engine selector carries besides the scaler's own labels (matchers.ts); none when absent. */
  readonly matchers?: readonly LabelMatcher[];
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

/**
 * Why a label name cannot select engine series, or undefined when it can. Names go into queries
 * unquoted, so they must be valid; `__` names are Prometheus' own (dropped after relabelling, or the
 * metric name) and `mds_` names are the scaler's own recording rules, so neither can ever match a pod.
 */
export function labelNameProblem(name: string): string | undefined {
  if (!labelNamePattern.test(name)) return "must be a Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*)";
  if (name.startsWith("__")) return "names starting with __ are Prometheus' own and never select a pod's series";
  if (name.startsWith("mds_")) return "names starting with mds_ are the scaler's own";
  return undefined;
}

/** The fields of a label mapping that name the same label (the first keeps it), empty when all differ. */
export function repeatedLabelFields(labels: PrometheusLabelNames): (keyof PrometheusLabelNames)[] {
  const seen = new Set<string>();
  const repeated: (keyof PrometheusLabelNames)[] = [];
  for (const [field, name] of Object.entries(labels) as [keyof PrometheusLabelNames, string][]) {
    if (seen.has(name)) repeated.push(field);
    seen.add(name);
  }
  return repeated;
}

/** A configuration error for anything the adapter cannot query with; the app's configuration checks the same first. */
export function validatePrometheusSignalConfig(config: PrometheusSignalConfig): PrometheusSignalConfig {
  for (const [field, name] of Object.entries(config.labels)) {
    if (labelNameProblem(name) !== undefined) {
      throw new Error(`labels.${field}: ${JSON.stringify(name)} is not a usable Prometheus label name`);
    }
  }
  if (repeatedLabelFields(config.labels).length > 0) throw new Error("label names must be distinct");
  if (config.metricNameSeparator !== ":" && config.metricNameSeparator !== "_") {
    throw new Error(`metricNameSeparator must be ":" or "_"`);
  }
  if (!(config.queryTimeoutMs > 0)) throw new Error("queryTimeoutMs must be positive");
  if (config.queryPlan !== undefined && !queryPlans.includes(config.queryPlan)) {
    throw new Error(`queryPlan: ${JSON.stringify(config.queryPlan)} is not one of ${queryPlans.join(", ")}`);
  }
  for (const m of config.matchers ?? []) {
    const problem = matcherNameProblem(m.name, config.labels);
    if (problem !== undefined) throw new Error(`matchers: ${m.name}: ${problem}`);
  }
  return config;
}

/**
 * Why a label cannot carry an extra matcher, or undefined when it can: the scaler pins the namespace,
 * deployment and role labels itself, and the pod label must stay free to tell pods apart.
 */
export function matcherNameProblem(name: string, labels: PrometheusLabelNames): string | undefined {
  const field = (Object.keys(labels) as (keyof PrometheusLabelNames)[]).find((f) => labels[f] === name);
  if (field !== undefined) return `is the ${field} label, which the scaler sets itself`;
  return labelNameProblem(name);
}
