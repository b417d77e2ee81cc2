/**
 * The controller's configuration: every setting of `src/app/settings.ts` read from flags and the
 * environment, then the checks that join several settings. Everything here is decided before any
 * network call: a problem ends the start with exit code 2, naming each flag, its variable and value.
 */
import { PrometheusClient } from "../adapters/prometheus/client.js";
import { prometheusHeadersFrom } from "./prometheus-headers.js";
import { matcherNameProblem, repeatedLabelFields, type PrometheusLabelNames } from "../adapters/prometheus/config.js";
import { parseLabelMatchers, type LabelMatcher } from "../adapters/prometheus/matchers.js";
import { serviceHosts } from "../adapters/webhook/certificates.js";
import type { PrometheusSignalConfig } from "../adapters/prometheus/config.js";
import {
  allSettings,
  ConfigError,
  parseSettings,
  readSettings,
  settingLabel,
  settings,
  settingsSchema,
  type SettingName,
  type Settings,
} from "./settings.js";

export { ConfigError } from "./settings.js";

export const ConfigSchema = settingsSchema(allSettings);

export type Config = Settings<SettingName>;

type Given = Readonly<Partial<Record<SettingName, string>>>;

/** Flags win over variables; unknown flags are errors, not ignored. */
export function loadConfig(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): Config {
  const { values, given } = readSettings(allSettings, argv, env);
  const problems = [
    ...leaseTimingProblems(values, given),
    ...labelProblems(values, given),
    ...certificateProblems(values),
  ];
  if (problems.length > 0) throw new ConfigError(problems);
  return values;
}

function named(name: SettingName, config: Partial<Config>, raw: Given): string {
  return `${settingLabel(name)} = ${String(config[name])}${raw[name] === undefined ? " (default)" : ""}`;
}

/**
 * At most one writer (docs/controller.md, Leadership): a leader writes until its renew deadline, and a
 * write sent just before it may take the whole Kubernetes call timeout to land; a follower takes over a
 * lease duration after it last saw a renewal. So the deadline plus the call timeout must fit in the lease,
 * and a renewal must be attempted at least once before the deadline.
 */
function leaseTimingProblems(config: Config, raw: Given): string[] {
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

const labelSettings = {
  namespace: "namespaceLabel",
  pod: "podLabel",
  deployment: "deploymentLabel",
  role: "roleLabel",
} as const satisfies Record<string, SettingName>;

type LabelSettings = Pick<Config, (typeof labelSettings)[keyof typeof labelSettings]>;

/** The label mapping the Prometheus adapter queries with, from the four label settings. */
export function labelsOf(config: LabelSettings): PrometheusLabelNames {
  return {
    namespace: config.namespaceLabel,
    pod: config.podLabel,
    deployment: config.deploymentLabel,
    role: config.roleLabel,
  };
}

/**
 * Two roles of the mapping on one label could never tell pods from roles apart; an extra matcher on a
 * label of the mapping would fight the scaler's own selection.
 */
export function labelProblems(config: LabelSettings & Pick<Config, "prometheusMatchers">, raw: Given): string[] {
  const repeated = repeatedLabelFields(labelsOf(config)).map((field) => {
    const name = labelSettings[field];
    const first = Object.values(labelSettings).find((other) => config[other] === config[name]) ?? name;
    return `${named(name, config, raw)} is also ${named(first, config, raw)}: each label of the mapping must differ`;
  });
  const onMapping = matchersOf(config.prometheusMatchers).flatMap((m) => {
    const problem = matcherNameProblem(m.name, labelsOf(config));
    return problem === undefined ? [] : [`${named("prometheusMatchers", config, raw)}: ${m.name} ${problem}`];
  });
  return [...repeated, ...onMapping];
}

/** The matchers of a checked `--prometheus-matchers` value (the setting's schema refused any other). */
export function matchersOf(text: string): readonly LabelMatcher[] {
  const parsed = parseLabelMatchers(text);
  if (!parsed.ok) throw new ConfigError([`--prometheus-matchers: ${parsed.problem}`]);
  return parsed.matchers;
}

/** An HTTPS server needs a certificate source and a host for it, known before anything is contacted. */
function certificateProblems(config: Config): string[] {
  if (config.webhookAddress === "" && config.externalMetricsAddress === "") return [];
  if (config.webhookCertDir !== "") return [];
  if (config.webhookTlsSecret === "") {
    return [
      `an HTTPS server (--webhook-address or --external-metrics-address) is set, but neither ${settingLabel("webhookTlsSecret")} nor ${settingLabel("webhookCertDir")} says where its certificate comes from`,
    ];
  }
  if (certificateHosts(config).length === 0) {
    return [
      `${settingLabel("webhookService")} or ${settingLabel("webhookCertHosts")} must name the host the API server calls`,
    ];
  }
  return [];
}

/** The names the generated serving certificate covers. */
export function certificateHosts(config: Config): string[] {
  return serviceHosts(
    config.webhookService,
    config.webhookCertHosts.split(",").map((h) => h.trim()),
  );
}

/** The settings that say where and how engine series are read: other commands take them as the controller does. */
export const prometheusSettingNames = [
  "prometheusUrl",
  "prometheusTimeoutMs",
  "prometheusHeadersFile",
  "prometheusQueries",
  "prometheusMatchers",
  "metricSeparator",
  "namespaceLabel",
  "podLabel",
  "deploymentLabel",
  "roleLabel",
] as const satisfies readonly SettingName[];
export type PrometheusSettingName = (typeof prometheusSettingNames)[number];
export type PrometheusSettings = Pick<Config, PrometheusSettingName>;

/** Flag, help and default of each Prometheus setting, for another command's flag table (from src/app/settings.ts). */
export function prometheusSettingFlags(): {
  name: PrometheusSettingName;
  flag: `--${string}`;
  help: string;
  default?: string;
}[] {
  return prometheusSettingNames.map((name) => {
    const field = settings[name].schema;
    const def = "defaultValue" in field.def ? String(field.def.defaultValue as string | number) : undefined;
    return {
      name,
      flag: settings[name].flag,
      help: settings[name].help,
      ...(def === undefined ? {} : { default: def }),
    };
  });
}

/** The Prometheus settings from flag values, by the same schemas and checks as the controller's; problems name the flag and value. */
export function parsePrometheusSettings(raw: Partial<Record<PrometheusSettingName, string>>): PrometheusSettings {
  // These come from flags only: each problem names the flag.
  const values = parseSettings(prometheusSettingNames, raw, (name) => settings[name].flag);
  const labels = labelProblems(values, raw);
  if (labels.length > 0) throw new ConfigError(labels);
  return values;
}

/**
 * The PromQL client the settings describe. The headers file is read here unless the caller read it
 * already (the controller does, before any network call).
 */
export function prometheusClientOf(
  settings: PrometheusSettings,
  headers: Readonly<Record<string, string>> = prometheusHeadersFrom(settings.prometheusHeadersFile),
): PrometheusClient {
  return new PrometheusClient({ endpoint: settings.prometheusUrl, timeoutMs: settings.prometheusTimeoutMs, headers });
}

/** How the signal source finds engine series, from the settings. */
export function prometheusSignalConfigOf(config: PrometheusSettings): PrometheusSignalConfig {
  return {
    labels: labelsOf(config),
    metricNameSeparator: config.metricSeparator,
    queryTimeoutMs: config.prometheusTimeoutMs,
    queryPlan: config.prometheusQueries,
    matchers: matchersOf(config.prometheusMatchers),
  };
}
