/**
 * Every setting a command reads from its flags or the environment, once: its flag, its variable, its
 * schema (with the default) and its help. `controller` reads them all; `observe` reads the ones it
 * shares with the controller (Prometheus, labels, separator, cluster, timeouts) under the same names,
 * variables and defaults. `--help` and the flag table of docs/controller.md are generated from here.
 */
import { parseArgs, type ParseArgsOptionsConfig } from "node:util";
import { z } from "zod";
import { defaultLabelNames, labelNameProblem } from "../adapters/prometheus/config.js";
import { durationSeconds } from "../adapters/prometheus/duration.js";
import { parseLabelMatchers } from "../adapters/prometheus/matchers.js";
import { defaultQueryPlan, queryPlans } from "../adapters/prometheus/queries.js";
import { defaultLatencyGuardReading, latencyGuardReadings } from "../core/algorithms/ttft-reading.js";

interface Setting {
  readonly flag: `--${string}`;
  readonly env: string;
  readonly help: string;
  readonly schema: z.ZodType;
}

const address = z.string().regex(/^[^:\s]*:\d{1,5}$/, "must be host:port, e.g. :8080 or 0.0.0.0:8080");
const optionalAddress = z.union([z.literal(""), address]);
const positiveInt = (min: number, max: number) => z.coerce.number().int().min(min).max(max);
/** The label rule is the Prometheus adapter's: one rule, checked here before anything is contacted. */
const labelName = z.string().superRefine((name, ctx) => {
  const problem = labelNameProblem(name);
  if (problem !== undefined) ctx.addIssue({ code: "custom", message: problem });
});

/** What `--engine-scrape-interval` must be, in the words of every error that refuses it (here and in the CLI's flags). */
export const engineScrapeIntervalForm = "a Prometheus duration above zero, e.g. 15s or 1m";

/** The chart's engine PodMonitor interval: `--engine-scrape-interval`'s default, here and in `validate`. */
export const defaultEngineScrapeInterval = "15s";

/** `--engine-scrape-interval` in seconds; its schema has already refused a text that is not a duration. */
export function engineScrapeIntervalSeconds(text: string): number {
  const seconds = durationSeconds(text);
  if (seconds === undefined) throw new Error(`--engine-scrape-interval: ${JSON.stringify(text)} is not a duration`);
  return seconds;
}

export const settings = {
  prometheusUrl: {
    flag: "--prometheus-url",
    env: "MDS_PROMETHEUS_URL",
    help: "Prometheus base URL, e.g. http://prometheus-operated.monitoring:9090.",
    schema: z.url({ protocol: /^https?$/, error: "must be an http(s) URL" }),
  },
  prometheusTimeoutMs: {
    flag: "--prometheus-timeout-ms",
    env: "MDS_PROMETHEUS_TIMEOUT_MS",
    help: "Timeout of one PromQL query, milliseconds.",
    schema: positiveInt(100, 120_000).default(5_000),
  },
  prometheusHeadersFile: {
    flag: "--prometheus-headers-file",
    env: "MDS_PROMETHEUS_HEADERS_FILE",
    help: "A file of HTTP headers sent with every PromQL query, one 'Name: value' per line (e.g. X-Scope-OrgID for a multi-tenant store); mount it from a Secret. Values are never logged. Empty sends none.",
    schema: z.string().default(""),
  },
  prometheusQueries: {
    flag: "--prometheus-queries",
    env: "MDS_PROMETHEUS_QUERIES",
    help: "How a sampling pass asks Prometheus: 'parts' (one query per signal, run side by side), 'unions' (four queries, each a union of tagged parts), 'roles' (as 'parts', the latency histogram buckets summed by role, asked per pod again for the roles where that sum is not the pods' merge) or 'native' (as 'roles', the sums read from the native histograms a Prometheus 3 stores with convert_classic_histograms_to_nhcb, the classic series kept beside them, each pod's histogram sums left to its role's native sum; a role without them is read from its classic buckets summed by role, with its pods' sums). All read the same observations but where a native histogram's increase extrapolates otherwise or a pod's classic _sum series alone is missing (docs/prometheus-signals.md, \"The native plan\").",
    schema: z.enum(queryPlans, { error: `must be one of ${queryPlans.join(", ")}` }).default(defaultQueryPlan),
  },
  prometheusMatchers: {
    flag: "--prometheus-matchers",
    env: "MDS_PROMETHEUS_MATCHERS",
    help: 'Label matchers every engine query carries besides the scaler\'s namespace, deployment and role, in PromQL syntax, comma-separated: e.g. cluster="prod-eu" on a store that holds several clusters. Empty adds none.',
    schema: z
      .string()
      .default("")
      .superRefine((text, ctx) => {
        const parsed = parseLabelMatchers(text);
        if (!parsed.ok) ctx.addIssue({ code: "custom", message: parsed.problem });
      }),
  },
  metricSeparator: {
    flag: "--metric-separator",
    env: "MDS_METRIC_SEPARATOR",
    help: "Separator after the engine prefix: ':' (vllm:...) or '_' (vllm_...).",
    schema: z.enum([":", "_"], { error: "must be ':' or '_'" }).default(":"),
  },
  namespaceLabel: {
    flag: "--label-namespace",
    env: "MDS_LABEL_NAMESPACE",
    help: "Prometheus label holding the pod's namespace.",
    schema: labelName.default(defaultLabelNames.namespace),
  },
  podLabel: {
    flag: "--label-pod",
    env: "MDS_LABEL_POD",
    help: "Prometheus label holding the pod name.",
    schema: labelName.default(defaultLabelNames.pod),
  },
  deploymentLabel: {
    flag: "--label-deployment",
    env: "MDS_LABEL_DEPLOYMENT",
    help: "Prometheus label holding the ModelDeployment name.",
    schema: labelName.default(defaultLabelNames.deployment),
  },
  roleLabel: {
    flag: "--label-role",
    env: "MDS_LABEL_ROLE",
    help: "Prometheus label holding the role name.",
    schema: labelName.default(defaultLabelNames.role),
  },
  watchNamespace: {
    flag: "--namespace",
    env: "MDS_NAMESPACE",
    help: "Namespace to watch; empty watches all.",
    schema: z.string().default(""),
  },
  kubeconfig: {
    flag: "--kubeconfig",
    env: "KUBECONFIG",
    help: "Kubeconfig path (several separated by ':'); when empty: in-cluster if KUBERNETES_SERVICE_HOST is set, else ~/.kube/config; none found stops the start.",
    schema: z.string().default(""),
  },
  kubeTimeoutMs: {
    flag: "--kube-timeout-ms",
    env: "MDS_KUBE_TIMEOUT_MS",
    help: "Timeout of one Kubernetes API call, milliseconds.",
    schema: positiveInt(100, 120_000).default(10_000),
  },
  targetApiVersion: {
    flag: "--target-api-version",
    env: "MDS_TARGET_API_VERSION",
    help: "API version of ModelDeployment objects.",
    schema: z
      .string()
      .regex(/^v\d+((alpha|beta)\d+)?$/, "must be a version such as v1 or v1alpha1")
      .default("v1"),
  },
  metricsAddress: {
    flag: "--metrics-address",
    env: "MDS_METRICS_ADDRESS",
    help: "host:port serving /metrics, /healthz and /readyz.",
    schema: address.default(":8080"),
  },
  webhookAddress: {
    flag: "--webhook-address",
    env: "MDS_WEBHOOK_ADDRESS",
    help: "host:port of the HTTPS admission webhook server; empty disables it.",
    schema: optionalAddress.default(""),
  },
  externalMetricsAddress: {
    flag: "--external-metrics-address",
    env: "MDS_EXTERNAL_METRICS_ADDRESS",
    help: "host:port of the HTTPS external metrics API (external.metrics.k8s.io/v1beta1) the API server's aggregator calls; empty disables it. Uses the webhook certificate settings.",
    schema: optionalAddress.default(""),
  },
  externalMetricsApiService: {
    flag: "--external-metrics-api-service",
    env: "MDS_EXTERNAL_METRICS_API_SERVICE",
    help: "APIService (e.g. v1beta1.external.metrics.k8s.io) that receives the generated CA bundle; empty skips it.",
    schema: z.string().default(""),
  },
  tickMs: {
    flag: "--tick-ms",
    env: "MDS_TICK_MS",
    help: "How often the controller looks for due scalers, milliseconds.",
    schema: positiveInt(100, 60_000).default(1_000),
  },
  podName: {
    flag: "--pod-name",
    env: "MDS_POD_NAME",
    help: "This replica's identity in the leader Lease; empty uses the host name.",
    schema: z.string().default(""),
  },
  podNamespace: {
    flag: "--pod-namespace",
    env: "MDS_POD_NAMESPACE",
    help: "Namespace of the leader Lease and the webhook certificate Secret.",
    schema: z.string().default("default"),
  },
  leaseName: {
    flag: "--lease-name",
    env: "MDS_LEASE_NAME",
    help: "coordination.k8s.io Lease the replicas elect a leader with; empty: this replica always leads.",
    schema: z.string().default(""),
  },
  leaseDurationSeconds: {
    flag: "--lease-duration-seconds",
    env: "MDS_LEASE_DURATION_SECONDS",
    help: "Seconds a silent leader keeps the Lease before another replica takes over.",
    schema: positiveInt(1, 300).default(20),
  },
  leaseRenewDeadlineMs: {
    flag: "--lease-renew-deadline-ms",
    env: "MDS_LEASE_RENEW_DEADLINE_MS",
    help: "How long a leader keeps writing after the start of its last successful renewal, by a monotonic clock, milliseconds; with --kube-timeout-ms it must fit in the lease duration.",
    schema: positiveInt(100, 300_000).default(8_000),
  },
  leaseRetryMs: {
    flag: "--lease-retry-ms",
    env: "MDS_LEASE_RETRY_MS",
    help: "How often the leader renews and the others check the Lease, milliseconds.",
    schema: positiveInt(100, 60_000).default(2_000),
  },
  controllerIdentity: {
    flag: "--controller-identity",
    env: "MDS_CONTROLLER_IDENTITY",
    help: "Username of the controller's own API requests, trusted by the binding fence; empty asks the API server (SelfSubjectReview).",
    schema: z.string().default(""),
  },
  webhookService: {
    flag: "--webhook-service",
    env: "MDS_WEBHOOK_SERVICE",
    help: "Service name.namespace.svc the API server calls the webhooks at; the generated certificate covers it.",
    schema: z.string().default(""),
  },
  webhookCertHosts: {
    flag: "--webhook-cert-hosts",
    env: "MDS_WEBHOOK_CERT_HOSTS",
    help: "Extra comma-separated DNS names or IP addresses for the generated certificate.",
    schema: z.string().default(""),
  },
  webhookTlsSecret: {
    flag: "--webhook-tls-secret",
    env: "MDS_WEBHOOK_TLS_SECRET",
    help: "Secret (in the pod namespace) holding the generated serving certificate (webhooks, external metrics) shared by all replicas.",
    schema: z.string().default(""),
  },
  webhookCertDir: {
    flag: "--webhook-cert-dir",
    env: "MDS_WEBHOOK_CERT_DIR",
    help: "Directory with tls.crt and tls.key (cert-manager) for the HTTPS servers; replaces the generated certificate.",
    schema: z.string().default(""),
  },
  validatingWebhookConfiguration: {
    flag: "--validating-webhook-configuration",
    env: "MDS_VALIDATING_WEBHOOK_CONFIGURATION",
    help: "ValidatingWebhookConfiguration that receives the generated CA bundle; empty skips it.",
    schema: z.string().default(""),
  },
  mutatingWebhookConfiguration: {
    flag: "--mutating-webhook-configuration",
    env: "MDS_MUTATING_WEBHOOK_CONFIGURATION",
    help: "MutatingWebhookConfiguration that receives the generated CA bundle; empty skips it.",
    schema: z.string().default(""),
  },
  webhookTimeoutMs: {
    flag: "--webhook-timeout-ms",
    env: "MDS_WEBHOOK_TIMEOUT_MS",
    help: "Deadline of one admission answer, milliseconds; keep it below the configurations' timeoutSeconds.",
    schema: positiveInt(500, 29_000).default(8_000),
  },
  webhookCertCheckSeconds: {
    flag: "--webhook-cert-check-seconds",
    env: "MDS_WEBHOOK_CERT_CHECK_SECONDS",
    help: "How often the serving certificate is checked: renewed or rotated in the Secret and reloaded without a restart, or re-read from --webhook-cert-dir.",
    schema: positiveInt(1, 3600).default(30),
  },
  webhookMaxConcurrent: {
    flag: "--webhook-max-concurrent",
    env: "MDS_WEBHOOK_MAX_CONCURRENT",
    help: "Admission reviews one replica reads and decides at once; each may hold up to 7 MiB of body.",
    schema: positiveInt(1, 256).default(8),
  },
  webhookMaxQueued: {
    flag: "--webhook-max-queued",
    env: "MDS_WEBHOOK_MAX_QUEUED",
    help: "Admission reviews waiting, unread, for a slot; beyond this, or after 2 s of waiting, a review is refused with HTTP 429.",
    schema: positiveInt(0, 4096).default(64),
  },
  engineScrapeInterval: {
    flag: "--engine-scrape-interval",
    env: "MDS_ENGINE_SCRAPE_INTERVAL",
    help: "How often Prometheus scrapes the engines, a Prometheus duration (the chart passes its engine PodMonitor's interval). Admission warns about a scaler whose stable or panic window is shorter than two such scrapes: that window never holds the two samples a rate needs, so it reads nothing; the scaler's MetricsReady condition names such a window on every pass that sets it.",
    schema: z
      .string()
      .default(defaultEngineScrapeInterval)
      .refine((text) => durationSeconds(text) !== undefined, `must be ${engineScrapeIntervalForm}`),
  },
  latencyGuardReading: {
    flag: "--latency-guard-reading",
    env: "MDS_LATENCY_GUARD_READING",
    help: "How the latency guard reads TTFT: queueing (a breach holds and grows only when the engines' queue time is a material part of it; literal where not every pod exports queue time) or literal (as the specification words it).",
    schema: z.enum(latencyGuardReadings).default(defaultLatencyGuardReading),
  },
  logLevel: {
    flag: "--log-level",
    env: "MDS_LOG_LEVEL",
    help: "debug, info, warn or error.",
    schema: z.enum(["debug", "info", "warn", "error"]).default("info"),
  },
} as const satisfies Record<string, Setting>;

export type SettingName = keyof typeof settings;
type Shape<K extends SettingName> = { [N in K]: (typeof settings)[N]["schema"] };
export type Settings<K extends SettingName> = Readonly<z.output<z.ZodObject<Shape<K>>>>;

/** The zod object of some settings, keyed by setting name. */
export function settingsSchema<K extends SettingName>(names: readonly K[]): z.ZodObject<Shape<K>> {
  return z.object(Object.fromEntries(names.map((name) => [name, settings[name].schema])) as Shape<K>);
}

export class ConfigError extends Error {
  override readonly name = "ConfigError";
  constructor(readonly problems: readonly string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
  }
}

/**
 * A command's own flag beside the shared settings (files, output format): read from the command line only.
 * `observe` passes its own to `readSettings`; the commands without shared settings read theirs through
 * src/cli/flags.ts. Both build their `parseArgs` options and `--help` lines here.
 */
export interface CommandFlag {
  readonly flag: `--${string}`;
  readonly short?: string;
  /** The value's placeholder in the help; "" for a switch, which takes no value. */
  readonly value: string;
  /** Repeatable: every occurrence is kept, in order. */
  readonly multiple?: boolean;
  /** The default, as the help shows it. */
  readonly default?: string;
  readonly help: string;
}

/** The `node:util` `parseArgs` options of a command's own flags. */
export function commandFlagOptions(own: readonly CommandFlag[]): ParseArgsOptionsConfig {
  return Object.fromEntries(
    own.map((o) => [
      o.flag.slice(2),
      {
        type: o.value === "" ? ("boolean" as const) : ("string" as const),
        ...(o.short === undefined ? {} : { short: o.short }),
        ...(o.multiple === true ? { multiple: true } : {}),
      },
    ]),
  );
}

/** The `--help` lines of a command's own flags: `-f, --filename FILE   help (default ...)`. */
export function describeCommandFlags(own: readonly CommandFlag[]): string[] {
  return own.map((o) => {
    const flag = `${o.short === undefined ? "" : `-${o.short}, `}${o.flag}${o.value === "" ? "" : ` ${o.value}`}`;
    return `  ${flag.padEnd(56)} ${o.help}${o.default === undefined ? "" : ` (default ${o.default})`}`;
  });
}

export interface ReadSettings<K extends SettingName> {
  readonly values: Settings<K>;
  /** The raw text each setting was given, by flag or variable; absent ones took their default. */
  readonly given: Readonly<Partial<Record<K, string>>>;
  /** The command's own flags, by flag name without the dashes. */
  readonly own: Readonly<Record<string, string | undefined>>;
  readonly help: boolean;
}

/** "--prometheus-url (MDS_PROMETHEUS_URL)": how every problem names a setting. */
export function settingLabel(name: SettingName): string {
  return `${settings[name].flag} (${settings[name].env})`;
}

function parseCommandLine(
  argv: readonly string[],
  options: ParseArgsOptionsConfig,
): Record<string, string | boolean | undefined> {
  try {
    return parseArgs({ args: [...argv], options, strict: true, allowPositionals: false }).values as Record<
      string,
      string | boolean | undefined
    >;
  } catch (error) {
    const known = Object.keys(options)
      .filter((name) => name !== "help")
      .map((name) => `--${name}`);
    throw new ConfigError([`${error instanceof Error ? error.message : String(error)} (known: ${known.join(", ")})`]);
  }
}

/**
 * Reads some settings from the command line and the environment (flags win over variables; unknown
 * flags are errors, not ignored), plus a command's own flags. Throws `ConfigError` with every problem,
 * each naming the flag, its variable and the value.
 */
export function readSettings<K extends SettingName>(
  names: readonly K[],
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  own: readonly CommandFlag[] = [],
): ReadSettings<K> {
  const options: ParseArgsOptionsConfig = { help: { type: "boolean", short: "h" }, ...commandFlagOptions(own) };
  for (const name of names) options[settings[name].flag.slice(2)] = { type: "string" };
  const line = parseCommandLine(argv, options);
  const given: Partial<Record<K, string>> = {};
  for (const name of names) {
    const fromFlag = line[settings[name].flag.slice(2)];
    const fromEnv = env[settings[name].env];
    if (typeof fromFlag === "string") given[name] = fromFlag;
    else if (fromEnv !== undefined && fromEnv !== "") given[name] = fromEnv;
  }
  const ownValues = Object.fromEntries(own.map((o) => [o.flag.slice(2), line[o.flag.slice(2)] as string | undefined]));
  const help = line["help"] === true;
  if (help) return { values: {} as Settings<K>, given, own: ownValues, help };
  return { values: parseSettings(names, given, settingLabel), given, own: ownValues, help };
}

/**
 * Some settings from their raw text by their schemas; throws `ConfigError` with every problem, each named
 * by `label` (flag and variable, or the flag alone where a command reads flags only) with the value.
 */
export function parseSettings<K extends SettingName>(
  names: readonly K[],
  given: Readonly<Partial<Record<K, string>>>,
  label: (name: K) => string,
): Settings<K> {
  const parsed = settingsSchema(names).safeParse(given);
  if (parsed.success) return Object.freeze(parsed.data) as Settings<K>;
  throw new ConfigError(
    parsed.error.issues.map((issue) => {
      const name = issue.path[0] as K;
      const got = given[name];
      return `${label(name)} = ${got === undefined ? "<unset>" : JSON.stringify(got)}: ${issue.message}`;
    }),
  );
}

function defaultOf(name: SettingName): string {
  const field = settings[name].schema;
  return "def" in field && "defaultValue" in field.def ? JSON.stringify(field.def.defaultValue) : "required";
}

/** The `--help` lines of some settings and a command's own flags. */
export function describeSettings(names: readonly SettingName[], own: readonly CommandFlag[] = []): string {
  const ownLines = describeCommandFlags(own);
  const shared = names.map((name) => {
    const s = settings[name];
    const def = defaultOf(name);
    return `  ${s.flag.padEnd(34)} ${s.env.padEnd(21)} ${s.help}${def === "required" ? " Required." : ` (default ${def})`}`;
  });
  return [...ownLines, ...shared].join("\n");
}

/** The Markdown flag table of docs/controller.md: one row per setting, from the same table as `--help`. */
export function settingsTable(names: readonly SettingName[]): string {
  const rows = names.map((name) => {
    const s = settings[name];
    const def = defaultOf(name);
    return `| \`${s.flag}\` | \`${s.env}\` | ${def === "required" ? "required" : `\`${def}\``} | ${s.help.replaceAll("|", "\\|")} |`;
  });
  return ["| Flag | Variable | Default | What it sets |", "| --- | --- | --- | --- |", ...rows].join("\n");
}

export const allSettings = Object.keys(settings) as SettingName[];
