/**
 * The core is pure: it imports nothing that does I/O and never reads the clock
 * or the environment. Two guards prove it: a scan of every core file, and the
 * lint rule itself, fed a probe that breaks each rule.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { ESLint } from "eslint";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..");
const coreDir = join(root, "src", "core");

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return tsFiles(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

const importPattern = /(?:^|\n)\s*(?:import|export)\b[^;]*?\bfrom\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g;

/** Core may import only its own files and these pure libraries. */
const allowedPackages = new Set(["zod"]);

const forbiddenCalls: readonly [RegExp, string][] = [
  [/\bDate\.now\s*\(/, "reads the clock"],
  [/\bnew Date\(\s*\)/, "reads the clock"],
  [/\bperformance\.now\s*\(/, "reads the clock"],
  [/\bprocess\./, "reads the environment"],
  [/\bMath\.random\s*\(/, "is not deterministic"],
  [/\b(?:setTimeout|setInterval|fetch|require)\s*\(/, "does I/O or schedules work"],
  [/\bconsole\./, "logs"],
];

describe("src/core purity", () => {
  const files = tsFiles(coreDir);

  it("has core files to check", () => {
    expect(files.length).toBeGreaterThan(3);
  });

  it.each(files.map((file) => [relative(root, file), file] as const))(
    "%s imports only core files and pure packages",
    (_name, file) => {
      const text = readFileSync(file, "utf8");
      const offending: string[] = [];
      for (const match of text.matchAll(importPattern)) {
        const specifier = match[1] ?? match[2] ?? "";
        if (specifier.startsWith(".")) {
          const resolved = join(file, "..", specifier);
          if (!resolved.startsWith(coreDir)) offending.push(`${specifier} (outside src/core)`);
        } else if (!allowedPackages.has(specifier)) {
          offending.push(specifier);
        }
      }
      expect(offending).toEqual([]);
    },
  );

  it.each(files.map((file) => [relative(root, file), file] as const))(
    "%s never reads the clock or the environment",
    (_name, file) => {
      const code = readFileSync(file, "utf8").replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, "");
      const found = forbiddenCalls
        .filter(([pattern]) => pattern.test(code))
        .map(([pattern, why]) => `${pattern.source} ${why}`);
      expect(found).toEqual([]);
    },
  );
});

describe("the lint rule guarding src/core", () => {
  const eslint = new ESLint({ cwd: root });
  const probes: readonly [string, string][] = [
    ["a node built-in", 'import { readFileSync } from "node:fs";\nexport const f = readFileSync;\n'],
    ["an HTTP client", 'import express from "express";\nexport const e = express;\n'],
    ["the Kubernetes client", 'import * as k8s from "@kubernetes/client-node";\nexport const k = k8s;\n'],
    ["prom-client", 'import { Gauge } from "prom-client";\nexport const g = Gauge;\n'],
    ["an adapter", 'import * as a from "../adapters/prometheus/source.js";\nexport const s = a;\n'],
    ["the clock", "export const t = (): number => Date.now();\n"],
    ["an argument-less Date", "export const t = (): Date => new Date();\n"],
    ["the environment", "export const e = (): string | undefined => process.env.HOME;\n"],
  ];

  // The first lint builds the TypeScript program for typed rules: tens of seconds on a loaded machine.
  it.each(probes)("rejects %s", { timeout: 240_000 }, async (_what, code) => {
    const [result] = await eslint.lintText(code, { filePath: join(coreDir, "api", "quantity.ts") });
    const ruleIds = (result?.messages ?? []).map((m) => m.ruleId);
    expect(ruleIds.some((id) => id?.startsWith("no-restricted"))).toBe(true);
  });

  it("accepts pure code", { timeout: 240_000 }, async () => {
    const [result] = await eslint.lintText('import { z } from "zod";\nexport const s = z.string();\n', {
      filePath: join(coreDir, "api", "quantity.ts"),
    });
    expect((result?.messages ?? []).filter((m) => m.ruleId?.startsWith("no-restricted"))).toEqual([]);
  });
});

describe("layers", () => {
  // Adapters serve the app; an adapter that imports the app (or the CLI built on it) inverts the
  // dependency and drags the whole process into every reuse of the adapter. The one exception is the
  // app's ports file, by type only: an adapter declares which port it implements.
  const adaptersDir = join(root, "src", "adapters");
  const above = [
    ...["app", "cli"].map((dir) => join(root, "src", dir)),
    ...["demo", "harness", "test"].map((dir) => join(root, dir)),
  ];
  const ports = join(root, "src", "app", "ports.js");

  it.each(tsFiles(adaptersDir).map((file) => [relative(root, file), file] as const))(
    "%s imports nothing from the app, the CLI, the demo or the test harness (ports by type only)",
    (_name, file) => {
      const text = readFileSync(file, "utf8");
      const offending = [...text.matchAll(importPattern)]
        .filter((match) => {
          const specifier = match[1] ?? match[2] ?? "";
          if (!specifier.startsWith(".")) return false;
          const resolved = join(file, "..", specifier);
          if (resolved === ports && /^\s*import\s+type\b/.test(match[0])) return false;
          return above.some((dir) => resolved.startsWith(dir + "/"));
        })
        .map((match) => match[1] ?? match[2] ?? "");
      expect(offending).toEqual([]);
    },
  );
});

describe("the shipped tree", () => {
  // The image ships the compiled src only: a src file that imports the demo, the test harness or a test
  // would fail in the image the first time that import runs.
  const srcDir = join(root, "src");

  it.each(tsFiles(srcDir).map((file) => [relative(root, file), file] as const))(
    "%s imports only src files and packages",
    (_name, file) => {
      const offending = [...readFileSync(file, "utf8").matchAll(importPattern)]
        .map((match) => match[1] ?? match[2] ?? "")
        .filter((specifier) => specifier.startsWith(".") && !join(file, "..", specifier).startsWith(srcDir + "/"));
      expect(offending).toEqual([]);
    },
  );

  it("holds no harness or demo folder", () => {
    for (const dir of ["harness", "demo"])
      expect(tsFiles(srcDir).some((f) => f.startsWith(join(srcDir, dir)))).toBe(false);
  });
});
