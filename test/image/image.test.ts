/**
 * The controller image built by `npm run image` (tools/image/build.sh): built
 * twice from one commit it has one digest; unpacked with umoci, its entrypoint
 * runs in a chroot of the root filesystem, as the image's user, on a read-only
 * bind mount of it (as `readOnlyRootFilesystem: true` runs it).
 */
import { spawnSync, type SpawnSyncReturns } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..", "..");
/** The host's chroot, by path: the image's PATH is all `env -i` leaves. */
const chroot = ["/usr/sbin/chroot", "/usr/bin/chroot"].find((p) => existsSync(p)) ?? "chroot";
const version = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string }).version;

interface OciConfig {
  process: { args: string[]; env: string[]; user: { uid: number; gid: number }; cwd: string };
}

/** Both builds take this one commit, even if HEAD moves while the test runs. */
const commit = spawnSync("git", ["rev-parse", "HEAD"], { cwd: root, encoding: "utf8" }).stdout.trim();

function build(dir: string): { digest: string; output: string } {
  const result = spawnSync("bash", [join(root, "tools", "image", "build.sh")], {
    cwd: root,
    env: { ...process.env, MDS_IMAGE_DIR: dir, MDS_IMAGE_COMMIT: commit },
    encoding: "utf8",
    maxBuffer: 16 * 1024 * 1024,
  });
  if (result.status !== 0)
    throw new Error(`image build failed (${result.status}):\n${result.stdout}\n${result.stderr}`);
  const index = JSON.parse(readFileSync(join(dir, "index.json"), "utf8")) as { manifests: { digest: string }[] };
  return { digest: index.manifests[0]?.digest ?? "", output: result.stdout };
}

describe("the controller image", () => {
  const work = mkdtempSync(join(tmpdir(), "mds-image-"));
  const bundle = join(work, "bundle");
  let first: { digest: string; output: string };
  let config: OciConfig;

  /** Runs the image's entrypoint with `args` in a chroot on a read-only bind mount of the root filesystem. */
  function runInImage(args: readonly string[]): SpawnSyncReturns<string> {
    const rootfs = join(bundle, "rootfs");
    const [command, ...entry] = config.process.args.slice(0, 2);
    const quote = (a: string): string => `'${a.replace(/'/g, `'\\''`)}'`;
    const quoted = [command ?? "", ...entry, ...args].map(quote).join(" ");
    // Only the image's environment: nothing of this process's leaks in.
    const env = config.process.env.map(quote).join(" ");
    const script = [
      `mount --bind '${rootfs}' '${rootfs}'`,
      `mount -o remount,bind,ro '${rootfs}'`,
      `cd '${rootfs}'`,
      `exec env -i ${env} ${chroot} --userspec=${config.process.user.uid}:${config.process.user.gid} '${rootfs}' ${quoted}`,
    ].join(" && ");
    return spawnSync("unshare", ["--mount", "sh", "-c", script], { encoding: "utf8" });
  }

  beforeAll(() => {
    first = build(join(work, "a"));
    const unpack = spawnSync("umoci", ["unpack", "--image", `${join(work, "a")}:${version}`, bundle], {
      encoding: "utf8",
    });
    if (unpack.status !== 0) throw new Error(`umoci unpack failed:\n${unpack.stderr}`);
    config = JSON.parse(readFileSync(join(bundle, "config.json"), "utf8")) as OciConfig;
    copyFileSync(join(root, "docs", "examples", "demo", "scaler.yaml"), join(bundle, "rootfs", "tmp", "scaler.yaml"));
    copyFileSync(join(root, "docs", "examples", "demo", "target.yaml"), join(bundle, "rootfs", "tmp", "target.yaml"));
  }, 600_000);

  afterAll(() => {
    rmSync(work, { recursive: true, force: true });
  });

  it("prints its digest and size, and runs `mds-scaler controller` as a non-root user", () => {
    expect(first.output).toMatch(new RegExp(`image: digest ${first.digest}`));
    expect(first.output).toMatch(/image: size \d+ MiB compressed/);
    expect(config.process.args).toEqual(["/usr/local/bin/node", "/app/dist/src/cli/main.js", "controller"]);
    expect(config.process.user).toEqual({ uid: 65532, gid: 65532 });
  });

  it("carries the OCI annotations", () => {
    const index = JSON.parse(readFileSync(join(work, "a", "index.json"), "utf8")) as {
      manifests: { digest: string }[];
    };
    const digest = index.manifests[0]?.digest ?? "";
    const manifest = JSON.parse(readFileSync(join(work, "a", "blobs", ...digest.split(":")), "utf8")) as {
      annotations: Record<string, string>;
    };
    expect(manifest.annotations).toMatchObject({
      "org.opencontainers.image.title": "mds-scaler",
      "org.opencontainers.image.version": version,
      "org.opencontainers.image.licenses": "Apache-2.0",
    });
    expect(manifest.annotations["org.opencontainers.image.revision"]).toBe(commit);
  });

  it("answers --help from its entrypoint in a chroot, as its user, on a read-only root", () => {
    const help = runInImage(["--help"]);
    expect(help.stderr).toBe("");
    expect(help.status).toBe(0);
    expect(help.stdout).toContain("usage: mds-scaler <command>");
    const controllerHelp = runInImage(["controller", "--help"]);
    expect(controllerHelp.status).toBe(0);
    expect(controllerHelp.stdout).toContain("--prometheus-url");
  });

  it("ships the product's commands and simulator, not the test harness or the demo", () => {
    const app = join(bundle, "rootfs", "app", "dist");
    expect(existsSync(join(app, "src", "cli", "main.js"))).toBe(true);
    expect(existsSync(join(app, "src", "sim", "quality", "run.js"))).toBe(true);
    expect(existsSync(join(app, "harness", "kube", "control-plane.js"))).toBe(false);
    expect(existsSync(join(app, "src", "harness"))).toBe(false);
    expect(existsSync(join(app, "demo"))).toBe(false);
    expect(existsSync(join(app, "src", "demo"))).toBe(false);
  });

  it("validates an example scaler against its target inside the image", () => {
    // The demo's scaler is written for its Prometheus, which scrapes every second (its 10 s panic window holds ten).
    const args = ["validate", "-f", "/tmp/scaler.yaml", "--target", "/tmp/target.yaml"];
    const result = runInImage([...args, "--engine-scrape-interval", "1s"]);
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
    expect(result.stdout).toContain("kind: ModelDeploymentScaler");
    expect(result.stdout).toContain("panicThreshold:");
    // At the chart's 15 s the same window reads nothing, and the image's validate says so without refusing.
    const at15 = runInImage(args);
    expect(at15.status).toBe(0);
    expect(at15.stderr).toContain("spec.algorithm.tokenThroughput.panicWindowSeconds = 10: warning:");
    const invalid = runInImage(["validate", "-f", "/tmp/target.yaml"]);
    expect(invalid.status).toBe(1);
    // Three runs inside the image, 12.5 s in CI; a loaded machine takes more than twice that.
  }, 120_000);

  it("has the same digest when built again from the same commit", () => {
    const second = build(join(work, "b"));
    expect(second.digest).toBe(first.digest);
  }, 600_000);
});
