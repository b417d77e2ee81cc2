/**
 * Controller configuration from flags and the environment: the only place
 * that reads either. Parsed once at start; every problem names the setting
 * (flag and variable) and the value it got.
 */
import { defaultLatencyGuardReading, latencyGuardReadings } from "../core/algorithms/ttft-reading.js";
import { z } from "zod";
import type { PrometheusSignalConfig } from "../adapters/prometheus/config.js";

interface Setting {
  readonly flag: string;
  readonly env: string;
  readonly help: string;
}

/** Each setting once: its flag, its variable, its schema (with the default). */
const settings = {
  prometheusUrl: {
    flag: "--prometheus-url",
    env: "MDS_PROMETHEUS_URL",
    help: "Prometheus base URL, e.g. http://prometheus-operated.monitoring:9090.",
  },
  prometheusTimeoutMs: {
    flag: "--prometheus-timeout-ms",
    env: "MDS_PROMETHEUS_TIMEOUT_MS",
    help: "Timeout of one PromQL query, milliseconds.",
  },
  metricSeparator: {
    flag: "--metric-separator",
    env: "MDS_METRIC_SEPARATOR",
    help: "Separator after the engine prefix: ':' (vllm:...) or '_' (vllm_...).",
  },
  namespaceLabel: {
    flag: "--label-namespace",
    env: "MDS_LABEL_NAMESPACE",
    help: "Prometheus label holding the pod's namespace.",
  },
  podLabel: { flag: "--label-pod", env: "MDS_LABEL_POD", help: "Prometheus label holding the pod name." },
  deploymentLabel: {
    flag: "--label-deployment",
    env: "MDS_LABEL_DEPLOYMENT",
    help: "Prometheus label holding the ModelDeployment name.",
  },
  roleLabel: { flag: "--label-role", env: "MDS_LABEL_ROLE", help: "Prometheus label holding the role name." },
  watchNamespace: { flag: "--namespace", env: "MDS_NAMESPACE", help: "Namespace to watch; empty watches all." },
  kubeconfig: {
    flag: "--kubeconfig",
    env: "KUBECONFIG",
    help: "Kubeconfig path (several separated by ':'); when empty: in-cluster if KUBERNETES_SERVICE_HOST is set, else ~/.kube/config; none found stops the start.",
  },
  kubeTimeoutMs: {
    flag: "--kube-timeout-ms",
    env: "MDS_KUBE_TIMEOUT_MS",
    help: "Timeout of one Kubernetes API call, milliseconds.",
  },
  targetApiVersion: {
    flag: "--target-api-version",
    env: "MDS_TARGET_API_VERSION",
    help: "API version of ModelDeployment objects.",
  },
  metricsAddress: {
    flag: "--metrics-address",
    env: "MDS_METRICS_ADDRESS",
    help: "host:port serving /metrics, /healthz and /readyz.",
  },
  webhookAddress: {
    flag: "--webhook-address",
    env: "MDS_WEBHOOK_ADDRESS",
    help: "host:port of the HTTPS admission webhook server; empty disables it.",
  },
  externalMetricsAddress: {
    flag: "--external-metrics-address",
    env: "MDS_EXTERNAL_METRICS_ADDRESS",
    help: "host:port of the HTTPS external metrics API (external.metrics.k8s.io/v1beta1) the API server's aggregator calls; empty disables it. Uses the webhook certificate settings.",
  },
  externalMetricsApiService: {
    flag: "--external-metrics-api-service",
    env: "MDS_EXTERNAL_METRICS_API_SERVICE",
    help: "APIService (e.g. v1beta1.external.metrics.k8s.io) that receives the generated CA bundle; empty skips it.",
  },
  tickMs: {
    flag: "--tick-ms",
    env: "MDS_TICK_MS",
    help: "How often the controller looks for due scalers, milliseconds.",
  },
  podName: {
    flag: "--pod-name",
    env: "MDS_POD_NAME",
    help: "This replica's identity in the leader Lease; empty uses the host name.",
  },
  podNamespace: {
    flag: "--pod-namespace",
    env: "MDS_POD_NAMESPACE",
    help: "Namespace of the leader Lease and the webhook certificate Secret.",
  },
  leaseName: {
    flag: "--lease-name",
    env: "MDS_LEASE_NAME",
    help: "coordination.k8s.io Lease the replicas elect a leader with; empty: this replica always leads.",
  },
  leaseDurationSeconds: {
    flag: "--lease-duration-seconds",
    env: "MDS_LEASE_DURATION_SECONDS",
    help: "Seconds a silent leader keeps the Lease before another replica takes over.",
  },
  leaseRenewDeadlineMs: {
    flag: "--lease-renew-deadline-ms",
    env: "MDS_LEASE_RENEW_DEADLINE_MS",
    help: "How long a leader keeps writing after the start of its last successful renewal, by a monotonic clock, milliseconds; with --kube-timeout-ms it must fit in the lease duration.",
  },
  leaseRetryMs: {
    flag: "--lease-retry-ms",
    env: "MDS_LEASE_RETRY_MS",
    help: "How often the leader renews and the others check the Lease, milliseconds.",
  },
  controllerIdentity: {
    flag: "--controller-identity",
    env: "MDS_CONTROLLER_IDENTITY",
    help: "Username of the controller's own API requests, trusted by the binding fence; empty asks the API server (SelfSubjectReview).",
  },
  webhookService: {
    flag: "--webhook-service",
    env: "MDS_WEBHOOK_SERVICE",
    help: "Service name.namespace.svc the API server calls the webhooks at; the generated certificate covers it.",
  },
  webhookCertHosts: {
    flag: "--webhook-cert-hosts",
    env: "MDS_WEBHOOK_CERT_HOSTS",
    help: "Extra comma-separated DNS names or IP addresses for the generated certificate.",
  },
  webhookTlsSecret: {
    flag: "--webhook-tls-secret",
    env: "MDS_WEBHOOK_TLS_SECRET",
    help: "Secret (in the pod namespace) holding the generated serving certificate (webhooks, external metrics) shared by all replicas.",
  },
  webhookCertDir: {
    flag: "--webhook-cert-dir",
    env: "MDS_WEBHOOK_CERT_DIR",
    help: "Directory with tls.crt and tls.key (cert-manager) for the HTTPS servers; replaces the generated certificate.",
  },
  validatingWebhookConfiguration: {
    flag: "--validating-webhook-configuration",
    env: "MDS_VALIDATING_WEBHOOK_CONFIGURATION",
    help: "ValidatingWebhookConfiguration that receives the generated CA bundle; empty skips it.",
  },
  mutatingWebhookConfiguration: {
    flag: "--mutating-webhook-configuration",
    env: "MDS_MUTATING_WEBHOOK_CONFIGURATION",
    help: "MutatingWebhookConfiguration that receives the generated CA bundle; empty skips it.",
  },
  webhookTimeoutMs: {
    flag: "--webhook-timeout-ms",
    env: "MDS_WEBHOOK_TIMEOUT_MS",
    help: "Deadline of one admission answer, milliseconds; keep it below the configurations' timeoutSeconds.",
  },
  webhookCertCheckSeconds: {
    flag: "--webhook-cert-check-seconds",
    env: "MDS_WEBHOOK_CERT_CHECK_SECONDS",
    help: "How often the serving certificate is checked: renewed or rotated in the Secret and reloaded without a restart, or re-read from --webhook-cert-dir.",
  },
  webhookMaxConcurrent: {
    flag: "--webhook-max-concurrent",
    env: "MDS_WEBHOOK_MAX_CONCURRENT",
    help: "Admission reviews one replica reads and decides at once; each may hold up to 7 MiB of body.",
  },
  webhookMaxQueued: {
    flag: "--webhook-max-queued",
    env: "MDS_WEBHOOK_MAX_QUEUED",
    help: "Admission reviews waiting, unread, for a slot; beyond this, or after 2 s of waiting, a review is refused with HTTP 429.",
  },
  latencyGuardReading: {
    flag: "--latency-guard-reading",
    env: "MDS_LATENCY_GUARD_READING",
    help: "How the latency guard reads TTFT: literal (as the specification words it) or queueing (a breach holds and grows only when the engines' queue time is a material part of it; literal where no pod exports queue time).",
  },
  logLevel: { flag: "--log-level", env: "MDS_LOG_LEVEL", help: "debug, info, warn or error." },
} as const satisfies Record<string, Setting>;

type SettingName = keyof typeof settings;

const address = z.string().regex(/^[^:\s]*:\d{1,5}$/, "must be host:port, e.g. :8080 or 0.0.0.0:8080");
const positiveInt = (min: number, max: number) => z.coerce.number().int().min(min).max(max);
const labelName = z.string().regex(/^[a-zA-Z_][a-zA-Z0-9_]*$/, "must be a Prometheus label name");

export const ConfigSchema = z.object({
  prometheusUrl: z.url({ protocol: /^https?$/, error: "must be an http(s) URL" }),
  prometheusTimeoutMs: positiveInt(100, 120_000).default(5_000),
  metricSeparator: z.enum([":", "_"]).default(":"),
  namespaceLabel: labelName.default("namespace"),
  podLabel: labelName.default("pod"),
  deploymentLabel: labelName.default("app_kubernetes_io_instance"),
  roleLabel: labelName.default("app_kubernetes_io_component"),
  watchNamespace: z.string().default(""),
  kubeconfig: z.string().default(""),
  kubeTimeoutMs: positiveInt(100, 120_000).default(10_000),
  targetApiVersion: z
    .string()
    .regex(/^v\d+((alpha|beta)\d+)?$/, "must be a version such as v1 or v1alpha1")
    .default("v1"),
  metricsAddress: address.default(":8080"),
  webhookAddress: z.union([z.literal(""), address]).default(""),
  externalMetricsAddress: z.union([z.literal(""), address]).default(""),
  externalMetricsApiService: z.string().default(""),
  tickMs: positiveInt(100, 60_000).default(1_000),
  podName: z.string().default(""),
  podNamespace: z.string().default("default"),
  leaseName: z.string().default(""),
  leaseDurationSeconds: positiveInt(1, 300).default(20),
  leaseRenewDeadlineMs: positiveInt(100, 300_000).default(8_000),
  leaseRetryMs: positiveInt(100, 60_000).default(2_000),
  controllerIdentity: z.string().default(""),
  webhookService: z.string().default(""),
  webhookCertHosts: z.string().default(""),
  webhookTlsSecret: z.string().default(""),
  webhookCertDir: z.string().default(""),
  validatingWebhookConfiguration: z.string().default(""),
  mutatingWebhookConfiguration: z.string().default(""),
  webhookTimeoutMs: positiveInt(500, 29_000).default(8_000),
  webhookCertCheckSeconds: positiveInt(1, 3600).default(30),
  webhookMaxConcurrent: positiveInt(1, 256).default(8),
  webhookMaxQueued: positiveInt(0, 4096).default(64),
  latencyGuardReading: z.enum(latencyGuardReadings).default(defaultLatencyGuardReading),
  logLevel: z.enum(["debug", "info", "warn", "error"]).default("info"),
});

// Every setting has a schema and every schema a setting.
const _sameKeys: Record<SettingName, unknown> = ConfigSchema.shape;
void _sameKeys;

export type Config = Readonly<z.output<typeof ConfigSchema>>;

export class ConfigError extends Error {
  override readonly name = "ConfigError";
  constructor(readonly problems: readonly string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
  }
}

/** Flags win over variables; unknown flags are errors, not ignored. */
export function loadConfig(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): Config {
  const raw: Partial<Record<SettingName, string>> = {};
  const problems: string[] = [];
  for (const [name, s] of Object.entries(settings) as [SettingName, Setting][]) {
    const value = env[s.env];
    if (value !== undefined && value !== "") raw[name] = value;
  }
  const byFlag = new Map<string, SettingName>(
    Object.entries(settings).map(([name, s]) => [s.flag, name as SettingName]),
  );
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? "";
    const [flag, inline] = arg.includes("=")
      ? [arg.slice(0, arg.indexOf("=")), arg.slice(arg.indexOf("=") + 1)]
      : [arg, undefined];
    const name = byFlag.get(flag);
    if (name === undefined) {
      problems.push(`${arg}: unknown flag (known: ${[...byFlag.keys()].join(", ")})`);
      continue;
    }
    const value = inline ?? argv[++i];
    if (value === undefined) problems.push(`${flag}: needs a value`);
    else raw[name] = value;
  }
  const parsed = ConfigSchema.safeParse(raw);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const name = issue.path[0] as SettingName;
      const s = settings[name];
      const got = raw[name];
      problems.push(`${s.flag} (${s.env}) = ${got === undefined ? "<unset>" : JSON.stringify(got)}: ${issue.message}`);
    }
  }
  if (problems.length > 0 || !parsed.success) throw new ConfigError(problems);
  const timing = leaseTimingProblems(parsed.data, raw);
  if (timing.length > 0) throw new ConfigError(timing);
  return Object.freeze(parsed.data);
}

function named(name: SettingName, config: Config, raw: Partial<Record<SettingName, string>>): string {
  const s = settings[name];
  return `${s.flag} (${s.env}) = ${String(config[name])}${raw[name] === undefined ? " (default)" : ""}`;
}

/**
 * At most one writer (docs/controller.md, Leadership): a leader writes until its renew deadline, and a
 * write sent just before it may take the whole Kubernetes call timeout to land; a follower takes over a
 * lease duration after it last saw a renewal. So the deadline plus the call timeout must fit in the lease,
 * and a renewal must be attempted at least once before the deadline.
 */
function leaseTimingProblems(config: Config, raw: Partial<Record<SettingName, string>>): string[] {
  if (config.leaseName === "") return [];
  const problems: string[] = [];
  if (!(config.leaseRenewDeadlineMs + config.kubeTimeoutMs < config.leaseDurationSeconds * 1000)) {
    problems.push(
      `${named("leaseRenewDeadlineMs", config, raw)} plus ${named("kubeTimeoutMs", config, raw)} must be less than ${named("leaseDurationSeconds", config, raw)} × 1000: otherwise a deposed leader's last write may land after another replica took over. Lower the deadline or the timeout, or lengthen the lease.`,
    );
  }
  if (!(config.leaseRetryMs < config.leaseRenewDeadlineMs)) {
    problems.push(
      `${named("leaseRetryMs", config, raw)} must be less than ${named("leaseRenewDeadlineMs", config, raw)}: the leader must try to renew before its deadline.`,
    );
  }
  return problems;
}

/** The settings that say where and how engine series are read: other commands take them as the controller does. */
export const prometheusSettingNames = [
  "prometheusUrl",
  "prometheusTimeoutMs",
  "metricSeparator",
  "namespaceLabel",
  "podLabel",
  "deploymentLabel",
  "roleLabel",
] as const satisfies readonly SettingName[];
export type PrometheusSettingName = (typeof prometheusSettingNames)[number];
export type PrometheusSettings = Pick<Config, PrometheusSettingName>;

/** Flag, help and default of each Prometheus setting, for another command's flag table. */
export function prometheusSettingFlags(): {
  name: PrometheusSettingName;
  flag: string;
  help: string;
  default?: string;
}[] {
  return prometheusSettingNames.map((name) => {
    const field = ConfigSchema.shape[name];
    const def = "defaultValue" in field.def ? String(field.def.defaultValue as string | number) : undefined;
    return {
      name,
      flag: settings[name].flag,
      help: settings[name].help,
      ...(def === undefined ? {} : { default: def }),
    };
  });
}

/** The Prometheus settings from flag values, checked by the controller's own schema; problems name the flag and value. */
export function parsePrometheusSettings(raw: Partial<Record<PrometheusSettingName, string>>): PrometheusSettings {
  const schema = ConfigSchema.pick(
    Object.fromEntries(prometheusSettingNames.map((n) => [n, true])) as Record<PrometheusSettingName, true>,
  );
  const parsed = schema.safeParse(raw);
  if (parsed.success) return parsed.data;
  throw new ConfigError(
    parsed.error.issues.map((issue) => {
      const name = issue.path[0] as PrometheusSettingName;
      const got = raw[name];
      return `${settings[name].flag} = ${got === undefined ? "<unset>" : JSON.stringify(got)}: ${issue.message}`;
    }),
  );
}

/** How the signal source finds engine series, from the settings. */
export function prometheusSignalConfigOf(config: PrometheusSettings): PrometheusSignalConfig {
  return {
    labels: {
      namespace: config.namespaceLabel,
      pod: config.podLabel,
      deployment: config.deploymentLabel,
      role: config.roleLabel,
    },
    metricNameSeparator: config.metricSeparator,
    queryTimeoutMs: config.prometheusTimeoutMs,
  };
}

/** The settings table for `--help` and the docs. */
export function describeSettings(): string {
  const shape = ConfigSchema.shape;
  return Object.entries(settings)
    .map(([name, s]) => {
      const field = shape[name as SettingName];
      const def =
        "def" in field && field.def !== undefined && "defaultValue" in field.def
          ? ` (default ${JSON.stringify(field.def.defaultValue)})`
          : "";
      return `  ${s.flag.padEnd(26)} ${s.env.padEnd(28)} ${s.help}${def}`;
    })
    .join("\n");
}
