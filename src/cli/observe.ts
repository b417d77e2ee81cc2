/**
 * `mds-scaler observe --prometheus-url URL -f scaler.yaml [--target md.yaml] [-o table|json|yaml]`:
 * one sampling pass with the controller's own queries, printed per role and
 * per pod: every field the algorithm reads, the series it came from, coverage,
 * signal state and why. With `--target` no cluster is needed (the file names
 * the roles, their kinds and, from its status when present, their ready
 * replicas); without it the target is read from the cluster, and `--scaler`
 * reads the scaler from there too.
 */
import { stringify } from "yaml";
import { KubeResources, modelDeploymentResource } from "../adapters/kubernetes/resources.js";
import { PrometheusSignalSource, type ScalerSamplingInput } from "../adapters/prometheus/source.js";
import { sumsByRole } from "../adapters/prometheus/queries.js";
import { clusterConfigFrom } from "../app/cluster.js";
import { labelProblems, prometheusClientOf, prometheusSettingNames, prometheusSignalConfigOf } from "../app/config.js";
import {
  engineScrapeIntervalSeconds,
  ConfigError,
  describeSettings,
  readSettings,
  type CommandFlag,
  type SettingName,
  type Settings,
} from "../app/settings.js";
import { formatProblem } from "../core/api/problem.js";
import { parseTarget, validateScaler } from "../core/api/validation.js";
import type { ModelDeployment } from "../core/api/model-deployment.js";
import type { Scaler, ScalerSpec } from "../core/api/scaler.js";
import { fieldsRead } from "../core/algorithms/reads.js";
import { samplingWindowsOf } from "../core/algorithms/windows.js";
import { explainSignalState } from "../core/signals/explain.js";
import { observeRole, staleAfterSeconds } from "../core/signals/observe.js";
import { mergeHistograms, p95Milliseconds } from "../core/signals/histogram.js";
import type { HistogramWindow, PodSample, PodWindowRates, RoleObservation } from "../core/signals/types.js";
import { exitCodes, type CliIo, type Command } from "./io.js";
import { parseYamlDocuments } from "./yaml-documents.js";

/** The settings observe shares with the controller: same flags, variables and defaults. */
const sharedSettings = [
  ...prometheusSettingNames,
  "kubeconfig",
  "kubeTimeoutMs",
  "targetApiVersion",
  "engineScrapeInterval",
] as const satisfies readonly SettingName[];

const ownFlags: readonly CommandFlag[] = [
  { flag: "--filename", short: "f", value: "FILE", help: "the ModelDeploymentScaler, from a file" },
  { flag: "--scaler", value: "NAMESPACE/NAME", help: "the ModelDeploymentScaler, read from the cluster" },
  {
    flag: "--target",
    short: "t",
    value: "FILE",
    help: "its ModelDeployment from a file (no cluster needed); without it the target is read from the cluster",
  },
  { flag: "--output", short: "o", value: "FORMAT", help: "table (default), json or yaml" },
];

export const observeUsage = [
  "usage: mds-scaler observe --prometheus-url <url> (-f <scaler.yaml> | --scaler <namespace>/<name>)",
  "                          [--target <deployment.yaml>] [-o table|json|yaml] [flags]",
  "",
  "Its own flags, then the controller's settings it shares (flags or variables, flags win):",
  describeSettings(sharedSettings, ownFlags),
].join("\n");

type OutputFormat = "table" | "json" | "yaml";

type ObserveSettings = Settings<(typeof sharedSettings)[number]>;

export interface ObserveArgs extends ObserveSettings {
  /** The scaler: a file, or `namespace/name` in the cluster. */
  readonly scaler: { readonly file: string } | { readonly namespace: string; readonly name: string };
  readonly target?: string;
  readonly output: OutputFormat;
}

const scalerRefPattern = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?)\/([a-z0-9]([-.a-z0-9]*[a-z0-9])?)$/;

/** The parsed flags, "" for --help, or the first problem. */
function parseObserveArgs(
  args: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): ObserveArgs | string {
  let read: ReturnType<typeof readSettings<(typeof sharedSettings)[number]>>;
  try {
    read = readSettings(sharedSettings, args, env, ownFlags);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems.join("\n");
    throw error;
  }
  if (read.help) return "";
  const labels = labelProblems(read.values, read.given);
  if (labels.length > 0) return labels.join("\n");
  const { filename: file, scaler: scalerRef, target, output = "table" } = read.own;
  if ((file === undefined) === (scalerRef === undefined)) {
    return "give the scaler with exactly one of -f <scaler.yaml> and --scaler <namespace>/<name>";
  }
  const ref = scalerRefPattern.exec(scalerRef ?? "");
  if (scalerRef !== undefined && !ref) return `--scaler: ${JSON.stringify(scalerRef)} is not <namespace>/<name>`;
  const scaler = file !== undefined ? { file } : { namespace: ref?.[1] ?? "", name: ref?.[3] ?? "" };
  if (output !== "table" && output !== "json" && output !== "yaml") {
    return `--output: ${JSON.stringify(output)} is not one of table, json, yaml`;
  }
  return { ...read.values, scaler, ...(target === undefined ? {} : { target }), output };
}

function readOne(path: string, io: CliIo, what: string): unknown {
  let text: string;
  try {
    text = io.readFile(path);
  } catch (error) {
    throw new Error(`cannot read ${path}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const values = parseYamlDocuments(text, path);
  if (typeof values === "string") throw new Error(values);
  if (values.length !== 1) throw new Error(`${path}: expected one ${what}, found ${values.length} documents`);
  return values[0];
}

/**
 * A histogram delta as printed: its count, sum, the bucket boundaries it has and this pod's own p95.
 * Under the `roles` and `native` plans a pod's buckets are not asked (they are summed by role, or not read where
 * the role's latency does not need them): a p95 from no buckets would be the mean, which is not what
 * the role reads, so it is left out.
 */
function histogramView(h: HistogramWindow | undefined, bucketsPerPod: boolean): Record<string, unknown> | undefined {
  if (h === undefined) return undefined;
  // Under `native` a pod's sum is not asked: its role's native sum carries it.
  const sum = h.sum === undefined ? { sumSeconds: "none per pod" } : { sumSeconds: h.sum };
  if (!bucketsPerPod && h.buckets.length === 0) return { count: h.count, ...sum, buckets: "none per pod" };
  const p95 = p95Milliseconds(mergeHistograms([h]));
  return { count: h.count, ...sum, buckets: h.buckets.length, ...(p95 === undefined ? {} : { p95Ms: p95 }) };
}

function windowView(rates: PodWindowRates, bucketsPerPod: boolean): Record<string, unknown> {
  const { ttftSeconds, itlSeconds, queueTimeSeconds, ...rest } = rates;
  return {
    ...rest,
    ttftSeconds: histogramView(ttftSeconds, bucketsPerPod),
    itlSeconds: histogramView(itlSeconds, bucketsPerPod),
    queueTimeSeconds: histogramView(queueTimeSeconds, bucketsPerPod),
  };
}

function podView(pod: PodSample, nowMs: number, staleAfter: number, bucketsPerPod: boolean): Record<string, unknown> {
  const { windows, lastSampleUnixSeconds, ...gauges } = pod;
  const age = nowMs / 1000 - lastSampleUnixSeconds;
  return {
    ...gauges,
    lastSample: new Date(lastSampleUnixSeconds * 1000).toISOString(),
    ageSeconds: Math.round(age * 1000) / 1000,
    fresh: age <= staleAfter,
    stable: windowView(windows.stable, bucketsPerPod),
    panic: windowView(windows.panic, bucketsPerPod),
  };
}

export interface ObserveReport {
  readonly prometheusUrl: string;
  readonly evaluatedAt: string;
  readonly scaler: string;
  readonly target: string;
  readonly stableWindowSeconds: number;
  readonly panicWindowSeconds: number;
  readonly staleAfterSeconds: number;
  readonly warnings: readonly string[];
  /**
   * What the pass notes that is not a warning: under `native`, each role whose native histogram sum
   * Prometheus did not answer (its classic buckets read instead), and Prometheus' info annotations.
   */
  readonly notes: readonly string[];
  readonly roles: readonly {
    readonly role: string;
    readonly kind: string;
    readonly signalState: string;
    readonly why: string;
    readonly readyReplicasFrom: "status" | "spec";
    readonly observation: RoleObservation;
    readonly pods: readonly Record<string, unknown>[];
  }[];
}

/** Ready replicas from the target's status; a file without status gives the spec's count, said so in the report. */
function readyOf(target: ModelDeployment, role: string): { ready: number; from: "status" | "spec" } {
  const status = target.status?.roles?.find((r) => r.name === role)?.ready;
  if (status !== undefined) return { ready: status, from: "status" };
  return { ready: target.spec.roles.find((r) => r.name === role)?.replicas ?? 0, from: "spec" };
}

/**
 * The target, and the scaler validated against it, or an error naming what is wrong; with the engines' scrape
 * interval, the validation's warnings too (a window shorter than two scrapes reads nothing).
 */
export function scalerAndTarget(
  scalerInput: unknown,
  targetInput: unknown,
  engineScrapeIntervalSeconds?: number,
): {
  target: ModelDeployment;
  spec: ScalerSpec;
  metadata: Scaler["metadata"];
  namespace: string;
  warnings: readonly string[];
} {
  const parsedTarget = parseTarget(targetInput);
  if (!parsedTarget.ok) {
    throw new Error(
      `target: not a ModelDeployment the scaler can read\n${parsedTarget.problems.map(formatProblem).join("\n")}`,
    );
  }
  const target = parsedTarget.value;
  const validated = validateScaler(scalerInput, {
    target,
    ...(engineScrapeIntervalSeconds === undefined ? {} : { engineScrapeIntervalSeconds }),
  });
  if (!validated.ok) throw new Error(`scaler: ${validated.problems.map(formatProblem).join("\n")}`);
  // The defaulted type omits `spec` from a loose object, which loses the metadata's type.
  const metadata = (validated.value as unknown as Scaler).metadata;
  const namespace = metadata.namespace ?? target.metadata.namespace ?? "default";
  return { target, spec: validated.value.spec, metadata, namespace, warnings: validated.warnings.map(formatProblem) };
}

export async function observeOnce(
  args: ObserveSettings,
  scalerInput: unknown,
  targetInput: unknown,
  nowMs: number,
): Promise<ObserveReport> {
  const { target, spec, metadata, namespace, warnings } = scalerAndTarget(
    scalerInput,
    targetInput,
    engineScrapeIntervalSeconds(args.engineScrapeInterval),
  );
  const windows = samplingWindowsOf(spec);
  const input: ScalerSamplingInput = {
    key: `${namespace}/${metadata.name}`,
    namespace,
    deployment: spec.targetRef.name,
    roles: target.spec.roles.map((r) => r.name),
    ...windows,
    intervalSeconds: spec.sampling.intervalSeconds,
  };
  const source = new PrometheusSignalSource(prometheusClientOf(args), prometheusSignalConfigOf(args));
  const pass = await source.sample([input], nowMs);
  const staleAfter = staleAfterSeconds(spec.sampling.intervalSeconds);
  const sampled = pass.scalers.get(input.key);
  return {
    prometheusUrl: args.prometheusUrl,
    evaluatedAt: new Date(nowMs).toISOString(),
    scaler: input.key,
    target: `${namespace}/${spec.targetRef.name}`,
    ...windows,
    staleAfterSeconds: staleAfter,
    warnings: [...warnings, ...pass.warnings],
    notes: [
      ...pass.nativeSumsMissing.map((r) => `no native histogram sum, the classic buckets read instead: ${r}`),
      ...pass.infos.map((i) => `Prometheus info: ${i}`),
    ],
    roles: target.spec.roles.map((role) => {
      const samples = sampled?.get(role.name) ?? { pods: [], queryFailed: { reason: "not sampled" } };
      const { ready, from } = readyOf(target, role.name);
      const observation = observeRole({
        kind: role.kind,
        samples,
        readyReplicas: ready,
        nowMs,
        staleAfterSeconds: staleAfter,
        reads: fieldsRead(spec, role),
      });
      return {
        role: role.name,
        kind: role.kind,
        signalState: observation.signalState,
        why: explainSignalState({ samples, observation, nowMs, staleAfterSeconds: staleAfter }),
        readyReplicasFrom: from,
        observation,
        pods: samples.pods.map((pod) => podView(pod, nowMs, staleAfter, !sumsByRole(args.prometheusQueries))),
      };
    }),
  };
}

/** JSON and YAML cannot hold Infinity (an open `+Inf` bucket bound): it prints as "+Inf". */
function printable(report: ObserveReport): unknown {
  return JSON.parse(JSON.stringify(report, (_key, value: unknown) => (value === Infinity ? "+Inf" : value)));
}

function formatValue(value: unknown): string {
  if (typeof value === "number") return Number.isInteger(value) ? String(value) : value.toPrecision(6);
  if (value === undefined) return "-";
  if (typeof value === "object" && value !== null) return JSON.stringify(value);
  return String(value);
}

const observationRows: readonly (readonly [keyof RoleObservation, string])[] = [
  ["runningRequests", "running requests"],
  ["waitingRequests", "waiting requests"],
  ["promptTokensPerSecond", "prompt tok/s (cache-missed), stable"],
  ["panicPromptTokensPerSecond", "prompt tok/s (cache-missed), panic"],
  ["generationTokensPerSecond", "generation tok/s, stable"],
  ["panicGenerationTokensPerSecond", "generation tok/s, panic"],
  ["kvCacheUsage", "KV cache usage"],
  ["ttftMilliseconds", "TTFT p95 ms (bucket boundary)"],
  ["ttftBracket", "TTFT p95 bracket ms"],
  ["itlMilliseconds", "ITL p95 ms (bucket boundary)"],
  ["itlBracket", "ITL p95 bracket ms"],
  ["queueTimeMilliseconds", "queue time p95 ms (bucket boundary)"],
  ["queueTimeBracket", "queue time p95 bracket ms"],
  ["queueTimeExport", "pods exporting queue time"],
];

function table(report: ObserveReport): string {
  const lines = [
    `scaler ${report.scaler} → target ${report.target}`,
    `Prometheus ${report.prometheusUrl} at ${report.evaluatedAt}; windows stable ${report.stableWindowSeconds} s, panic ${report.panicWindowSeconds} s; stale after ${report.staleAfterSeconds} s`,
    ...report.warnings.map((w) => `warning: ${w}`),
    ...report.notes.map((n) => `note: ${n}`),
  ];
  for (const role of report.roles) {
    const o = role.observation;
    lines.push(
      "",
      `ROLE ${role.role} (${role.kind}): ${o.signalState}, ${o.sampledReplicas} of ${o.readyReplicas} ready replicas sampled (ready from ${role.readyReplicasFrom})`,
      `  why: ${role.why}`,
    );
    for (const [field, label] of observationRows) lines.push(`  ${label.padEnd(40)}${formatValue(o[field])}`);
    for (const [signal, bySeries] of Object.entries(o.seriesUsed ?? {})) {
      const list = Object.entries(bySeries).map(([series, pods]) => `${series} (${pods} pod${pods === 1 ? "" : "s"})`);
      lines.push(`  ${`series: ${signal}`.padEnd(40)}${list.join(", ")}`);
    }
    for (const pod of role.pods) {
      lines.push(`  POD ${formatValue(pod["pod"])} (${formatValue(pod["engine"])})`);
      for (const [key, value] of Object.entries(pod)) {
        if (key === "pod" || key === "engine") continue;
        if (key === "stable" || key === "panic") {
          for (const [field, v] of Object.entries(value as Record<string, unknown>)) {
            if (v !== undefined) lines.push(`    ${`${key}.${field}`.padEnd(38)}${formatValue(v)}`);
          }
        } else lines.push(`    ${key.padEnd(38)}${formatValue(value)}`);
      }
    }
  }
  return `${lines.join("\n")}\n`;
}

/** The cluster's objects, through the controller's own Kubernetes adapter, from the controller's configuration sources. */
function clusterFrom(
  args: Pick<ObjectSources, "kubeconfig" | "timeoutMs" | "targetApiVersion">,
  env: Readonly<Record<string, string | undefined>>,
): KubeResources {
  return new KubeResources(clusterConfigFrom({ kubeconfig: args.kubeconfig ?? "" }, env).kubeConfig, {
    timeoutMs: args.timeoutMs,
    targetResource: modelDeploymentResource(args.targetApiVersion ?? "v1"),
  });
}

/** What the objects are read from: files, or the cluster (`--kubeconfig`, else as the controller finds it). */
export interface ObjectSources {
  readonly scaler: ObserveArgs["scaler"];
  readonly target?: string;
  readonly kubeconfig?: string;
  /** Budget of each API call. */
  readonly timeoutMs: number;
  /** The ModelDeployment's API version read from the cluster (the controller's --target-api-version); default v1. */
  readonly targetApiVersion?: string;
}

/** The scaler and target, each from its file or from the cluster. */
export async function loadObjects(
  args: ObjectSources,
  io: CliIo,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<{ scaler: unknown; target: unknown }> {
  let cluster: KubeResources | undefined;
  const api = (): KubeResources => (cluster ??= clusterFrom(args, env));
  let scaler: unknown;
  if ("file" in args.scaler) scaler = readOne(args.scaler.file, io, "ModelDeploymentScaler");
  else {
    const { namespace, name } = args.scaler;
    scaler = await api().getScaler(namespace, name);
    if (scaler === undefined) throw new Error(`--scaler: ModelDeploymentScaler ${namespace}/${name} not found`);
  }
  if (args.target !== undefined) return { scaler, target: readOne(args.target, io, "ModelDeployment") };
  const parsed = validateScaler(scaler);
  if (!parsed.ok) throw new Error(`scaler: ${parsed.problems.map(formatProblem).join("\n")}`);
  const metadata = (parsed.value as unknown as Scaler).metadata;
  const namespace = metadata.namespace ?? "default";
  const name = parsed.value.spec.targetRef.name;
  const target = await api().getTarget(namespace, name);
  if (target === undefined) {
    const { group, version } = api().targetResource;
    throw new Error(`target: ModelDeployment ${namespace}/${name} (${group}/${version}) not found in the cluster`);
  }
  return { scaler, target };
}

export async function runObserve(
  args: readonly string[],
  io: CliIo,
  env: Readonly<Record<string, string | undefined>>,
  nowMs: () => number = Date.now,
): Promise<number> {
  const parsed = parseObserveArgs(args, env);
  if (typeof parsed === "string") {
    io.stderr(parsed === "" ? `${observeUsage}\n` : `${parsed}\n${observeUsage}\n`);
    return parsed === "" ? exitCodes.ok : exitCodes.usage;
  }
  let report: ObserveReport;
  try {
    const { scaler, target } = await loadObjects({ ...parsed, timeoutMs: parsed.kubeTimeoutMs }, io, env);
    report = await observeOnce(parsed, scaler, target, nowMs());
  } catch (error) {
    io.stderr(`${error instanceof Error ? error.message : String(error)}\n`);
    return exitCodes.invalid;
  }
  if (parsed.output === "json") io.stdout(`${JSON.stringify(printable(report), null, 2)}\n`);
  else if (parsed.output === "yaml") io.stdout(stringify(printable(report), { lineWidth: 0 }));
  else io.stdout(table(report));
  return exitCodes.ok;
}

export const observeCommand: Command = {
  summary: "print what the scaler sees: one sampling pass per role and pod, with series, coverage and state",
  usage: observeUsage,
  // Like the controller, observe reads its shared settings from the environment too.
  run: (args, io) => runObserve(args, io, process.env),
};
