/**
 * One namespace's values of one external metric, read from the scalers'
 * status in the watch cache: every replica answers, leader or not. A scaler
 * whose values nobody keeps current (see freshness.ts) contributes nothing.
 */
import { defaultScalerSpec } from "../../core/api/defaulting.js";
import { ModelDeploymentSchema } from "../../core/api/model-deployment.js";
import { ScalerSchema, type Scaler, type ScalerSpec, type ScalerStatus } from "../../core/api/scaler.js";
import { roleReports } from "../telemetry/role-reports.js";
import type { ExternalMetricDefinition } from "./catalogue.js";
import { staleness, type Staleness } from "./freshness.js";
import { formatKubeQuantity } from "./quantity.js";
import { matchesSelector, type LabelSelector } from "./selector.js";

/** Where the values come from; the controller's watch cache implements it. */
export interface ScalerReader {
  listScalers(namespace: string): Promise<unknown[]>;
  getTarget(namespace: string, name: string): Promise<unknown>;
}

export interface ExternalMetricValue {
  readonly metricName: string;
  readonly metricLabels: Readonly<Record<string, string>>;
  readonly timestamp: string;
  readonly value: string;
}

export interface ExternalMetricValueList {
  readonly kind: "ExternalMetricValueList";
  readonly apiVersion: "external.metrics.k8s.io/v1beta1";
  readonly metadata: Record<string, never>;
  readonly items: readonly ExternalMetricValue[];
}

/** The parts of a defaulted scaler object read here. */
interface ScalerView {
  readonly metadata: Scaler["metadata"];
  readonly spec: ScalerSpec;
  readonly status?: ScalerStatus | undefined;
}

/** Scalers left out of an answer, and why (for logs and tests). */
export interface Omission {
  readonly scaler: string;
  readonly why: Staleness | "Invalid" | "NoTimestamp";
}

/** The time of the newest decision the status records: a role's last recommendation, the last commit, a condition change. */
export function decisionTime(scaler: ScalerView, role: string): string | undefined {
  const status = scaler.status;
  const candidates = [
    status?.roles?.find((r) => r.name === role)?.stabilizationHistory?.at(-1)?.timestamp,
    status?.lastCommit?.timestamp,
    ...(status?.conditions ?? []).map((c) => c.lastTransitionTime),
  ].filter((t): t is string => t !== undefined && Number.isFinite(Date.parse(t)));
  let newest: string | undefined;
  for (const t of candidates) if (newest === undefined || Date.parse(t) > Date.parse(newest)) newest = t;
  return newest;
}

async function roleKinds(reader: ScalerReader, namespace: string, target: string): Promise<Record<string, string>> {
  const parsed = ModelDeploymentSchema.safeParse(await reader.getTarget(namespace, target));
  if (!parsed.success) return {};
  return Object.fromEntries(parsed.data.spec.roles.map((r) => [r.name, r.kind]));
}

/** The scaler as read with its spec defaulted, or undefined when it is not a valid scaler. */
function scalerView(raw: unknown): ScalerView | undefined {
  const parsed = ScalerSchema.safeParse(raw);
  const spec = parsed.success ? defaultScalerSpec(parsed.data.spec) : undefined;
  if (!parsed.success || spec === undefined || !spec.ok) return undefined;
  return { metadata: parsed.data.metadata, spec: spec.value, status: parsed.data.status };
}

function scalerStaleness(scaler: ScalerView, leaderRenewing: boolean): ReturnType<typeof staleness> {
  return staleness(
    {
      generation: scaler.metadata.generation,
      deleting: scaler.metadata.deletionTimestamp !== undefined,
      suspend: scaler.spec.suspend === true,
      observedGeneration: scaler.status?.observedGeneration,
      conditions: scaler.status?.conditions ?? [],
    },
    leaderRenewing,
  );
}

export async function readExternalMetric(opts: {
  reader: ScalerReader;
  namespace: string;
  metric: ExternalMetricDefinition;
  selector: LabelSelector;
  leaderRenewing: boolean;
}): Promise<{ list: ExternalMetricValueList; omitted: Omission[] }> {
  const items: ExternalMetricValue[] = [];
  const omitted: Omission[] = [];
  for (const raw of await opts.reader.listScalers(opts.namespace)) {
    const scaler = scalerView(raw);
    if (scaler === undefined) {
      omitted.push({ scaler: String((raw as { metadata?: { name?: unknown } }).metadata?.name), why: "Invalid" });
      continue;
    }
    if ((scaler.metadata.namespace ?? opts.namespace) !== opts.namespace) continue;
    const name = scaler.metadata.name;
    const target = scaler.status?.binding?.targetName ?? scaler.spec.targetRef.name;
    const why = scalerStaleness(scaler, opts.leaderRenewing);
    if (why !== undefined) {
      omitted.push({ scaler: name, why });
      continue;
    }
    const reports = roleReports(scaler.spec, scaler.status ?? {}, await roleKinds(opts.reader, opts.namespace, target));
    for (const report of reports) {
      const labels = { scaler: name, target, role: report.role, ...opts.metric.extraLabels };
      if (!matchesSelector(opts.selector, labels)) continue;
      const value = opts.metric.value(report);
      if (value === undefined || !Number.isFinite(value)) continue;
      const timestamp = decisionTime(scaler, report.role);
      if (timestamp === undefined) {
        omitted.push({ scaler: name, why: "NoTimestamp" });
        continue;
      }
      items.push({ metricName: opts.metric.name, metricLabels: labels, timestamp, value: formatKubeQuantity(value) });
    }
  }
  items.sort((a, b) =>
    `${a.metricLabels["scaler"]}/${a.metricLabels["role"]}`.localeCompare(
      `${b.metricLabels["scaler"]}/${b.metricLabels["role"]}`,
    ),
  );
  return {
    list: { kind: "ExternalMetricValueList", apiVersion: "external.metrics.k8s.io/v1beta1", metadata: {}, items },
    omitted,
  };
}
