/**
 * Copies the Prometheus rules and Grafana dashboards into the Helm chart, which
 * embeds them with `.Files.Get`. Helm cannot read files outside the chart, so
 * the chart holds copies; rules/ and dashboards/ stay the only place to edit,
 * and test/chart checks that the copies are current.
 *
 *   npx tsx tools/generate-chart-assets.ts          # write the copies
 *   npx tsx tools/generate-chart-assets.ts --check  # exit 1 if any copy is stale
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const chartFiles = join(root, "charts", "mds-scaler", "files");

/** One kind of asset: which source files, and where their copies go. */
interface AssetSet {
  readonly sourceDir: string;
  readonly targetDir: string;
  readonly matches: (file: string) => boolean;
}

const assetSets: readonly AssetSet[] = [
  { sourceDir: join(root, "rules"), targetDir: join(chartFiles, "rules"), matches: (f) => f.endsWith(".rules.yaml") },
  {
    sourceDir: join(root, "dashboards"),
    targetDir: join(chartFiles, "dashboards"),
    matches: (f) => f.endsWith(".json"),
  },
];

export interface AssetCopy {
  readonly source: string;
  readonly target: string;
}

/** Every source file and the path of its copy in the chart. */
export function chartAssets(): AssetCopy[] {
  return assetSets.flatMap((set) =>
    readdirSync(set.sourceDir)
      .filter(set.matches)
      .sort()
      .map((file) => ({ source: join(set.sourceDir, file), target: join(set.targetDir, file) })),
  );
}

/** Copies in the chart with no source any more (a renamed or deleted rule file). */
function orphanedCopies(): string[] {
  return assetSets.flatMap((set) => {
    if (!existsSync(set.targetDir)) return [];
    const sources = new Set(readdirSync(set.sourceDir).filter(set.matches));
    return readdirSync(set.targetDir)
      .filter((file) => !sources.has(file))
      .map((file) => join(set.targetDir, file));
  });
}

/** Human-readable problems; empty when the chart's copies equal their sources. */
export function staleChartAssets(): string[] {
  const problems: string[] = [];
  for (const { source, target } of chartAssets()) {
    const rel = relative(root, target);
    if (!existsSync(target)) problems.push(`${rel} is missing`);
    else if (!readFileSync(target).equals(readFileSync(source)))
      problems.push(`${rel} differs from ${relative(root, source)}`);
  }
  for (const orphan of orphanedCopies()) problems.push(`${relative(root, orphan)} has no source`);
  return problems;
}

/** Writes every copy and removes orphans; returns the chart paths it wrote. */
export function writeChartAssets(): string[] {
  const written: string[] = [];
  for (const { source, target } of chartAssets()) {
    mkdirSync(dirname(target), { recursive: true });
    const content = readFileSync(source);
    if (existsSync(target) && readFileSync(target).equals(content)) continue;
    writeFileSync(target, content);
    written.push(relative(root, target));
  }
  for (const orphan of orphanedCopies()) rmSync(orphan);
  return written;
}

function main(argv: readonly string[]): number {
  if (argv.includes("--check")) {
    const problems = staleChartAssets();
    for (const p of problems) process.stderr.write(`${p}\n`);
    if (problems.length > 0) process.stderr.write("run: npx tsx tools/generate-chart-assets.ts\n");
    return problems.length === 0 ? 0 : 1;
  }
  const written = writeChartAssets();
  for (const path of written) process.stdout.write(`wrote ${path}\n`);
  if (written.length === 0) process.stdout.write("chart assets are up to date\n");
  return 0;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.exitCode = main(process.argv.slice(2));
}
