/**
 * `mds-scaler simulate` end to end on a slice of the real Azure conversation
 * trace: the printed summary, JSON with per-request latency, errors that name
 * the flag or field, and the HTML report rendered in headless Chromium with
 * every chart found.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runSimulate } from "../../src/cli/simulate.js";
import { renderedDom } from "../support/chromium.js";
import { memoryIo } from "../support/memory-io.js";
import { reportCharts } from "../../src/sim/quality/report.js";
import { tracesDir } from "../sim/quality/fixtures.js";

const dir = mkdtempSync(join(tmpdir(), "mds-simulate-"));
const conv = readFileSync(join(tracesDir, "azure_llm_2023/AzureLLMInferenceTrace_conv.csv"), "utf8");
const slicePath = join(dir, "conv-slice.csv");
// The first 3000 requests: about nine minutes.
writeFileSync(slicePath, conv.split("\n").slice(0, 3001).join("\n"));
const scalerPath = join(dir, "scaler.yaml");
writeFileSync(
  scalerPath,
  `apiVersion: worker.gpustack.ai/v1
kind: ModelDeploymentScaler
metadata: {name: llm, namespace: default}
spec:
  targetRef: {name: llm}
  mode: Active
  roles: [{name: server, maxReplicas: 8}]
  algorithm:
    tokenThroughput: {serverTargetTokensPerSecond: "2000", ttftTargetMilliseconds: "1500"}
`,
);

describe("mds-scaler simulate", () => {
  it("prints attainment, GPU-hours and scale events of a run decided by the planner", () => {
    const io = memoryIo();
    expect(runSimulate(["--trace", slicePath, "--scaler", scalerPath], io)).toBe(0);
    expect(io.out).toMatch(/requests\s+3000\n/);
    expect(io.out).toMatch(/SLO attainment \(TTFT and ITL\)\s+\d+\.\d\d%/);
    expect(io.out).toMatch(/GPU-hours\s+\d+\.\d{3}/);
    const events = Number(/scale events\s+(\d+)/.exec(io.out)?.[1]);
    expect(events).toBeGreaterThan(0);
  });

  it("--latency-guard-reading literal reads TTFT as the specification words it, and the run differs", () => {
    // A 500 ms TTFT target: the slice's prompts alone breach it, without waiting behind others.
    const strict = join(dir, "strict-scaler.yaml");
    writeFileSync(
      strict,
      readFileSync(scalerPath, "utf8").replace('ttftTargetMilliseconds: "1500"', 'ttftTargetMilliseconds: "500"'),
    );
    const run = (reading: string) => {
      const io = memoryIo();
      expect(
        runSimulate(["--trace", slicePath, "--scaler", strict, "--latency-guard-reading", reading], io),
        io.err,
      ).toBe(0);
      return Number(/GPU-hours\s+(\d+\.\d+)/.exec(io.out)?.[1]);
    };
    expect(run("literal")).toBeGreaterThan(run("queueing"));
  });

  it("runs the documented example scaler and fleet", () => {
    const example = (name: string) => new URL(`../../docs/examples/${name}`, import.meta.url).pathname;
    const io = memoryIo();
    const args = [
      "--trace",
      slicePath,
      "--scaler",
      example("simulate-scaler.yaml"),
      "--fleet",
      example("simulate-fleet.yaml"),
    ];
    expect(runSimulate(args, io), io.err).toBe(0);
    expect(io.out).toMatch(/policy\s+mds-scaler TokenThroughput/);
  });

  it("runs the documented prefill/decode example: both roles scaled, GPU-hours per role", () => {
    const example = (name: string) => new URL(`../../docs/examples/${name}`, import.meta.url).pathname;
    const io = memoryIo();
    const args = [
      "--trace",
      slicePath,
      "--scaler",
      example("simulate-pd-scaler.yaml"),
      "--fleet",
      example("simulate-pd-fleet.yaml"),
    ];
    expect(runSimulate(args, io), io.err).toBe(0);
    expect(io.out).toMatch(/requests\s+3000\n/);
    expect(io.out).toMatch(/unfinished\s+0\n/);
    const hours = (role: string) => Number(new RegExp(`GPU-hours ${role}\\s+(\\d+\\.\\d+)`).exec(io.out)?.[1]);
    expect(hours("prefill")).toBeGreaterThan(0);
    expect(hours("decode")).toBeGreaterThan(0);
    const total = Number(/GPU-hours\s+(\d+\.\d+) \(/.exec(io.out)?.[1]);
    expect(hours("prefill") + hours("decode")).toBeCloseTo(total, 2);
  });

  it("reads the preset, GPUs per replica and routing from the fleet file; GPU-hours count the GPUs", () => {
    const fleetOf = (name: string, text: string): string => {
      const path = join(dir, name);
      writeFileSync(path, text);
      return path;
    };
    const summary = (fleet: string) => {
      const io = memoryIo();
      expect(runSimulate(["--trace", slicePath, "--scaler", scalerPath, "--fleet", fleet], io), io.err).toBe(0);
      const m = /GPU-hours\s+(\d+\.\d+) \((\d+\.\d+) replica-hours × (\d+) GPUs\)/.exec(io.out);
      expect(m, io.out).not.toBeNull();
      return { gpuHours: Number(m?.[1]), replicaHours: Number(m?.[2]), gpus: Number(m?.[3]) };
    };
    const seventy = summary(fleetOf("70b.yaml", "preset: llama-3.1-70b-4xh100\n"));
    expect(seventy.gpus).toBe(4);
    expect(seventy.gpuHours).toBeCloseTo(4 * seventy.replicaHours, 2);
    const eight = summary(fleetOf("8b.yaml", "preset: llama-3.1-8b-1xh100\nrouting: leastOutstandingRequests\n"));
    expect(eight.gpus).toBe(1);
    expect(eight.gpuHours).toBeCloseTo(eight.replicaHours, 3);
    const eightOnTwo = summary(fleetOf("8b-2.yaml", "preset: llama-3.1-8b-1xh100\ngpusPerReplica: 2\n"));
    expect(eightOnTwo.gpus).toBe(2);
    expect(eightOnTwo.gpuHours).toBeCloseTo(2 * eightOnTwo.replicaHours, 2);
    const io = memoryIo();
    const bad = fleetOf("bad-preset.yaml", "preset: llama-3.1-8b-1xa100\nrouting: random\n");
    expect(runSimulate(["--trace", slicePath, "--scaler", scalerPath, "--fleet", bad], io)).toBe(1);
    expect(io.err).toMatch(/bad-preset\.yaml: preset: /);
    expect(io.err).toMatch(/bad-preset\.yaml: routing: /);
  });

  it("-o json carries per-request TTFT and ITL for every arrival", () => {
    const io = memoryIo();
    expect(runSimulate(["--trace", slicePath, "--scaler", scalerPath, "-o", "json"], io)).toBe(0);
    const out = JSON.parse(io.out) as { requests: { ttftSeconds: number | null }[]; completed: number };
    expect(out.requests).toHaveLength(3000);
    expect(out.requests.filter((r) => r.ttftSeconds !== null)).toHaveLength(out.completed);
    // --json-requests off: the same run without the list, its minutes and attainment kept.
    const short = memoryIo();
    expect(
      runSimulate(["--trace", slicePath, "--scaler", scalerPath, "-o", "json", "--json-requests", "off"], short),
    ).toBe(0);
    const without = JSON.parse(short.out) as { requests: unknown; attainment: unknown; minutes: unknown[] };
    // `requests` is then the run's count of them, as in the table.
    expect(without.requests).toBe(3000);
    expect(without.attainment).toEqual((JSON.parse(io.out) as typeof without).attainment);
    expect(without.minutes.length).toBeGreaterThan(0);
    expect(short.out.length).toBeLessThan(io.out.length / 2);
  });

  it("--duration and --from cut the trace in two parts that share no request", () => {
    const requestsOf = (args: string[]): number[] => {
      const io = memoryIo();
      expect(runSimulate(["--trace", slicePath, "--scaler", scalerPath, "-o", "json", ...args], io)).toBe(0);
      return (JSON.parse(io.out) as { requests: { arrivalSeconds: number }[] }).requests.map((r) => r.arrivalSeconds);
    };
    const before = requestsOf(["--duration", "300"]);
    const after = requestsOf(["--from", "300"]);
    expect(before.length).toBeGreaterThan(0);
    expect(after.length).toBeGreaterThan(0);
    expect(before.length + after.length).toBe(3000);
    expect(Math.max(...before)).toBeLessThan(300);
    // The replay after the cut starts at zero.
    expect(Math.min(...after)).toBeLessThan(5);
    const io = memoryIo();
    expect(runSimulate(["--trace", slicePath, "--scaler", scalerPath, "--from", "99999"], io)).toBe(1);
    expect(io.err).toMatch(/--from: 99999 is not before the trace's end/);
  });

  it("--oracle replays the oracle: at 99 % with no more GPU-hours than the smallest fixed fleet reaching it", () => {
    const io = memoryIo();
    expect(runSimulate(["--trace", slicePath, "--oracle", "-o", "json"], io), io.err).toBe(0);
    const oracle = JSON.parse(io.out) as {
      policy: string;
      attainment: { both: number };
      gpuHours: number;
      oracle: { attainment: number };
      scaler?: unknown;
    };
    expect(oracle.policy).toMatch(/^oracle \((oracle-search|static)/);
    expect(oracle.oracle).toEqual({ attainment: 0.99 });
    expect(oracle.scaler).toBeUndefined();
    expect(oracle.attainment.both).toBeGreaterThanOrEqual(0.99);
    const table = memoryIo();
    expect(runSimulate(["--trace", slicePath, "--oracle"], table)).toBe(0);
    const named =
      /oracle search\s+(\d+) schedules and (\d+) fixed fleets run; the smallest fixed fleet reaching 99 %: (\d+) replicas, ([\d.]+) GPU-hours/.exec(
        table.out,
      );
    expect(named, table.out).not.toBeNull();
    const [replicas, fleetGpuHours] = [Number(named?.[3]), Number(named?.[4])];
    expect(oracle.gpuHours).toBeLessThanOrEqual(fleetGpuHours);
    // The fleet it names, run as a scaler pinned at that size, reaches 99 % at the same GPU-hours.
    const pinned = join(dir, "pinned-scaler.yaml");
    writeFileSync(
      pinned,
      readFileSync(scalerPath, "utf8").replace("maxReplicas: 8", `minReplicas: ${replicas}, maxReplicas: ${replicas}`),
    );
    const fleet = join(dir, "pinned-fleet.yaml");
    writeFileSync(fleet, `initialReplicas: ${replicas}\n`);
    const run = memoryIo();
    expect(runSimulate(["--trace", slicePath, "--scaler", pinned, "--fleet", fleet, "-o", "json"], run), run.err).toBe(
      0,
    );
    const pinnedRun = JSON.parse(run.out) as { attainment: { both: number }; gpuHours: number };
    expect(pinnedRun.attainment.both).toBeGreaterThanOrEqual(0.99);
    expect(pinnedRun.gpuHours).toBeCloseTo(fleetGpuHours, 2);
  });

  it("--oracle-attainment searches the oracle at another share of requests within the SLO", () => {
    const io = memoryIo();
    expect(
      runSimulate(["--trace", slicePath, "--oracle", "--oracle-attainment", "99.9", "-o", "json"], io),
      io.err,
    ).toBe(0);
    const run = JSON.parse(io.out) as { attainment: { both: number }; oracle: { attainment: number } };
    expect(run.oracle).toEqual({ attainment: 0.999 });
    expect(run.attainment.both).toBeGreaterThanOrEqual(0.999);
    const table = memoryIo();
    expect(runSimulate(["--trace", slicePath, "--oracle", "--oracle-attainment", "99.9"], table)).toBe(0);
    expect(table.out).toMatch(/the smallest fixed fleet reaching 99\.9 %: \d+ replicas/);
  });

  it("names the flag or field of bad input", () => {
    const badFleet = join(dir, "fleet.yaml");
    writeFileSync(badFleet, "coldStartSeconds: {min: 100, max: 10}\n");
    const encodeFleet = join(dir, "encode-fleet.yaml");
    writeFileSync(encodeFleet, "roles: [{name: enc, kind: Encode}]\n");
    const decodeFirst = join(dir, "decode-first-fleet.yaml");
    writeFileSync(decodeFirst, "roles: [{name: decode, kind: Decode}, {name: prefill, kind: Prefill}]\n");
    const cases: [string[], RegExp, number][] = [
      [
        ["--trace", slicePath, "--scaler", scalerPath, "--fleet", encodeFleet],
        /encode-fleet\.yaml: roles\.0\.kind: /,
        1,
      ],
      [
        [
          "--trace",
          slicePath,
          "--scaler",
          new URL("../../docs/examples/simulate-pd-scaler.yaml", import.meta.url).pathname,
          "--fleet",
          decodeFirst,
        ],
        /fleet\.roles: one Server role, or a Prefill role then a Decode role/,
        1,
      ],
      [["--scaler", scalerPath], /--trace is required/, 2],
      [["--trace", slicePath], /--scaler or --oracle is required/, 2],
      [["--trace", slicePath, "--scaler", scalerPath, "--oracle"], /give --scaler or --oracle, not both/, 2],
      [
        ["--trace", slicePath, "--scaler", scalerPath, "--oracle-attainment", "99.5"],
        /--oracle-attainment applies to --oracle only, got --oracle-attainment 99\.5 without it/,
        2,
      ],
      [
        ["--trace", slicePath, "--scaler", scalerPath, "-o", "json", "--json-requests", "no"],
        /--json-requests must be on or off, got "no"/,
        2,
      ],
      [
        ["--trace", slicePath, "--scaler", scalerPath, "--json-requests", "off"],
        /--json-requests applies to -o json only, got --json-requests off with -o table/,
        2,
      ],
      [
        ["--trace", slicePath, "--oracle", "--oracle-attainment", "101"],
        /--oracle-attainment must be a percentage above 0 and at most 100, got "101"/,
        2,
      ],
      [
        ["--trace", slicePath, "--oracle", "--fleet", decodeFirst],
        /decode-first-fleet\.yaml: roles: the oracle schedules one Server role, got \["Decode","Prefill"\]/,
        1,
      ],
      [
        ["--trace", slicePath, "--scaler", scalerPath, "--speedup", "0"],
        /--speedup must be a positive number, got "0"/,
        2,
      ],
      [["--trace", "nope", "--scaler", scalerPath], /"nope" is neither a trace name/, 1],
      [
        ["--trace", slicePath, "--scaler", scalerPath, "--latency-guard-reading", "strict"],
        /--latency-guard-reading: "strict" is not one of queueing, literal/,
        2,
      ],
      [
        ["--trace", slicePath, "--scaler", scalerPath, "--fleet", badFleet],
        /coldStartSeconds: max must be at least min/,
        1,
      ],
    ];
    for (const [args, message, code] of cases) {
      const io = memoryIo();
      expect(runSimulate(args, io), args.join(" ")).toBe(code);
      expect(io.err).toMatch(message);
    }
  });

  it("--report writes one self-contained page whose charts render in headless Chromium", async () => {
    const report = join(dir, "out.html");
    expect(runSimulate(["--trace", slicePath, "--scaler", scalerPath, "--report", report], memoryIo())).toBe(0);
    const html = readFileSync(report, "utf8");
    expect(html).not.toMatch(/<script[^>]+src=|<link[^>]+href=/);
    const stdout = await renderedDom(report);
    for (const chart of reportCharts) {
      const section = new RegExp(`<section data-chart="${chart}" data-rendered="true">[\\s\\S]*?</section>`).exec(
        stdout,
      )?.[0];
      expect(section, `chart ${chart} rendered`).toBeDefined();
      expect(section).toMatch(/class="uplot[^"]*"/);
      expect(section).toMatch(/<canvas/);
    }
  }, 120_000);
});
