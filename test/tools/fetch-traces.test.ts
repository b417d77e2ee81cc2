/**
 * tools/fetch-traces.sh against a local mirror of the upstream repositories,
 * served over loopback in the raw.githubusercontent.com layout
 * (<owner>/<repo>/<commit>/<path>): upstream itself cannot be reached from
 * here, so this proves the download, the checksum gate and the local-copy
 * short cut, not the upstream URLs.
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..", "..");
const shared = join(root, "..", "shared", "traces");
const script = join(root, "tools", "fetch-traces.sh");

const sums = readFileSync(join(root, "tools", "traces", "SHA256SUMS"), "utf8")
  .trim()
  .split("\n")
  .map((line) => {
    const [sum, path] = line.split(/\s+/);
    return { sum: sum ?? "", path: path ?? "" };
  });
const sources = readFileSync(join(root, "tools", "traces", "sources.tsv"), "utf8")
  .split("\n")
  .filter((l) => l !== "" && !l.startsWith("#"))
  .map((l) => l.split("\t") as [string, string, string, string]);

/** The mirror's URL path of a local trace path, as the pinned sources say. */
function mirrorPath(path: string): string {
  const row = sources.find(([prefix]) => path.startsWith(prefix));
  if (!row) throw new Error(`no source for ${path}`);
  const [prefix, repo, commit, upstream] = row;
  return `/${repo}/${commit}/${upstream}${path.slice(prefix.length)}`;
}

const sha256 = (bytes: Buffer): string => createHash("sha256").update(bytes).digest("hex");

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(env: Record<string, string>): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn("bash", [script], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    child.once("error", reject);
    child.once("exit", (code) => resolve({ code, stdout, stderr }));
  });
}

describe("tools/fetch-traces.sh", () => {
  const files = new Map(sums.map(({ path }) => [mirrorPath(path), join(shared, path)]));
  const requests: string[] = [];
  /** A path the mirror serves with one byte changed. */
  let tampered: string | undefined;
  let server: Server;
  let baseUrl: string;
  const dirs: string[] = [];
  const freshDir = (): string => {
    const dir = mkdtempSync(join(tmpdir(), "mds-traces-"));
    dirs.push(dir);
    return dir;
  };

  beforeAll(async () => {
    expect(existsSync(shared), `${shared} is missing: the mirror is built from the shared copy`).toBe(true);
    server = createServer((req, res) => {
      const path = decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname);
      requests.push(path);
      const file = files.get(path);
      if (file === undefined) {
        res.writeHead(404).end("not found");
        return;
      }
      const bytes = readFileSync(file);
      if (path === tampered) bytes[0] = (bytes[0] ?? 0) ^ 1;
      res.writeHead(200).end(bytes);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it("fetches every trace at its pinned commit into an empty folder, checks it, and then uses the local copy", async () => {
    const dir = freshDir();
    const first = await run({ MDS_TRACES_DIR: dir, MDS_TRACES_BASE_URL: baseUrl });
    expect(first.stderr).toBe("");
    expect(first.code).toBe(0);
    expect(first.stdout).toContain(`${sums.length} trace files`);
    expect(first.stdout).toContain(`0 present, ${sums.length} fetched`);
    expect(new Set(requests)).toEqual(new Set(files.keys()));
    for (const { sum, path } of sums) expect(sha256(readFileSync(join(dir, path))), path).toBe(sum);
    expect(requests).toContain(
      "/Azure/AzurePublicDataset/b469a113cedca53ddc3bdea71a143dc4b7d8700c/data/AzureLLMInferenceTrace_code.csv",
    );

    const before = requests.length;
    const second = await run({ MDS_TRACES_DIR: dir, MDS_TRACES_BASE_URL: baseUrl });
    expect(second.code).toBe(0);
    expect(second.stdout).toContain(`${sums.length} present, 0 fetched`);
    expect(requests.length).toBe(before);
  }, 180_000);

  it("keeps nothing that does not match its recorded checksum and names the file", async () => {
    const dir = freshDir();
    const victim = "azure_llm_2023/AzureLLMInferenceTrace_code.csv";
    tampered = mirrorPath(victim);
    try {
      const result = await run({
        MDS_TRACES_DIR: dir,
        MDS_TRACES_BASE_URL: baseUrl,
        MDS_TRACES_ONLY: "azure_llm_2023/",
      });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`${victim}: ${baseUrl}${tampered} has sha256`);
      expect(result.stderr).toContain("not kept");
      expect(existsSync(join(dir, victim))).toBe(false);
      expect(existsSync(join(dir, "azure_llm_2023", "AzureLLMInferenceTrace_conv.csv"))).toBe(true);
      // The prefix limits the run to one dataset.
      expect(existsSync(join(dir, "mooncake_fast25"))).toBe(false);
    } finally {
      tampered = undefined;
    }
  }, 180_000);

  it("says which download failed when the upstream cannot be reached", async () => {
    const dir = freshDir();
    const result = await run({
      MDS_TRACES_DIR: dir,
      MDS_TRACES_BASE_URL: `${baseUrl}/nowhere`,
      MDS_TRACES_ONLY: "azure_llm_2023/",
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /azure_llm_2023\/AzureLLMInferenceTrace_code\.csv: download from .*\/nowhere\/.* failed/,
    );
  }, 180_000);
});
