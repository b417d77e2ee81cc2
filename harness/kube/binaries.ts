import { accessSync, constants, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { repoRoot } from "../repo-root.js";

/** Where the binaries come from, and how to get them when they are missing. */
export interface KubeBinaries {
  dirPath: string;
  kubeApiServerPath: string;
  etcdPath: string;
  /** Checked only when a test starts the controller manager (see controller-manager.ts). */
  kubeControllerManagerPath: string;
  k8sVersion: string;
  etcdVersion: string;
}

const versionsFilePath = join(repoRoot, "tools/kube-bin/versions.env");
const buildHint =
  "run tools/kube-bin/build.sh (it caches kube-apiserver, kube-controller-manager and etcd), or set MDS_KUBE_BIN_DIR to a directory holding them";

function readVersions(): { k8sVersion: string; etcdVersion: string } {
  let text: string;
  try {
    text = readFileSync(versionsFilePath, "utf8");
  } catch (cause) {
    throw new Error(`kube binaries: cannot read ${versionsFilePath}`, { cause });
  }
  const values = new Map<string, string>();
  for (const line of text.split("\n")) {
    const match = /^([A-Z0-9_]+)=([^\s#]*)/.exec(line);
    if (match?.[1] !== undefined && match[2] !== undefined) values.set(match[1], match[2]);
  }
  const k8sVersion = values.get("K8S_VERSION");
  const etcdVersion = values.get("ETCD_VERSION");
  if (!k8sVersion || !etcdVersion) {
    throw new Error(`kube binaries: ${versionsFilePath} must set K8S_VERSION and ETCD_VERSION`);
  }
  return { k8sVersion, etcdVersion };
}

/** The cache directory tools/kube-bin/build.sh writes to; keep the two in step. */
export function defaultKubeBinDir(env: NodeJS.ProcessEnv = process.env): string {
  const { k8sVersion, etcdVersion } = readVersions();
  const cacheHome = env["XDG_CACHE_HOME"] || join(env["HOME"] || homedir(), ".cache");
  return join(cacheHome, "mds-scaler", "kube-bin", `k8s-${k8sVersion}_etcd-${etcdVersion}`);
}

/**
 * Finds kube-apiserver and etcd: `explicitDir`, else MDS_KUBE_BIN_DIR, else the
 * build script's cache. Throws, never skips, when they are missing.
 */
export function findKubeBinaries(explicitDir?: string, env: NodeJS.ProcessEnv = process.env): KubeBinaries {
  const { k8sVersion, etcdVersion } = readVersions();
  const dirPath = explicitDir ?? (env["MDS_KUBE_BIN_DIR"] || defaultKubeBinDir(env));
  const kubeApiServerPath = join(dirPath, "kube-apiserver");
  const etcdPath = join(dirPath, "etcd");
  for (const path of [kubeApiServerPath, etcdPath]) {
    try {
      accessSync(path, constants.X_OK);
    } catch (cause) {
      throw new Error(`kube binaries: ${path} is missing or not executable; ${buildHint}`, { cause });
    }
  }
  return {
    dirPath,
    kubeApiServerPath,
    etcdPath,
    kubeControllerManagerPath: join(dirPath, "kube-controller-manager"),
    k8sVersion,
    etcdVersion,
  };
}

/** Throws with the build hint when the controller manager is missing (a cache built before it was added). */
export function requireExecutable(path: string): void {
  try {
    accessSync(path, constants.X_OK);
  } catch (cause) {
    throw new Error(`kube binaries: ${path} is missing or not executable; ${buildHint}`, { cause });
  }
}
