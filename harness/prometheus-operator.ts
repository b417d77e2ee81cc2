/**
 * The Prometheus Operator against the test API server, and the Prometheus
 * configuration it generates, made runnable outside a cluster.
 *
 * The operator runs as a plain process with the harness's admin client
 * certificate (it has `--apiserver` and certificate flags, no kubeconfig
 * flag). It renders a `Prometheus` object's ServiceMonitors, PodMonitors and
 * PrometheusRules into the Secret `prometheus-<name>` (key
 * `prometheus.yaml.gz`) and ConfigMaps `prometheus-<name>-rulefiles-<n>`, and
 * would run a StatefulSet that mounts them; no controller runs here, so the
 * test reads them and runs Prometheus itself. `writeLocalConfig` makes the same
 * changes the pod would: rule files at a local path, the config-reloader's
 * `$(POD_NAME)` and `$(SHARD)` substitution, and Kubernetes discovery through a kubeconfig
 * file instead of the in-cluster service account.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { CoreV1Api, loadYaml, type KubeConfig, type V1CustomResourceDefinition } from "@kubernetes/client-node";
import { readFileSync } from "node:fs";
import { parse, stringify } from "yaml";
import type { ControlPlane } from "./kube/index.js";
import { ManagedProcess } from "./kube/processes.js";
import type { PromBinaries } from "./prom-bin.js";

/** Applies every CRD the operator ships (it checks for them at start). */
export async function applyOperatorCrds(controlPlane: ControlPlane, binaries: PromBinaries): Promise<void> {
  for (const path of binaries.crdPaths)
    await controlPlane.applyCrd(loadYaml<V1CustomResourceDefinition>(readFileSync(path, "utf8")), {
      timeoutMs: 60_000,
    });
}

/** Writes the admin credentials of `kubeConfig` as PEM files for the operator's flags. */
async function writeCredentials(
  kubeConfig: KubeConfig,
  dir: string,
): Promise<{ ca: string; cert: string; key: string }> {
  const cluster = kubeConfig.getCurrentCluster();
  const user = kubeConfig.getCurrentUser();
  if (!cluster?.caData || !user?.certData || !user.keyData)
    throw new Error("prometheus-operator: the kubeconfig has no inline CA, client certificate and key");
  const paths = { ca: join(dir, "ca.crt"), cert: join(dir, "admin.crt"), key: join(dir, "admin.key") };
  await writeFile(paths.ca, Buffer.from(cluster.caData, "base64"));
  await writeFile(paths.cert, Buffer.from(user.certData, "base64"));
  await writeFile(paths.key, Buffer.from(user.keyData, "base64"), { mode: 0o600 });
  return paths;
}

export async function startPrometheusOperator(
  controlPlane: ControlPlane,
  binaries: PromBinaries,
  workDir: string,
): Promise<ManagedProcess> {
  await mkdir(workDir, { recursive: true });
  const credentials = await writeCredentials(controlPlane.kubeConfig, workDir);
  return await ManagedProcess.start({
    name: "prometheus-operator",
    command: binaries.operatorPath,
    args: [
      `--apiserver=${controlPlane.serverUrl}`,
      `--ca-file=${credentials.ca}`,
      `--cert-file=${credentials.cert}`,
      `--key-file=${credentials.key}`,
      // Its own /metrics on a loopback port the kernel picks.
      "--web.listen-address=127.0.0.1:0",
      "--log-level=info",
    ],
    logPath: join(workDir, "operator.log"),
  });
}

/** What the operator generated for one Prometheus object. */
export interface GeneratedPrometheus {
  /** prometheus.yaml as the operator wrote it. */
  readonly configYaml: string;
  /** Rule files by name, from the rulefiles ConfigMaps. */
  readonly ruleFiles: ReadonlyMap<string, string>;
}

/** Reads the generated configuration and rule files; undefined until the Secret exists. */
export async function readGenerated(
  kubeConfig: KubeConfig,
  namespace: string,
  name: string,
): Promise<GeneratedPrometheus | undefined> {
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const secret = await core.readNamespacedSecret({ name: `prometheus-${name}`, namespace }).catch(() => undefined);
  const gz = secret?.data?.["prometheus.yaml.gz"];
  if (gz === undefined) return undefined;
  const configYaml = gunzipSync(Buffer.from(gz, "base64")).toString("utf8");
  const maps = await core.listNamespacedConfigMap({
    namespace,
    labelSelector: `prometheus-name=${name}`,
  });
  const ruleFiles = new Map<string, string>();
  for (const map of maps.items) for (const [file, text] of Object.entries(map.data ?? {})) ruleFiles.set(file, text);
  return { configYaml, ruleFiles };
}

interface ScrapeConfig {
  job_name: string;
  kubernetes_sd_configs?: Record<string, unknown>[];
  [key: string]: unknown;
}

/** The directory the operator mounts an emptyDir at for the Prometheus object's `queryLogFile` given as a bare name. */
const podLogDirectory = "/var/log/prometheus/";

/**
 * The generated configuration as the Prometheus pod would load it, but on
 * this machine: rule files written to `dir`, `$(POD_NAME)` and `$(SHARD)`
 * substituted as the config-reloader does (shard 0 of 1), every Kubernetes discovery block given
 * `kubeconfigPath`, and a query log in the pod's log directory written under `dir` instead. Returns
 * the path of the written file, and of the query log where the configuration asks for one.
 */
export async function writeLocalConfig(
  generated: GeneratedPrometheus,
  dir: string,
  kubeconfigPath: string,
  podName: string,
): Promise<{ configPath: string; queryLogPath?: string }> {
  const rulesDir = join(dir, "rules");
  await mkdir(rulesDir, { recursive: true });
  for (const [file, text] of generated.ruleFiles) await writeFile(join(rulesDir, file), text);
  // The config-reloader expands $(VAR) from the pod's environment: the pod name and its shard.
  const env: Record<string, string> = { POD_NAME: podName, SHARD: "0" };
  const expanded = generated.configYaml.replace(/\$\((\w+)\)/g, (whole, name: string) => {
    const value = env[name];
    if (value === undefined) throw new Error(`generated configuration: no value for ${whole}`);
    return value;
  });
  const config = parse(expanded) as {
    global?: { query_log_file?: string };
    rule_files?: string[];
    scrape_configs?: ScrapeConfig[];
  };
  config.rule_files = [join(rulesDir, "*.yaml")];
  const queryLog = config.global?.query_log_file;
  if (config.global !== undefined && queryLog?.startsWith(podLogDirectory) === true) {
    await mkdir(join(dir, "log"), { recursive: true });
    config.global.query_log_file = join(dir, "log", queryLog.slice(podLogDirectory.length));
  }
  for (const job of config.scrape_configs ?? []) {
    for (const sd of job.kubernetes_sd_configs ?? []) {
      if ("api_server" in sd)
        throw new Error(`job ${job.job_name}: kubernetes_sd_configs already names an api_server; refusing to override`);
      sd["kubeconfig_file"] = kubeconfigPath;
    }
  }
  const configPath = join(dir, "prometheus.yaml");
  await writeFile(configPath, stringify(config));
  const queryLogPath = config.global?.query_log_file;
  return { configPath, ...(queryLogPath !== undefined ? { queryLogPath } : {}) };
}
