import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { repoRoot, nearestPackageDir } from "../../harness/repo-root.js";

describe("the repository's root", () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it("is where the harness finds the tools' versions, run from the sources", () => {
    expect(existsSync(join(repoRoot, "tools/prom-bin/versions.env"))).toBe(true);
    expect(existsSync(join(repoRoot, "harness/repo-root.ts"))).toBe(true);
  });

  it("is found from the build's output, which holds no package.json of its own", async () => {
    dir = await mkdtemp(join(tmpdir(), "mds-repo-root-"));
    await writeFile(join(dir, "package.json"), "{}");
    await mkdir(join(dir, "dist", "harness", "kube"), { recursive: true });
    expect(nearestPackageDir(join(dir, "dist", "harness", "kube"))).toBe(dir);
    expect(nearestPackageDir(dir)).toBe(dir);
  });

  it("names the directory it started from where no directory above holds package.json", async () => {
    dir = await mkdtemp(join(tmpdir(), "mds-repo-root-"));
    const from = join(dir, "a", "b");
    await mkdir(from, { recursive: true });
    // The temporary directory's parents hold no package.json on this machine; the error names where it looked from.
    expect(() => nearestPackageDir(from)).toThrow(`repo root: no package.json in ${from} or above it`);
  });
});
