/**
 * Hostile input files for `validate -f` and `plan -f`, through the real
 * binary: an alias bomb ("billion laughs"), broken syntax and nesting deep
 * enough to exhaust a recursive parser. Each is refused with exit code 1 and
 * a message naming the file; none crashes with a stack trace.
 */
import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { maxYamlAliases, parseYamlDocuments } from "../../src/cli/yaml-documents.js";

const root = join(import.meta.dirname, "..", "..");

/** Nine levels of nine aliases: 9^9 (387 million) strings once expanded, 1 KiB on disk. */
function billionLaughs(): string {
  const lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
  let previous = "a";
  for (const name of "bcdefghi") {
    lines.push(`${name}: &${name} [${Array.from({ length: 9 }, () => `*${previous}`).join(",")}]`);
    previous = name;
  }
  return `${lines.join("\n")}\n`;
}

const malformed = "apiVersion: worker.gpustack.ai/v1alpha1\nkind: [ModelDeploymentScaler\n  spec: {roles: 1\n";
const deeplyNested = `${"[".repeat(200_000)}${"]".repeat(200_000)}\n`;

let dir: string;
const files: Record<string, string> = {};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mds-hostile-yaml-"));
  for (const [name, text] of Object.entries({
    "bomb.yaml": billionLaughs(),
    "malformed.yaml": malformed,
    "deep.yaml": deeplyNested,
  })) {
    files[name] = join(dir, name);
    await writeFile(files[name], text);
  }
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function runBinary(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", join(root, "src", "cli", "main.ts"), ...args], {
    cwd: root,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`mds-scaler ${args.join(" ")} still running after 100 s`));
    }, 100_000);
    child.once("exit", (exitCode) => {
      clearTimeout(timer);
      resolve(exitCode);
    });
  });
  return { code, stdout, stderr };
}

const noStackTrace = /\n\s+at .+:\d+:\d+/;

describe.each(["validate", "plan"])("mds-scaler %s -f with a hostile document", (command) => {
  // A process start through tsx alone can take tens of seconds on a loaded machine; the limit catches a hang.
  it("refuses an alias bomb, naming the file and the alias limit", { timeout: 120_000 }, async () => {
    const run = await runBinary([command, "-f", files["bomb.yaml"] ?? ""]);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr).toContain(`${files["bomb.yaml"]}: not read:`);
    expect(run.stderr).toContain(`the limit is ${maxYamlAliases} alias expansions`);
    expect(run.stderr).not.toMatch(noStackTrace);
  });

  it("refuses broken syntax, naming the file and the line", { timeout: 120_000 }, async () => {
    const run = await runBinary([command, "-f", files["malformed.yaml"] ?? ""]);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr).toContain(`${files["malformed.yaml"]}: `);
    expect(run.stderr).toMatch(/at line 2, column \d+/);
    expect(run.stderr).not.toMatch(noStackTrace);
  });
});

describe("parseYamlDocuments", () => {
  it("returns the documents of a harmless file, aliases included", () => {
    expect(parseYamlDocuments("a: &x [1, 2]\nb: *x\n---\nc: 3\n", "ok.yaml")).toEqual([
      { a: [1, 2], b: [1, 2] },
      { c: 3 },
    ]);
  });

  it("refuses nesting deep enough to exhaust the parser's stack, naming the file", () => {
    const result = parseYamlDocuments(deeplyNested, "deep.yaml");
    expect(typeof result).toBe("string");
    expect(result).toMatch(/^deep\.yaml: /);
  });

  it("reads a document below the alias limit and refuses one far above it", () => {
    const withAliases = (n: number): string =>
      `x: &x 1\nlist:\n${Array.from({ length: n }, () => "  - *x").join("\n")}\n`;
    expect(parseYamlDocuments(withAliases(maxYamlAliases - 1), "below.yaml")).not.toBeTypeOf("string");
    expect(parseYamlDocuments(withAliases(maxYamlAliases * 20), "over.yaml")).toMatch(/^over\.yaml: not read: /);
  });
});
