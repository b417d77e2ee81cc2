/**
 * Which cluster the controller talks to, decided once at start. Without a
 * configuration, or with an API server that never answers, the controller
 * stops with a message saying where it looked, instead of retrying forever
 * against the client library's fallback (`http://localhost:8080`).
 */
import { existsSync } from "node:fs";
import { delimiter, join } from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import { pooledConnections } from "../adapters/kubernetes/connections.js";
import { probeApiServer } from "../adapters/kubernetes/reachable.js";
import { ConfigError, type Config } from "./config.js";

/** Every place a configuration may come from, named in each start-up error. */
export const whereClusterConfigComes =
  "the --kubeconfig flag, the KUBECONFIG variable, ~/.kube/config, or in-cluster detection (KUBERNETES_SERVICE_HOST and the pod's service account)";

export interface ClusterConfig {
  readonly kubeConfig: KubeConfig;
  /** Where the configuration was found, for messages. */
  readonly source: string;
}

/** The API server of a found configuration did not answer. */
export class ClusterUnreachableError extends Error {
  override readonly name = "ClusterUnreachableError";
}

function loadFiles(paths: readonly string[], origin: string): KubeConfig {
  const missing = paths.filter((p) => !existsSync(p));
  if (missing.length > 0) {
    throw new ConfigError([
      `${origin} = ${JSON.stringify(paths.join(delimiter))}: no such file: ${missing.join(", ")} (a cluster configuration comes from ${whereClusterConfigComes})`,
    ]);
  }
  const kc = new KubeConfig();
  paths.forEach((path, i) => {
    if (i === 0) return kc.loadFromFile(path);
    const next = new KubeConfig();
    next.loadFromFile(path);
    // As kubectl does: the first file's current context wins.
    kc.mergeConfig(next, true);
  });
  return kc;
}

/**
 * In order: --kubeconfig or KUBECONFIG (a list separated like PATH), then
 * in-cluster when KUBERNETES_SERVICE_HOST is set, then ~/.kube/config. The
 * configuration found keeps its connections alive (`pooledConnections`).
 */
export function clusterConfigFrom(
  config: Pick<Config, "kubeconfig">,
  env: Readonly<Record<string, string | undefined>>,
): ClusterConfig {
  const found = foundClusterConfig(config, env);
  return { ...found, kubeConfig: pooledConnections(found.kubeConfig) };
}

function foundClusterConfig(
  config: Pick<Config, "kubeconfig">,
  env: Readonly<Record<string, string | undefined>>,
): ClusterConfig {
  if (config.kubeconfig !== "") {
    const paths = config.kubeconfig.split(delimiter).filter((p) => p !== "");
    const origin = env["KUBECONFIG"] === config.kubeconfig ? "KUBECONFIG" : "--kubeconfig";
    return { kubeConfig: loadFiles(paths, origin), source: `${origin} ${config.kubeconfig}` };
  }
  if ((env["KUBERNETES_SERVICE_HOST"] ?? "") !== "") {
    const kc = new KubeConfig();
    kc.loadFromCluster();
    return { kubeConfig: kc, source: "in-cluster configuration" };
  }
  const home = env["HOME"] ?? "";
  const fallback = home === "" ? "" : join(home, ".kube", "config");
  if (fallback !== "" && existsSync(fallback)) {
    return { kubeConfig: loadFiles([fallback], "~/.kube/config"), source: fallback };
  }
  throw new ConfigError([
    `no cluster configuration found: looked at ${whereClusterConfigComes}${
      fallback === "" ? " (HOME is unset)" : ` (${fallback} does not exist)`
    }; pass --kubeconfig PATH or set KUBECONFIG`,
  ]);
}

/** "fetch failed: connect ECONNREFUSED 127.0.0.1:1": the network's reason sits in the causes. */
function causeChain(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  while (current !== undefined && parts.length < 5) {
    parts.push(current instanceof Error ? current.message : String(current));
    current = current instanceof Error ? current.cause : undefined;
  }
  return parts.join(": ");
}

/** Throws `ClusterUnreachableError` when the configured API server gives no answer within the timeout. */
export async function requireApiServer(cluster: ClusterConfig, timeoutMs: number): Promise<void> {
  const result = await probeApiServer(cluster.kubeConfig, timeoutMs);
  if (result.reached) return;
  const server = cluster.kubeConfig.getCurrentCluster()?.server ?? "<no server>";
  const reason = causeChain(result.error);
  throw new ClusterUnreachableError(
    `the API server ${server} (from ${cluster.source}) cannot be reached: ${reason}\n` +
      `check the cluster configuration: ${whereClusterConfigComes}`,
  );
}
