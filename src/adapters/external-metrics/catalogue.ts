/**
 * The external metrics this API serves, and how each is read from a scaler's
 * status. Names and values match the controller's own gauges, so a read
 * through the API server and a PromQL query give the same number.
 */
import type { RoleReport } from "../telemetry/metrics.js";

export interface ExternalMetricDefinition {
  readonly name: string;
  readonly help: string;
  /** Labels besides scaler, target and role. */
  readonly extraLabels: Readonly<Record<string, string>>;
  readonly value: (role: RoleReport) => number | undefined;
}

export const externalMetrics: readonly ExternalMetricDefinition[] = [
  {
    name: "mds_role_constrained_replicas",
    help: "The recommendation after bounds, ratios, pacing and guards.",
    extraLabels: {},
    value: (r) => r.constrainedReplicas,
  },
  {
    name: "mds_role_recommended_replicas",
    help: "The algorithm's raw recommendation.",
    extraLabels: {},
    value: (r) => r.rawRecommendedReplicas,
  },
  {
    name: "mds_role_demand_tokens_per_second",
    help: "Token demand over the stable window that the recommendation answers.",
    extraLabels: { window: "stable" },
    value: (r) => r.stableDemandTokensPerSecond,
  },
  {
    name: "mds_role_current_replicas",
    help: "Desired replicas currently on the target.",
    extraLabels: {},
    value: (r) => r.currentReplicas,
  },
];

export function findExternalMetric(name: string): ExternalMetricDefinition | undefined {
  return externalMetrics.find((m) => m.name === name);
}
