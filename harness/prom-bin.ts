/**
 * Prometheus 3, its promtool, the Prometheus Operator and the operator's CRDs,
 * as tools/prom-bin/build.sh caches them. Debian's Prometheus 2.42
 * (harness/prometheus.ts) stays the one the other tests run.
 */
import { accessSync, constants, readFileSync, readdirSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { repoRoot } from "./repo-root.js";

export interface PromBinaries {
  readonly dirPath: string;
  readonly prometheusPath: string;
  readonly promtoolPath: string;
  readonly operatorPath: string;
  /** The operator's CustomResourceDefinition files, one CRD each. */
  readonly crdPaths: readonly string[];
  /** e.g. v3.5.0: the Prometheus object's spec.version, so the operator writes a configuration this binary accepts. */
  readonly prometheusVersion: string;
  readonly operatorVersion: string;
  /** Whether MDS_PROM_BIN_DIR chose the directory (another build than versions.env names, perhaps). */
  readonly overridden: boolean;
}

const versionsFilePath = join(repoRoot, "tools/prom-bin/versions.env");
const buildHint = "run tools/prom-bin/build.sh (it caches them), or set MDS_PROM_BIN_DIR to a directory holding them";

function readVersions(): { prometheusVersion: string; operatorVersion: string } {
  const values = new Map<string, string>();
  for (const line of readFileSync(versionsFilePath, "utf8").split("\n")) {
    const match = /^([A-Z0-9_]+)=([^\s#]*)/.exec(line);
    if (match?.[1] !== undefined && match[2] !== undefined) values.set(match[1], match[2]);
  }
  const prometheusVersion = values.get("PROMETHEUS_VERSION");
  const operatorVersion = values.get("OPERATOR_VERSION");
  if (!prometheusVersion || !operatorVersion)
    throw new Error(`prom binaries: ${versionsFilePath} must set PROMETHEUS_VERSION and OPERATOR_VERSION`);
  return { prometheusVersion, operatorVersion };
}

/** The executables tools/prom-bin/build.sh puts in its directory, by the path each is found at. */
export const promBinaryFiles = {
  prometheusPath: "prometheus",
  promtoolPath: "promtool",
  operatorPath: "operator",
} as const;

/** Finds the binaries: MDS_PROM_BIN_DIR, else the build script's cache. Throws, never skips, when they are missing. */
export function findPromBinaries(env: NodeJS.ProcessEnv = process.env): PromBinaries {
  const { prometheusVersion, operatorVersion } = readVersions();
  const cacheHome = env["XDG_CACHE_HOME"] || join(env["HOME"] || homedir(), ".cache");
  const override = env["MDS_PROM_BIN_DIR"] || undefined;
  const dirPath =
    override ??
    join(cacheHome, "mds-scaler", "prom-bin", `prometheus-${prometheusVersion}_operator-${operatorVersion}`);
  const paths = {
    prometheusPath: join(dirPath, promBinaryFiles.prometheusPath),
    promtoolPath: join(dirPath, promBinaryFiles.promtoolPath),
    operatorPath: join(dirPath, promBinaryFiles.operatorPath),
  };
  for (const path of Object.values(paths)) {
    try {
      accessSync(path, constants.X_OK);
    } catch (cause) {
      throw new Error(`prom binaries: ${path} is missing or not executable; ${buildHint}`, { cause });
    }
  }
  let crdPaths: string[];
  try {
    crdPaths = readdirSync(join(dirPath, "crds"))
      .filter((f) => f.endsWith(".yaml"))
      .map((f) => join(dirPath, "crds", f));
  } catch (cause) {
    throw new Error(`prom binaries: no CRDs in ${join(dirPath, "crds")}; ${buildHint}`, { cause });
  }
  return { dirPath, ...paths, crdPaths, prometheusVersion, operatorVersion, overridden: override !== undefined };
}
