/** Where the harness finds the Prometheus build (harness/prom-bin.ts): the override, the cache, and their errors. */
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { findPromBinaries, promBinaryFiles } from "../../harness/prom-bin.js";

describe("findPromBinaries", () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
    dir = undefined;
  });

  /** Empty executables with the build's names (a unit test: none is run), all but `missing`. */
  async function binDir(missing?: string): Promise<string> {
    dir = await mkdtemp(join(tmpdir(), "mds-prom-bin-"));
    for (const name of Object.values(promBinaryFiles).filter((n) => n !== missing)) {
      await writeFile(join(dir, name), "#!/bin/sh\n");
      await chmod(join(dir, name), 0o755);
    }
    await mkdir(join(dir, "crds"));
    await writeFile(join(dir, "crds", "podmonitors.yaml"), "kind: CustomResourceDefinition\n");
    return dir;
  }

  it("takes MDS_PROM_BIN_DIR's binaries and says they were chosen there", async () => {
    const chosen = await binDir();
    const bins = findPromBinaries({ MDS_PROM_BIN_DIR: chosen, HOME: "/nonexistent" });
    expect(bins).toMatchObject({ dirPath: chosen, prometheusPath: join(chosen, "prometheus"), overridden: true });
    expect(bins.crdPaths).toEqual([join(chosen, "crds", "podmonitors.yaml")]);
  });

  it("looks in the build script's cache without it, and names a missing binary with the way to build it", () => {
    expect(() => findPromBinaries({ XDG_CACHE_HOME: "/nonexistent/cache" })).toThrow(
      /prom binaries: \/nonexistent\/cache\/mds-scaler\/prom-bin\/prometheus-v[^ ]+\/prometheus is missing or not executable; run tools\/prom-bin\/build\.sh/,
    );
  });

  it("names the one binary missing from the override", async () => {
    const chosen = await binDir(promBinaryFiles.operatorPath);
    expect(() => findPromBinaries({ MDS_PROM_BIN_DIR: chosen })).toThrow(
      `${join(chosen, promBinaryFiles.operatorPath)} is missing`,
    );
  });
});
