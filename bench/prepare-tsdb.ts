/**
 * Builds (once) the cached TSDBs `npm run bench:sampling` reads, for the given
 * deployment counts; the 1,000 size takes minutes and about 7 GiB of
 * temporary disk. Never run by CI.
 *
 *   npm run bench:prepare-tsdb [-- 10 100 1000]
 */
import { findPromBinaries } from "../harness/prom-bin.js";
import { prepareTsdb } from "./engine-tsdb.js";

const sizes = process.argv.slice(2).map(Number);
for (const size of sizes.length > 0 ? sizes : [10, 100, 1000]) {
  if (!Number.isInteger(size) || size < 1) throw new Error(`deployments: ${JSON.stringify(size)} is not a count`);
  const prepared = await prepareTsdb(findPromBinaries().promtoolPath, size);
  console.log(`${size} deployments: ${prepared.blocksPath}${prepared.built ? " (built now)" : " (cached)"}`);
}
