/** `mds-scaler validate`, run in-process with an in-memory io. */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { runCli } from "../../src/cli/commands.js";
import type { CliIo } from "../../src/cli/io.js";

interface Captured {
  readonly io: CliIo;
  readonly out: () => string;
  readonly err: () => string;
}

/** Files are read from the repository unless overridden by `files`. */
function capture(files: Readonly<Record<string, string>> = {}): Captured {
  let out = "";
  let err = "";
  return {
    io: {
      stdout: (t) => void (out += t),
      stderr: (t) => void (err += t),
      readFile: (path) => files[path] ?? readFileSync(path, "utf8"),
    },
    out: () => out,
    err: () => err,
  };
}

const example = "test/fixtures/spec-examples/token-throughput.yaml";
const epd = "test/fixtures/targets/encode-prefill-decode.yaml";

describe("mds-scaler validate", () => {
  it("prints the defaulted object and exits 0", async () => {
    const c = capture();
    expect(await runCli(["validate", "-f", example, "--target", epd], c.io)).toBe(0);
    const printed = parse(c.out());
    expect(printed.spec.algorithm.tokenThroughput.stableWindowSeconds).toBe(180);
    expect(printed.spec.behavior.scaleDown.stabilizationWindowSeconds).toBe(300);
    expect(printed.spec.rebalance.policy).toBe("Opposing");
    expect(c.err()).toBe("");
  });

  it("accepts --flag=value forms", async () => {
    const c = capture();
    expect(await runCli(["validate", `--filename=${example}`, `--target=${epd}`], c.io)).toBe(0);
  });

  it("prints every problem with path, value and reason and exits 1", async () => {
    const c = capture({
      "bad.yaml": [
        "apiVersion: worker.gpustack.ai/v1",
        "kind: ModelDeploymentScaler",
        "metadata: {name: s}",
        "spec:",
        "  targetRef: {name: llm-serving}",
        "  roles:",
        "    - {name: prefill, maxReplicas: 2000}",
        "    - {name: prefill, maxReplicas: 2}",
        "  ratios:",
        "    - {numeratorRole: prefill, denominatorRole: decode, min: 0.5}",
      ].join("\n"),
    });
    expect(await runCli(["validate", "-f", "bad.yaml"], c.io)).toBe(1);
    expect(c.out()).toBe("");
    const lines = c.err().trim().split("\n");
    expect(lines[0]).toBe("bad.yaml: 4 problems");
    expect(lines).toContain("spec.roles[0].maxReplicas = 2000: must be at most 1024");
    expect(lines).toContain('spec.ratios[0].min = 0.5: must be an integer or a quoted quantity such as "0.5"');
    expect(lines).toContain('spec.roles[1].name = "prefill": duplicates spec.roles[0].name');
    expect(lines).toContain(
      'spec.ratios[0].denominatorRole = "decode": is not a scaled role: add it to spec.roles with bounds',
    );
  });

  it("runs the target checks when a target is given", async () => {
    const c = capture();
    expect(
      await runCli(["validate", "-f", example, "--target", "test/fixtures/targets/prefill-decode.yaml"], c.io),
    ).toBe(1);
    expect(c.err()).toContain('spec.roles[0].name = "encode": is not a role of ModelDeployment "llm-serving"');
  });

  it("reports a target the scaler cannot read", async () => {
    const c = capture({ "md.yaml": "kind: ModelDeployment\nmetadata: {name: x}\nspec: {roles: [{name: a}]}\n" });
    expect(await runCli(["validate", "-f", example, "--target", "md.yaml"], c.io)).toBe(1);
    expect(c.err()).toContain("target.spec.roles[0].replicas = <missing>: is required");
  });

  it("reports YAML syntax errors and unreadable files", async () => {
    const broken = capture({ "broken.yaml": "spec: [unclosed" });
    expect(await runCli(["validate", "-f", "broken.yaml"], broken.io)).toBe(1);
    expect(broken.err()).toContain("broken.yaml:");
    const missing = capture();
    expect(await runCli(["validate", "-f", "does-not-exist.yaml"], missing.io)).toBe(1);
    expect(missing.err()).toContain("cannot read does-not-exist.yaml");
  });

  it("validates every document of a multi-document file", async () => {
    const text = readFileSync(example, "utf8");
    const c = capture({ "two.yaml": `${text}---\n${text.replace("maxReplicas: 4", "maxReplicas: 0")}` });
    expect(await runCli(["validate", "-f", "two.yaml"], c.io)).toBe(1);
    expect(c.err()).toContain("two.yaml (document 2): 1 problem");
  });

  it("warns, as admission does, about a window shorter than two engine scrapes, and still exits 0", async () => {
    const scaler = [
      "apiVersion: worker.gpustack.ai/v1",
      "kind: ModelDeploymentScaler",
      "metadata: {name: llm, namespace: default}",
      "spec:",
      "  targetRef: {name: llm}",
      "  roles: [{name: server, maxReplicas: 4}]",
      '  algorithm: {tokenThroughput: {serverTargetTokensPerSecond: "4000", panicWindowSeconds: 20}}',
      "",
    ].join("\n");
    const at15 = capture({ "short.yaml": scaler });
    expect(await runCli(["validate", "-f", "short.yaml"], at15.io)).toBe(0);
    expect(at15.err()).toBe(
      "spec.algorithm.tokenThroughput.panicWindowSeconds = 20: warning: 20 s holds under two engine scrapes of 15 s, so it never reads a rate: panic never engages, and latency and token-rate Proportional read the stable window; write at least 30 s\n",
    );
    expect(parse(at15.out()).spec.algorithm.tokenThroughput.panicWindowSeconds).toBe(20);
    const at10 = capture({ "short.yaml": scaler });
    expect(await runCli(["validate", "-f", "short.yaml", "--engine-scrape-interval", "10s"], at10.io)).toBe(0);
    expect(at10.err()).toBe("");
    const bad = capture({ "short.yaml": scaler });
    expect(await runCli(["validate", "-f", "short.yaml", "--engine-scrape-interval", "15"], bad.io)).toBe(2);
    expect(bad.err()).toContain('--engine-scrape-interval: "15" is not a Prometheus duration above zero');
  });

  it.each([[["validate"]], [["validate", "-f"]], [["validate", "-f", example, "--bogus"]]])(
    "exits 2 on bad usage %j",
    async (args) => {
      const c = capture();
      expect(await runCli(args, c.io)).toBe(2);
      expect(c.err()).toContain("usage: mds-scaler validate");
    },
  );
});

describe("the dispatcher", () => {
  it("lists the registered commands and refuses unknown ones", async () => {
    const help = capture();
    expect(await runCli(["--help"], help.io)).toBe(0);
    expect(help.out()).toContain("validate");
    expect(help.out()).toContain("plan");
    const unknown = capture();
    expect(await runCli(["frobnicate"], unknown.io)).toBe(2);
    expect(unknown.err()).toContain('unknown command "frobnicate"');
  });
});

describe("the binary", () => {
  it("exits with the command's code and writes to real stdio", async () => {
    const { spawnSync } = await import("node:child_process");
    const run = spawnSync(process.execPath, ["--import", "tsx", "src/cli/main.ts", "validate", "-f", example], {
      encoding: "utf8",
    });
    expect(run.status).toBe(0);
    expect(parse(run.stdout).kind).toBe("ModelDeploymentScaler");
  });
});
