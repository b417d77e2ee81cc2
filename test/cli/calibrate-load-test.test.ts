/**
 * `mds-scaler calibrate --trace`: the load test in one command, on the Azure conversation trace's first
 * 15 minutes. It runs the benchmark's rule (`runLoadTest`), so it must give the figure the documented
 * example scaler carries (docs/examples/simulate-scaler.yaml, written from the manual steps), and refuse
 * what it cannot load-test, naming the flag or the roles.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { runCalibrate } from "../../src/cli/calibrate.js";
import { validateScaler } from "../../src/core/api/validation.js";
import { loadTrace } from "../../src/sim/quality/traces.js";
import { memoryIo } from "../support/memory-io.js";
import { tracesDir } from "../sim/quality/fixtures.js";

const trace = join(tracesDir, "azure_llm_2023/AzureLLMInferenceTrace_conv.csv");
const example = new URL("../../docs/examples/simulate-scaler.yaml", import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), "mds-load-test-"));

describe("calibrate --trace", () => {
  it("load-tests the trace's first 15 minutes and writes the example scaler's own figure", async () => {
    const io = memoryIo();
    expect(await runCalibrate(["--trace", trace, "-f", example, "-o", "scaler"], io)).toBe(0);
    const scaler = validateScaler(parse(io.out));
    expect(scaler.ok).toBe(true);
    const written = (parse(io.out) as { spec: { algorithm: { tokenThroughput: Record<string, string> } } }).spec
      .algorithm.tokenThroughput;
    const shipped = (parse(readExample()) as { spec: { algorithm: { tokenThroughput: Record<string, string> } } }).spec
      .algorithm.tokenThroughput;
    expect(written["serverTargetTokensPerSecond"]).toBe(shipped["serverTargetTokensPerSecond"]);
    expect(written["ttftTargetMilliseconds"]).toBe(shipped["ttftTargetMilliseconds"]);
  }, 120_000);

  it("gives the same figure from the same requests in another format, as a user's converted trace", async () => {
    // The plain CSV with its columns in another order, gzipped: the format is read from the header.
    const requests = loadTrace("azure-conv", { tracesDir }).requests.filter((r) => r.arrivalSeconds < 1000);
    const converted = join(dir, "my-trace.csv.gz");
    writeFileSync(
      converted,
      gzipSync(
        ["prompt_tokens,arrival_seconds,output_tokens"]
          .concat(requests.map((r) => `${r.promptTokens},${r.arrivalSeconds},${r.outputTokens}`))
          .join("\n"),
      ),
    );
    const figure = async (file: string): Promise<string> => {
      const io = memoryIo();
      expect(await runCalibrate(["--trace", file, "-f", example, "-o", "scaler"], io)).toBe(0);
      return (parse(io.out) as { spec: { algorithm: { tokenThroughput: Record<string, string> } } }).spec.algorithm
        .tokenThroughput["serverTargetTokensPerSecond"] as string;
    };
    expect(await figure(converted)).toBe(await figure(trace));
  }, 240_000);

  it("says which fleets it ran and shows the bands", async () => {
    const io = memoryIo();
    expect(await runCalibrate(["--trace", trace, "-f", example, "--duration", "900"], io)).toBe(0);
    expect(io.out).toMatch(/a load test in the simulator on .*first 900 s: static fleets of 2, 1 replicas/);
    expect(io.out).toMatch(/7000–8000\s+6\s+0\.0 %.*broke/);
  }, 120_000);

  it("fills the fleets its last step passed over when asked: none between 2 and 1, so the same fleets and figure", async () => {
    const io = memoryIo();
    expect(await runCalibrate(["--trace", trace, "-f", example, "--load-test-fill", "on"], io)).toBe(0);
    expect(io.out).toMatch(/static fleets of 2, 1 replicas/);
    expect(io.out).toContain('serverTargetTokensPerSecond: "4150"');
    // Five copies step from 10 to 6 to 4, where the targets break: the fill serves 5 too.
    const copies = memoryIo();
    expect(
      await runCalibrate(["--trace", trace, "-f", example, "--copies", "5", "--load-test-fill", "on"], copies),
    ).toBe(0);
    expect(copies.out).toMatch(/static fleets of 10, 6, 4, 5 replicas/);
  }, 240_000);

  it("checks the figure on the slice from maxReplicas ready replicas when asked, and leaves it where no minute broke", async () => {
    const io = memoryIo();
    expect(await runCalibrate(["--trace", trace, "-f", example, "--slice-check", "on"], io)).toBe(0);
    // The example replaces a fleet of 16: capped there, the scaler with 4150 kept every minute the fleet kept.
    expect(io.out).toContain(
      "slice check: the scaler replayed the slice from 16 ready replicas, capped there; the fixed fleet of 16 kept every minute; 4150 broke none: the figure stands",
    );
    // Off by default (docs/quality.md, thirteenth run).
    const off = memoryIo();
    expect(await runCalibrate(["--trace", trace, "-f", example], off)).toBe(0);
    expect(off.out).not.toContain("slice check");
    expect(off.out).toContain('serverTargetTokensPerSecond: "4150"');
  }, 120_000);

  describe("the slice check, on a slice whose demand triples at once", () => {
    /** 3 requests/s, then 9 from `jumpSeconds` on (2 then 8 for the second case): a swing faster than a replica starts. */
    const jumpTrace = (name: string, low: number, high: number, jumpSeconds: number): string => {
      const lines = ["arrival_seconds,prompt_tokens,output_tokens"];
      for (let t = 0, i = 0; t < 1200; i++) {
        t += 1 / (t < jumpSeconds ? low : high);
        lines.push(`${t.toFixed(3)},${800 + (((i + 1) * 37) % 600)},${150 + (((i + 1) * 13) % 200)}`);
      }
      const path = join(dir, name);
      writeFileSync(path, lines.join("\n"));
      return path;
    };
    const scalerAt = (maxReplicas: number): string => {
      const path = join(dir, `scaler-${maxReplicas}.yaml`);
      writeFileSync(path, readExample().replace("maxReplicas: 16", `maxReplicas: ${maxReplicas}`));
      return path;
    };
    const figureIn = (scaler: string): string =>
      (parse(scaler) as { spec: { algorithm: { tokenThroughput: Record<string, string> } } }).spec.algorithm
        .tokenThroughput["serverTargetTokensPerSecond"] as string;

    it("lowers the figure until the scaler capped at the fleet breaks no minute the fleet keeps", async () => {
      const trace = jumpTrace("jump-3-9.csv", 3, 9, 540);
      const off = memoryIo();
      expect(
        await runCalibrate(["--trace", trace, "-f", scalerAt(6), "-o", "scaler", "--slice-check", "off"], off),
      ).toBe(0);
      expect(figureIn(off.out)).toBe("6060");
      const io = memoryIo();
      expect(await runCalibrate(["--trace", trace, "-f", scalerAt(6), "--slice-check", "on"], io)).toBe(0);
      expect(io.out).toContain(
        "slice check: the scaler replayed the slice from 6 ready replicas, capped there; the fixed fleet of 6 kept every minute; 6060 broke minute(s) 10, 12; 5450 broke minute(s) 10, 12; 4900 broke minute(s) 10, 12; 4410 broke minute(s) 10, 12; 3960 broke none: the figure is lowered to 3960",
      );
      const written = memoryIo();
      expect(
        await runCalibrate(["--trace", trace, "-f", scalerAt(6), "-o", "scaler", "--slice-check", "on"], written),
      ).toBe(0);
      expect(figureIn(written.out)).toBe("3960");
      expect(written.out).toMatch(
        /^# server: 3960 tok\/s per ready replica, .*; lowered from 6060 by the slice check$/m,
      );
    }, 120_000);

    it("does not count a minute the fleet breaks itself", async () => {
      // A fleet of one breaks every minute after the jump; capped at one, the scaler is that fleet.
      const io = memoryIo();
      expect(
        await runCalibrate(
          ["--trace", jumpTrace("jump-3-9.csv", 3, 9, 540), "-f", scalerAt(1), "--slice-check", "on"],
          io,
        ),
      ).toBe(0);
      expect(io.out).toContain(
        "the fixed fleet of 1 broke minute(s) 10, 11, 12, 13, 14, 15 itself; 6060 broke none: the figure stands",
      );
    }, 120_000);

    it("says so, and writes the last figure tried, when even that one breaks a minute", async () => {
      const io = memoryIo();
      const trace = jumpTrace("jump-2-8.csv", 2, 8, 600);
      expect(await runCalibrate(["--trace", trace, "-f", scalerAt(6), "-o", "scaler", "--slice-check", "on"], io)).toBe(
        0,
      );
      expect(figureIn(io.out)).toBe("3520");
      expect(io.out).toMatch(/lowered, and still short, from 5390 by the slice check$/m);
      const table = memoryIo();
      expect(await runCalibrate(["--trace", trace, "-f", scalerAt(6), "--slice-check", "on"], table)).toBe(0);
      expect(table.out).toContain(
        "even 3520 broke a minute the fleet kept: the demand swings faster than replicas start; keep the fixed fleet (minReplicas at its size) or expect misses",
      );
      const json = memoryIo();
      expect(await runCalibrate(["--trace", trace, "-f", scalerAt(6), "-o", "json", "--slice-check", "on"], json)).toBe(
        0,
      );
      // The same outcome's name in every output: "still short" (the scaler file's header, the bench's column).
      expect((JSON.parse(json.out) as { sliceCheck: unknown }).sliceCheck).toMatchObject({
        role: "server",
        outcome: "still short",
        figure: 3520,
      });
    }, 120_000);
  });

  it.each([
    [["--trace", "azure-conv"], /--trace needs -f <scaler.yaml>/],
    [["--trace", "azure-conv", "-f", "s.yaml", "--duration", "15m"], /--duration must be a positive number, got "15m"/],
    [["--trace", "azure-conv", "-f", "s.yaml", "--copies", "0"], /--copies must be a positive integer, got "0"/],
    [["--trace", "azure-conv", "-f", "s.yaml", "--slice-check", "yes"], /--slice-check: "yes" is not one of on, off/],
    [["--trace", "azure-conv", "-f", "s.yaml", "--load-test-fill", "1"], /--load-test-fill: "1" is not one of on, off/],
    [
      ["--trace", "azure-conv", "--from-simulation", "run.json", "-f", "s.yaml"],
      /give one of --from-simulation, --prometheus-url and --trace, not --from-simulation and --trace/,
    ],
  ])("refuses %j with exit 2, naming the flag", async (args, named) => {
    const io = memoryIo((path) => {
      throw new Error(`read ${path}`);
    });
    expect(await runCalibrate(args, io)).toBe(2);
    expect(io.err).toMatch(named);
  });

  it("refuses a prefill/decode scaler with exit 1, naming its roles", async () => {
    const path = join(dir, "pd.yaml");
    writeFileSync(
      path,
      `apiVersion: worker.gpustack.ai/v1
kind: ModelDeploymentScaler
metadata: {name: llm, namespace: default}
spec:
  targetRef: {name: llm}
  roles: [{name: prefill, maxReplicas: 8}, {name: decode, maxReplicas: 8}]
  algorithm:
    tokenThroughput: {prefillTargetTokensPerSecond: "4000", decodeTargetTokensPerSecond: "800"}
`,
    );
    const io = memoryIo();
    expect(await runCalibrate(["--trace", trace, "-f", path], io)).toBe(1);
    expect(io.err).toContain("the load test serves one Server role, and the scaler has 2 (prefill, decode)");
  });
});

function readExample(): string {
  return memoryIo().readFile(example);
}
