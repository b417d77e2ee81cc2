/**
 * The repository's root: the nearest directory above this module that holds `package.json`. The harness and the
 * benchmarks find the repository's files (tools' `versions.env`, the exposition code a cached TSDB's hash covers,
 * build scripts) from it, so they run the same from the TypeScript sources (`tsx`) and from `npm run build`'s
 * output under `dist/`, which has no `package.json` of its own: the controller's figures are then those of the
 * JavaScript the image ships (docs/prometheus-signals.md, "The controller as shipped").
 */
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The nearest directory at or above `from` that holds `package.json`; an error naming `from` where none does. */
export function nearestPackageDir(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, "package.json"))) return dir;
    if (dirname(dir) === dir) throw new Error(`repo root: no package.json in ${from} or above it`);
  }
}

export const repoRoot = nearestPackageDir(dirname(fileURLToPath(import.meta.url)));
