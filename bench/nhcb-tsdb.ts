/**
 * The native-histogram twin of a prepared TSDB (bench/engine-tsdb.ts): the same
 * samples with every classic histogram (`_bucket` by `le`, `_count`, `_sum`)
 * stored as one native histogram with custom buckets (NHCB) under its base
 * name, as Prometheus 3 stores a scrape with `convert_classic_histograms_to_nhcb`;
 * `mixed` keeps the classic series beside it, as `always_scrape_classic_histograms`
 * does. Written by bench/nhcb (a Go program built from the Go module proxy by its
 * build.sh) from a copy of the cached blocks, which are never modified, and cached
 * under `~/.cache/mds-scaler/bench-tsdb-nhcb/<tsdb hash>-<program hash>/<deployments>/<kind>/`.
 * Never built by CI.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { promisify } from "node:util";
import { repoRoot } from "../harness/repo-root.js";
import { benchCacheDir, copyBlocks, prepareTsdb } from "./engine-tsdb.js";

const run = promisify(execFile);

/** `nhcb`: histograms as NHCB only; `mixed`: NHCB and the classic series both. */
export type TwinKind = "nhcb" | "mixed";

export interface PreparedTwin {
  readonly blocksPath: string;
  readonly deployments: number;
  readonly kind: TwinKind;
  /** What the program printed when it wrote the twin (counts of series and histogram samples). */
  readonly report: string;
}

/** The cached nhcb-twin program's directory, built first when absent. */
async function twinProgramDir(): Promise<string> {
  const { stdout } = await run("bash", [join(repoRoot, "bench/nhcb/build.sh")], { maxBuffer: 16 * 2 ** 20 });
  const dir = stdout.trim().split("\n").pop() ?? "";
  if (dir === "") throw new Error("bench/nhcb/build.sh printed no directory");
  return dir;
}

/** The twin of the prepared TSDB of this size, written first when absent. */
export async function prepareNhcbTwin(
  promtoolPath: string,
  deployments: number,
  kind: TwinKind,
): Promise<PreparedTwin> {
  const source = await prepareTsdb(promtoolPath, deployments);
  const programDir = await twinProgramDir();
  // The prepared TSDB's version hash is its blocks' grandparent directory; the program's is its directory's name.
  const tsdbHash = basename(dirname(dirname(source.blocksPath)));
  const dir = join(benchCacheDir("bench-tsdb-nhcb"), `${tsdbHash}-${basename(programDir)}`, String(deployments), kind);
  const blocksPath = join(dir, "blocks");
  const reportPath = join(dir, "done");
  if (existsSync(reportPath))
    return { blocksPath, deployments, kind, report: (await readFile(reportPath, "utf8")).trim() };
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  const started = performance.now();
  const copy = await mkdtemp(join(dir, "source-"));
  const tmp = `${blocksPath}.tmp`;
  try {
    await copyBlocks(source.blocksPath, copy);
    await mkdir(tmp);
    const args = ["-n", "10", join(programDir, "nhcb-twin"), "-src", copy, "-dst", tmp];
    if (kind === "mixed") args.push("-keep-classic");
    const { stdout } = await run("nice", args, { maxBuffer: 16 * 2 ** 20 });
    await rename(tmp, blocksPath);
    await writeFile(reportPath, stdout);
    process.stderr.write(
      `nhcb-tsdb: ${kind} twin of ${deployments} deployments in ${((performance.now() - started) / 1000).toFixed(0)} s: ${stdout.trim()}\n`,
    );
    return { blocksPath, deployments, kind, report: stdout.trim() };
  } finally {
    await rm(copy, { recursive: true, force: true });
    await rm(tmp, { recursive: true, force: true });
  }
}
