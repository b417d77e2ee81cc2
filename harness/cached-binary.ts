/**
 * Finds a program a `tools/<name>-bin/build.sh` script built from the Go module
 * proxy and cached under a directory named after its version. Used for the
 * single-program builds (VictoriaMetrics, Thanos); the cache directory is
 * derived from the same `versions.env` line the script reads.
 */
import { accessSync, constants, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { repoRoot } from "./repo-root.js";

export interface CachedBinary {
  readonly path: string;
  /** The version `versions.env` names, e.g. v1.151.0. */
  readonly version: string;
}

export interface CachedBinarySpec {
  /** The tools folder, e.g. `vm-bin`. */
  readonly tool: string;
  /** The `versions.env` key of the version, e.g. `VICTORIA_METRICS_VERSION`. */
  readonly versionKey: string;
  /** The program's file name, also the cache directory's prefix: `<program>-<version>`. */
  readonly program: string;
  /** The variable that overrides the cache directory, as the build script honours it. */
  readonly dirVariable: string;
}

/** Finds the program: the override variable's directory, else the build script's cache. Throws, never skips, when it is missing. */
export function findCachedBinary(spec: CachedBinarySpec, env: NodeJS.ProcessEnv = process.env): CachedBinary {
  const versionsFilePath = join(repoRoot, "tools", spec.tool, "versions.env");
  let version: string | undefined;
  for (const line of readFileSync(versionsFilePath, "utf8").split("\n")) {
    const match = new RegExp(`^${spec.versionKey}=([^\\s#]+)`).exec(line);
    if (match?.[1]) version = match[1];
  }
  if (!version) throw new Error(`${spec.program} binary: ${versionsFilePath} must set ${spec.versionKey}`);
  const cacheHome = env["XDG_CACHE_HOME"] || join(env["HOME"] || homedir(), ".cache");
  const dirPath = env[spec.dirVariable] || join(cacheHome, "mds-scaler", spec.tool, `${spec.program}-${version}`);
  const path = join(dirPath, spec.program);
  try {
    accessSync(path, constants.X_OK);
  } catch (cause) {
    throw new Error(
      `${spec.program} binary: ${path} is missing or not executable; run tools/${spec.tool}/build.sh (it caches it), or set ${spec.dirVariable} to a directory holding it`,
      { cause },
    );
  }
  return { path, version };
}
