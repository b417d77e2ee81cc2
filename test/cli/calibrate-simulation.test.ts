/**
 * `mds-scaler calibrate --from-simulation` on real simulator runs of the first
 * 15 minutes of the Azure conversation trace served by static fleets: one
 * replica is loaded past what it can serve in part of the slice, two are not,
 * four never come near it. The scriptable steps of docs/calibrate.md, in process.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { runCalibrate } from "../../src/cli/calibrate.js";
import { floorsFromYesterday } from "../../src/cli/calibrate/hourly-floors.js";
import { memoryIo } from "../support/memory-io.js";
import { runSimulate } from "../../src/cli/simulate.js";
import { floorsCalibratedAnnotation } from "../../src/core/api/floors-calibrated.js";
import { validateScaler } from "../../src/core/api/validation.js";
import { tracesDir } from "../sim/quality/fixtures.js";

const dir = mkdtempSync(join(tmpdir(), "mds-calibrate-"));
const trace = join(tracesDir, "azure_llm_2023/AzureLLMInferenceTrace_conv.csv");

/** A static fleet: the scaler's bounds pin the replicas. */
function staticScaler(replicas: number): string {
  const path = join(dir, `static-${replicas}.yaml`);
  writeFileSync(
    path,
    `apiVersion: worker.gpustack.ai/v1
kind: ModelDeploymentScaler
metadata: {name: llm, namespace: default}
spec:
  targetRef: {name: llm}
  mode: Active
  roles: [{name: server, minReplicas: ${replicas}, maxReplicas: ${replicas}}]
  algorithm:
    tokenThroughput: {serverTargetTokensPerSecond: "7500", ttftTargetMilliseconds: "1500"}
`,
  );
  return path;
}

/** The run of a static fleet on the first 15 minutes, as `simulate -o json` writes it. */
function simulate(replicas: number): string {
  const io = memoryIo();
  expect(
    runSimulate(["--trace", trace, "--scaler", staticScaler(replicas), "--duration", "900", "-o", "json"], io),
  ).toBe(0);
  const path = join(dir, `run-${replicas}.json`);
  writeFileSync(path, io.out);
  return path;
}

interface JsonRole {
  role: string;
  minutes: number;
  points: { tokensPerSecondPerReplica: number; ttftP95Milliseconds: number }[];
  bands: { fromTokensPerSecond: number; toTokensPerSecond: number; verdict: string }[];
  answer: { kind: string; tokensPerSecondPerReplica?: number; why: string };
}

const runs: Record<number, string> = {};
beforeAll(() => {
  for (const n of [1, 2, 4]) runs[n] = simulate(n);
}, 180_000);

/**
 * The scaler a user runs (one replica up to 16) written to `name`, as TokenThroughput or as Predictive
 * with the same block as its fallback, and calibrate's arguments pooling the 1- and 2-replica runs with it.
 */
function userScalerArgs(name: string, algorithm: "TokenThroughput" | "Predictive"): string[] {
  const user = join(dir, name);
  const scaler = readFileSync(staticScaler(1), "utf8").replace(
    "minReplicas: 1, maxReplicas: 1",
    "minReplicas: 1, maxReplicas: 16",
  );
  writeFileSync(
    user,
    algorithm === "Predictive"
      ? scaler.replace(/tokenThroughput: (\{.*\})/, "type: Predictive\n    predictive:\n      tokenThroughput: $1")
      : scaler,
  );
  return ["--from-simulation", runs[1] as string, "--from-simulation", runs[2] as string, "-f", user];
}

describe("calibrate --from-simulation", () => {
  it("writes per-minute figures into simulate's JSON: every minute of the slice, for the one role", () => {
    const run = JSON.parse(readFileSync(runs[2] as string, "utf8")) as {
      minutes: { role: string; kind: string; minutes: { endSeconds: number; readyReplicas: number }[] }[];
      scaler: { spec: { roles: { minReplicas: number }[] } };
    };
    expect(run.minutes.map((r) => [r.role, r.kind])).toEqual([["server", "Server"]]);
    expect(run.minutes[0]?.minutes.map((m) => m.endSeconds)).toEqual(
      Array.from({ length: 15 }, (_, i) => 60 * (i + 1)),
    );
    expect(run.minutes[0]?.minutes.every((m) => m.readyReplicas === 2)).toBe(true);
    expect(run.scaler.spec.roles[0]?.minReplicas).toBe(2);
  });

  it("gives a figure below what a replica carries when one fleet was loaded past it", async () => {
    const io = memoryIo();
    const args = ["--from-simulation", runs[1] as string, "--from-simulation", runs[2] as string, "-o", "json"];
    expect(await runCalibrate(args, io)).toBe(0);
    const role = (JSON.parse(io.out) as { roles: JsonRole[] }).roles[0] as JsonRole;
    expect(role.minutes).toBe(30);
    expect(role.answer.kind).toBe("calibrated");
    const figure = role.answer.tokensPerSecondPerReplica as number;
    // What one replica reached while overloaded: the most it carries on this trace.
    const carried = Math.max(...role.points.map((p) => p.tokensPerSecondPerReplica));
    const firstBroke = role.bands.find((b) => b.verdict === "broke");
    expect(firstBroke).toBeDefined();
    expect(figure).toBeLessThan(firstBroke?.fromTokensPerSecond as number);
    expect(figure).toBeLessThan(0.8 * carried);
    // Every minute at or below the figure kept the TTFT target.
    const below = role.points.filter((q) => q.tokensPerSecondPerReplica <= figure);
    expect(below.length).toBeGreaterThan(5);
    for (const p of below) expect(p.ttftP95Milliseconds).toBeLessThanOrEqual(1500);
  });

  it("judges TTFT as the selected guard reading does: on queueing no minute breaks that literal keeps", async () => {
    const json = async (reading: string): Promise<JsonRole & { queueTime: string; reading: string }> => {
      const io = memoryIo();
      const args = ["--from-simulation", runs[1] as string, "--from-simulation", runs[2] as string];
      expect(await runCalibrate([...args, "--latency-guard-reading", reading, "-o", "json"], io)).toBe(0);
      return (JSON.parse(io.out) as { roles: (JsonRole & { queueTime: string; reading: string })[] })
        .roles[0] as JsonRole & { queueTime: string; reading: string };
    };
    const literal = await json("literal");
    const queueing = await json("queueing");
    expect([literal.reading, queueing.reading]).toEqual(["literal", "queueing"]);
    expect(queueing.queueTime).toBe("read");
    const held = (r: JsonRole): number[] => r.bands.map((b) => (b.verdict === "broke" ? 0 : 1));
    // Band by band, the queueing reading holds wherever the literal one does.
    held(literal).forEach((h, i) => expect(held(queueing)[i] ?? 0).toBeGreaterThanOrEqual(h));
    expect(queueing.answer.kind).toBe("calibrated");
    expect(queueing.answer.tokensPerSecondPerReplica as number).toBeGreaterThanOrEqual(
      literal.answer.tokensPerSecondPerReplica as number,
    );
  });

  it("writes the user's scaler with the figure, the same on stdout and in --write-scaler", async () => {
    const args = userScalerArgs("user.yaml", "TokenThroughput");
    const written = join(dir, "calibrated.yaml");
    const io = memoryIo();
    expect(await runCalibrate([...args, "-o", "scaler", "--write-scaler", written], io)).toBe(0);
    expect(readFileSync(written, "utf8")).toBe(io.out);
    const scaler = validateScaler(parse(io.out));
    expect(scaler.ok).toBe(true);
    const doc = parse(io.out) as {
      spec: { roles: { maxReplicas: number }[]; algorithm: { tokenThroughput: Record<string, string> } };
    };
    expect(doc.spec.roles[0]?.maxReplicas).toBe(16);
    const figure = Number(doc.spec.algorithm.tokenThroughput["serverTargetTokensPerSecond"]);
    expect(figure).toBeGreaterThan(0);
    expect(figure).toBeLessThan(7500);
    expect(doc.spec.algorithm.tokenThroughput["ttftTargetMilliseconds"]).toBe("1500");
  });

  it("--swing-headroom lowers the figure to the capacity ÷ the swing, and leaves one already below it", async () => {
    const args = userScalerArgs("headroom.yaml", "TokenThroughput");
    const answerOf = async (extra: string[]): Promise<Record<string, number | string>> => {
      const io = memoryIo();
      expect(await runCalibrate([...args, ...extra, "-o", "json"], io)).toBe(0);
      return (JSON.parse(io.out) as { roles: { answer: Record<string, number | string> }[] }).roles[0]?.answer ?? {};
    };
    const measured = await answerOf([]);
    const figure = measured["tokensPerSecondPerReplica"] as number;
    const capacity = measured["capacityTokensPerSecondPerReplica"] as number;
    expect(figure).toBeLessThan(capacity);
    // A swing the measured figure leaves no room for: the figure becomes the capacity ÷ the swing, rounded down.
    const swing = (1.2 * capacity) / figure;
    const lowered = await answerOf(["--swing-headroom", String(swing)]);
    const fits = capacity / swing;
    expect(lowered["tokensPerSecondPerReplica"]).toBeLessThanOrEqual(fits);
    expect(lowered["tokensPerSecondPerReplica"]).toBeGreaterThan(0.99 * fits);
    expect(lowered["capacityTokensPerSecondPerReplica"]).toBe(capacity);
    expect(lowered["why"]).toMatch(new RegExp(`lowered from ${figure} to the capacity ÷ ${swing} by --swing-headroom`));
    // The scaler file carries the lowered figure.
    const scaler = memoryIo();
    expect(await runCalibrate([...args, "--swing-headroom", String(swing), "-o", "scaler"], scaler)).toBe(0);
    const doc = parse(scaler.out) as { spec: { algorithm: { tokenThroughput: Record<string, string> } } };
    expect(Number(doc.spec.algorithm.tokenThroughput["serverTargetTokensPerSecond"])).toBe(
      lowered["tokensPerSecondPerReplica"],
    );
    // A swing the figure already has room for changes nothing.
    const roomy = await answerOf(["--swing-headroom", String((0.9 * capacity) / figure)]);
    expect(roomy["tokensPerSecondPerReplica"]).toBe(figure);
    expect(roomy["why"]).toBe(measured["why"]);
  });

  it("writes a Predictive scaler's fallback target and, as its forecast capacity, where the targets broke", async () => {
    const args = userScalerArgs("predictive.yaml", "Predictive");
    const json = memoryIo();
    expect(await runCalibrate([...args, "-o", "json"], json)).toBe(0);
    const answer = (JSON.parse(json.out) as { roles: { answer: Record<string, number> }[] }).roles[0]?.answer;
    const io = memoryIo();
    expect(await runCalibrate([...args, "-o", "scaler"], io)).toBe(0);
    expect(validateScaler(parse(io.out)).ok).toBe(true);
    const predictive = (parse(io.out) as { spec: { algorithm: { predictive: Record<string, unknown> } } }).spec
      .algorithm.predictive;
    // Written since the eighth calibrated run kept it beside the measured noise (docs/quality.md).
    expect(predictive["serverTokenCapacityPerReplica"]).toBe(String(answer?.["capacityTokensPerSecondPerReplica"]));
    expect((predictive["tokenThroughput"] as Record<string, string>)["serverTargetTokensPerSecond"]).toBe(
      String(answer?.["tokensPerSecondPerReplica"]),
    );
    // The capacity is above the figure: the figure held, the capacity is where holding stopped.
    expect(answer?.["capacityTokensPerSecondPerReplica"]).toBeGreaterThan(answer?.["tokensPerSecondPerReplica"] ?? 0);
  });

  it("measures the demand's noise from adjacent minutes of each run and writes it as Predictive's measurementNoise", async () => {
    const args = userScalerArgs("predictive-noise.yaml", "Predictive");
    const json = memoryIo();
    expect(await runCalibrate([...args, "-o", "json"], json)).toBe(0);
    const role = (
      JSON.parse(json.out) as {
        roles: { demandNoise?: { varianceTokensPerSecondSquared: number; pairs: number }; minutes: number }[];
      }
    ).roles[0];
    // Two runs of 15 minutes: the pairs inside each run, never the jump from one run's end to the next's start.
    expect(role?.demandNoise?.pairs).toBeGreaterThanOrEqual(20);
    expect(role?.demandNoise?.pairs).toBeLessThanOrEqual((role?.minutes ?? 0) - 2);
    const variance = role?.demandNoise?.varianceTokensPerSecondSquared ?? 0;
    // Far above the specification's 10 (tokens/s)²: a minute's demand on this trace moves by thousands of tokens/s.
    expect(variance).toBeGreaterThan(10_000);
    const io = memoryIo();
    expect(await runCalibrate([...args, "-o", "scaler"], io)).toBe(0);
    expect(validateScaler(parse(io.out)).ok).toBe(true);
    const predictive = (parse(io.out) as { spec: { algorithm: { predictive: Record<string, unknown> } } }).spec
      .algorithm.predictive;
    expect(Number(predictive["measurementNoise"])).toBe(variance);
    const table = memoryIo();
    expect(await runCalibrate(args, table)).toBe(0);
    expect(table.out).toMatch(
      /demand noise: [0-9.e+]+ \(tok\/s\)² from \d+ pairs of adjacent minutes \(Predictive's measurementNoise\)/,
    );
  });

  it("measures the demand's swing over the minutes of each run, prints it, and writes nothing from it", async () => {
    const args = userScalerArgs("tt-swing.yaml", "TokenThroughput");
    const json = memoryIo();
    expect(await runCalibrate([...args, "-o", "json"], json)).toBe(0);
    const role = (
      JSON.parse(json.out) as {
        roles: {
          demandSwing?: { largestRatio: number; endSeconds: number; windows: number };
          points: { endSeconds: number; readyReplicas: number; tokensPerSecondPerReplica: number }[];
          minutes: number;
        }[];
      }
    ).roles[0];
    const swing = role?.demandSwing;
    // Two runs of 15 minutes: windows of four adjacent minutes inside each run, three fewer per run than its minutes.
    expect(swing?.windows).toBeGreaterThanOrEqual(16);
    expect(swing?.windows).toBeLessThanOrEqual((role?.minutes ?? 0) - 6);
    // The ratio is read off the minute it names (in either run: both runs' minutes end at the same seconds):
    // its demand over the mean of the three before it.
    const points = role?.points ?? [];
    const demand = (i: number): number =>
      (points[i]?.tokensPerSecondPerReplica ?? NaN) * (points[i]?.readyReplicas ?? NaN);
    const ratiosThere = points.flatMap((p, i) =>
      p.endSeconds === swing?.endSeconds && i >= 3
        ? [Number(((3 * demand(i)) / (demand(i - 1) + demand(i - 2) + demand(i - 3))).toPrecision(3))]
        : [],
    );
    expect(ratiosThere).toContain(swing?.largestRatio);
    expect(swing?.largestRatio).toBeGreaterThan(1);
    const table = memoryIo();
    expect(await runCalibrate(args, table)).toBe(0);
    expect(table.out).toContain(
      `demand swing: at most ${swing?.largestRatio} × the mean of the 3 minutes before, over ${swing?.windows} windows of 4 adjacent minutes`,
    );
    // The docs' step is said beside it, on the side of 1.65 the swing is.
    const above = (swing?.largestRatio ?? 0) > 1.65;
    expect(table.out).toContain(
      above
        ? "above 1.65: where these minutes are the same hours of the day before, served by the fleet you would replace, the docs' steps keep that fleet"
        : "at most 1.65: where these minutes are the same hours of the day before, served by the fleet you would replace, the docs' steps replace it with the scaler capped at its size, calibrated with --swing-headroom 1.65",
    );
    const scaler = memoryIo();
    expect(await runCalibrate([...args, "-o", "scaler"], scaler)).toBe(0);
    expect(scaler.out).not.toMatch(/swing/i);
  });

  it("a queue-time target is carried into the scaler as written, not judged: the same figure, and a warning says so", async () => {
    const args = userScalerArgs("queue-target.yaml", "TokenThroughput");
    const user = args.at(-1) as string;
    const without = memoryIo();
    expect(await runCalibrate([...args, "-o", "scaler"], without)).toBe(0);
    writeFileSync(
      user,
      readFileSync(user, "utf8").replace(
        'ttftTargetMilliseconds: "1500"',
        'ttftTargetMilliseconds: "1500", queueTimeTargetMilliseconds: "1000"',
      ),
    );
    const withTarget = memoryIo();
    expect(await runCalibrate([...args, "-o", "scaler"], withTarget)).toBe(0);
    const block = (out: string) =>
      (parse(out) as { spec: { algorithm: { tokenThroughput: Record<string, string> } } }).spec.algorithm
        .tokenThroughput;
    expect(block(withTarget.out)["serverTargetTokensPerSecond"]).toBe(
      block(without.out)["serverTargetTokensPerSecond"],
    );
    expect(block(withTarget.out)["queueTimeTargetMilliseconds"]).toBe("1000");
    const table = memoryIo();
    expect(await runCalibrate(args, table)).toBe(0);
    expect(table.out).toContain("warning: queueTimeTargetMilliseconds 1000: not judged here");
  });

  it("writes no measurementNoise into a TokenThroughput scaler", async () => {
    const args = userScalerArgs("tt-noise.yaml", "TokenThroughput");
    const io = memoryIo();
    expect(await runCalibrate([...args, "-o", "scaler"], io)).toBe(0);
    expect(io.out).not.toContain("measurementNoise");
  });

  it("writes the floors by the UTC hour read from the day before at the figure it writes (--hourly-floors-from)", async () => {
    const args = userScalerArgs("floors.yaml", "TokenThroughput");
    const io = memoryIo();
    // The day before: the 2-replica run, whose minutes all end in 00:01–00:15.
    const calibratedAt = () => Date.UTC(2026, 11, 7, 0, 5, 12, 400);
    expect(
      await runCalibrate([...args, "--hourly-floors-from", runs[2] as string, "-o", "scaler"], io, calibratedAt),
    ).toBe(0);
    const written = parse(io.out.replace(/^#.*\n/gm, "")) as {
      metadata: { annotations?: Record<string, string> };
      spec: { roles: { floorReplicasByUtcHour?: number[] }[]; algorithm: { tokenThroughput: Record<string, string> } };
    };
    // The date the controller exports for MdsScalerFloorsStale.
    expect(written.metadata.annotations).toEqual({ [floorsCalibratedAnnotation]: "2026-12-07T00:05:12Z" });
    const validated = validateScaler(written);
    expect(validated.ok).toBe(true);
    const figure = Number(written.spec.algorithm.tokenThroughput["serverTargetTokensPerSecond"]);
    const day = JSON.parse(readFileSync(runs[2] as string, "utf8")) as {
      minutes: { minutes: { readyReplicas: number; tokensPerSecondPerReplica: number }[] }[];
    };
    const busiest = Math.max(
      ...(day.minutes[0]?.minutes ?? []).map((m) => m.readyReplicas * m.tokensPerSecondPerReplica),
    );
    const floors = written.spec.roles[0]?.floorReplicasByUtcHour;
    expect(floors).toHaveLength(24);
    // Hour 0 reads 00:00–01:30, every minute of that day; hour 1 reads from 00:30 on, after its last minute.
    expect(floors?.[0]).toBe(Math.min(16, Math.ceil(busiest / figure)));
    expect(floors?.[0]).toBeGreaterThan(1);
    expect(floors?.slice(1)).toEqual(new Array(23).fill(1));
    const table = memoryIo();
    expect(await runCalibrate([...args, "--hourly-floors-from", runs[2] as string], table)).toBe(0);
    expect(table.out).toContain(`floors by UTC hour 0–23 (floorReplicasByUtcHour, from `);
    const bad = memoryIo();
    expect(await runCalibrate([...args, "--hourly-floors-from", "prometheus"], bad)).toBe(2);
    expect(bad.err).toMatch(/--hourly-floors-from prometheus: reads the day before from --prometheus-url/);
    const notRun = memoryIo();
    expect(await runCalibrate([...args, "--hourly-floors-from", join(dir, "no-such-day.json")], notRun)).toBe(1);
    expect(notRun.err).toContain("no-such-day.json");
  });

  it("under the whole-day steps (--hourly-floors-from) holds a role without a figure at its fleet, as the steps keep it", async () => {
    const io = memoryIo();
    // The user's scaler (1 to 16 replicas) with only the 4-replica run, which never loaded a replica to a break.
    const user = userScalerArgs("whole-day-no-figure.yaml", "TokenThroughput").at(-1) as string;
    const args = ["--from-simulation", runs[4] as string, "-f", user, "--hourly-floors-from", runs[2] as string];
    expect(await runCalibrate([...args, "-o", "scaler"], io)).toBe(0);
    const written = parse(io.out.replace(/^#.*\n/gm, "")) as {
      spec: { roles: { minReplicas: number; maxReplicas: number; floorReplicasByUtcHour?: number[] }[] };
    };
    expect(validateScaler(written).ok).toBe(true);
    expect(written.spec.roles[0]).toEqual({ name: "server", minReplicas: 16, maxReplicas: 16 });
    // No floors written, so nothing to date.
    expect(io.out).not.toContain(floorsCalibratedAnnotation);
    expect(io.out).toMatch(
      /^# server: held at its fleet of 16 replicas, calibrate gave no figure \(not enough evidence\); the whole-day steps keep the fleet$/m,
    );
    const table = memoryIo();
    expect(await runCalibrate(args, table)).toBe(0);
    expect(table.out).toContain(
      "no floors: calibrate gave no figure (not enough evidence); the whole-day steps keep the fleet",
    );
  });

  describe("--keep-targets: the daily refresh of the floors once the scaler runs", () => {
    // The user's scaler (1 to 16 replicas, 7500 tok/s a replica) with only the 4-replica run, which never loaded a
    // replica to a break: the minutes of a scaler keeping its replicas below their target show no figure either.
    const keptArgs = (name: string): string[] => [
      "--from-simulation",
      runs[4] as string,
      "-f",
      userScalerArgs(name, "TokenThroughput").at(-1) as string,
      "--hourly-floors-from",
      runs[2] as string,
    ];

    it("writes the floors at the scaler's own target and keeps it, where the minutes give no figure", async () => {
      const io = memoryIo();
      expect(await runCalibrate([...keptArgs("kept.yaml"), "--keep-targets", "-o", "scaler"], io)).toBe(0);
      const written = parse(io.out.replace(/^#.*\n/gm, "")) as {
        spec: {
          roles: { minReplicas: number; maxReplicas: number; floorReplicasByUtcHour?: number[] }[];
          algorithm: { tokenThroughput: Record<string, string> };
        };
      };
      expect(validateScaler(written).ok).toBe(true);
      expect(written.spec.algorithm.tokenThroughput["serverTargetTokensPerSecond"]).toBe("7500");
      const day = JSON.parse(readFileSync(runs[2] as string, "utf8")) as {
        minutes: { minutes: { readyReplicas: number; tokensPerSecondPerReplica: number }[] }[];
      };
      const busiest = Math.max(
        ...(day.minutes[0]?.minutes ?? []).map((m) => m.readyReplicas * m.tokensPerSecondPerReplica),
      );
      expect(written.spec.roles[0]).toMatchObject({ minReplicas: 1, maxReplicas: 16 });
      expect(written.spec.roles[0]?.floorReplicasByUtcHour?.[0]).toBe(Math.ceil(busiest / 7500));
      expect(io.out).toMatch(
        /^# server: 7500 tok\/s per ready replica, the scaler's own target, kept \(--keep-targets\)$/m,
      );
      const table = memoryIo();
      expect(await runCalibrate([...keptArgs("kept.yaml"), "--keep-targets"], table)).toBe(0);
      expect(table.out).toMatch(/answer: not enough evidence: /);
      expect(table.out).toContain("kept: 7500 tok/s per ready replica, the scaler's own target (--keep-targets)");
    });

    it("refuses --swing-headroom beside it, and a role whose target the scaler does not write, naming them", async () => {
      const both = memoryIo();
      expect(
        await runCalibrate([...keptArgs("kept-headroom.yaml"), "--keep-targets", "--swing-headroom", "1.65"], both),
      ).toBe(2);
      expect(both.err).toMatch(
        /--swing-headroom "1\.65": lowers measured figures, and --keep-targets keeps the scaler's own/,
      );
      const args = keptArgs("kept-none.yaml");
      const file = args[3] as string;
      writeFileSync(file, readFileSync(file, "utf8").replace('serverTargetTokensPerSecond: "7500", ', ""));
      const none = memoryIo();
      expect(await runCalibrate([...args, "--keep-targets"], none)).toBe(1);
      expect(none.err).toContain(
        "--keep-targets: role server (Server): the scaler writes no serverTargetTokensPerSecond",
      );
    });
  });

  describe("--swing-from: the docs' step for replacing a fleet, written into the scaler", () => {
    /** A day before whose ninth minute carries two and a half times the others: 2 requests a second, 5 in minute 8. */
    function swingingDay(): string {
      const rows = ["arrival_seconds,prompt_tokens,output_tokens"];
      for (let minute = 0; minute < 15; minute++) {
        const perMinute = (minute === 8 ? 5 : 2) * 60;
        for (let i = 0; i < perMinute; i++)
          rows.push(`${(minute * 60 + ((i + 0.5) * 60) / perMinute).toFixed(3)},800,120`);
      }
      const csv = join(dir, "swinging-day.csv");
      writeFileSync(csv, `${rows.join("\n")}\n`);
      const io = memoryIo();
      expect(runSimulate(["--trace", csv, "--scaler", staticScaler(2), "-o", "json"], io)).toBe(0);
      const path = join(dir, "swinging-day.json");
      writeFileSync(path, io.out);
      return path;
    }

    interface Written {
      spec: {
        roles: { minReplicas?: number; maxReplicas: number }[];
        algorithm: { tokenThroughput: Record<string, string> };
      };
    }
    const written = (out: string): Written => parse(out.replace(/^#.*\n/gm, "")) as Written;

    it("where the day before swung at most 1.65, writes the scaler as calibrated, capped at maxReplicas", async () => {
      const args = userScalerArgs("swing-calm.yaml", "TokenThroughput");
      const plain = memoryIo();
      expect(await runCalibrate([...args, "-o", "scaler"], plain)).toBe(0);
      const stepped = memoryIo();
      // The day before: the 2-replica run of the same 15 minutes, which swung 1.48 ×.
      expect(await runCalibrate([...args, "--swing-from", runs[2] as string, "-o", "scaler"], stepped)).toBe(0);
      expect(written(stepped.out)).toEqual(written(plain.out));
      const table = memoryIo();
      expect(await runCalibrate([...args, "--swing-from", runs[2] as string], table)).toBe(0);
      expect(table.out).toMatch(
        /the demand swung at most 1\.48 ×, at most 1\.65; the scaler written replaces the fleet, capped at its 16 replicas/,
      );
    });

    it("where it swung more, holds the role at its fleet, and says so in the file", async () => {
      const args = userScalerArgs("swing-high.yaml", "TokenThroughput");
      const io = memoryIo();
      expect(await runCalibrate([...args, "--swing-from", swingingDay(), "-o", "scaler"], io)).toBe(0);
      const scaler = written(io.out);
      expect(validateScaler(scaler).ok).toBe(true);
      expect(scaler.spec.roles[0]).toMatchObject({ minReplicas: 16, maxReplicas: 16 });
      expect(io.out).toMatch(
        /^# server: held at its fleet of 16 replicas, by the docs' step: the demand swung 2\.48 ×, above 1\.65$/m,
      );
    });

    it("holds a role calibrate gave no figure at its fleet instead of failing, so a script always gets a file", async () => {
      const io = memoryIo();
      // The user's scaler (1 to 16 replicas) with only the 4-replica run, which never loaded a replica to a break.
      const user = userScalerArgs("swing-no-figure.yaml", "TokenThroughput").at(-1) as string;
      const args = ["--from-simulation", runs[4] as string, "-f", user, "--swing-from", runs[2] as string];
      expect(await runCalibrate([...args, "-o", "scaler"], io)).toBe(0);
      expect(written(io.out).spec.roles[0]).toMatchObject({ minReplicas: 16, maxReplicas: 16 });
      expect(io.out).toMatch(
        /held at its fleet of 16 replicas, by the docs' step: calibrate gave no figure \(not enough evidence\)/,
      );
    });

    it("names the flag and the file it could not read", async () => {
      const io = memoryIo();
      const args = userScalerArgs("swing-missing.yaml", "TokenThroughput");
      expect(await runCalibrate([...args, "--swing-from", join(dir, "no-such-day.json")], io)).toBe(1);
      expect(io.err).toContain("no-such-day.json");
    });

    it("refuses prometheus without --prometheus-url, --swing-period without it, and --apply without --scaler, naming the flag", async () => {
      const args = userScalerArgs("swing-usage.yaml", "TokenThroughput");
      const noUrl = memoryIo();
      expect(await runCalibrate([...args, "--swing-from", "prometheus"], noUrl)).toBe(2);
      expect(noUrl.err).toMatch(/--swing-from prometheus: reads the day before from --prometheus-url/);
      const period = memoryIo();
      expect(await runCalibrate([...args, "--swing-from", runs[2] as string, "--swing-period", "2h"], period)).toBe(2);
      expect(period.err).toMatch(/--swing-period "2h": only with --swing-from prometheus/);
      const apply = memoryIo();
      expect(await runCalibrate([...args, "--apply"], apply)).toBe(2);
      expect(apply.err).toMatch(/--apply writes back the scaler read from the cluster with --scaler NAMESPACE\/NAME/);
    });
  });

  it("says not enough evidence for a fleet never loaded to where the targets break, and writes no scaler", async () => {
    const table = memoryIo();
    expect(await runCalibrate(["--from-simulation", runs[4] as string], table)).toBe(0);
    expect(table.out).toMatch(/answer: not enough evidence: every judged band held/);
    // The simulated fleet exports queue time as vLLM does, so the minutes carry it.
    expect(table.out).toMatch(/queue time read/);
    expect(table.out).not.toMatch(/algorithm:/);
    const scaler = memoryIo();
    expect(await runCalibrate(["--from-simulation", runs[4] as string, "-o", "scaler"], scaler)).toBe(1);
    expect(scaler.out).toBe("");
    expect(scaler.err).toMatch(/role server: no calibrated figure \(not enough evidence/);
  });

  it("names the flag and the value on bad input", async () => {
    const notRun = join(dir, "not-a-run.json");
    writeFileSync(notRun, JSON.stringify({ trace: "t", policy: "p", scaler: {} }));
    const cases: [string[], RegExp, number][] = [
      [
        ["--from-simulation", notRun],
        /--from-simulation .*not-a-run\.json: not a `mds-scaler simulate -o json` run.*minutes/,
        1,
      ],
      [
        ["--from-simulation", runs[4] as string, "--prometheus-url", "http://127.0.0.1:1"],
        /give one of --from-simulation, --prometheus-url and --trace, not --from-simulation and --prometheus-url/,
        2,
      ],
      [["--from-simulation", runs[4] as string, "-o", "csv"], /-o: "csv" is not one of table, json, scaler/, 2],
      [
        ["--from-simulation", runs[4] as string, "--latency-guard-reading", "loose"],
        /--latency-guard-reading: "loose" is not one of queueing, literal/,
        2,
      ],
      [["--prometheus-url", "http://127.0.0.1:1", "-f", "x.yaml"], /exactly one of --start and --last/, 2],
      [
        ["--prometheus-url", "http://127.0.0.1:1", "-f", "x.yaml", "--last", "15 minutes"],
        /--last: "15 minutes" is not a duration/,
        2,
      ],
      [
        ["--prometheus-url", "http://127.0.0.1:1", "-f", "x.yaml", "--last", "169h"],
        /the period is 169\.0 h; at most 168 h \(a week\)/,
        2,
      ],
      [
        ["--prometheus-url", "not a url", "-f", "x.yaml", "--last", "15m"],
        /--prometheus-url = "not a url": must be an http\(s\) URL/,
        1,
      ],
      [
        ["--label-role", "app.role", "--prometheus-url", "http://127.0.0.1:1", "-f", "x.yaml", "--last", "15m"],
        /--label-role = "app.role": must be a Prometheus label name/,
        1,
      ],
      [
        ["--from-simulation", runs[4] as string, "--swing-headroom", "0.5"],
        /--swing-headroom: "0.5" is not a swing of at least 1/,
        2,
      ],
      [["--bogus"], /Unknown option '--bogus'/, 2],
      [[], /give --prometheus-url, --from-simulation or --trace/, 2],
    ];
    for (const [args, message, code] of cases) {
      const io = memoryIo();
      expect(await runCalibrate(args, io), args.join(" ")).toBe(code);
      expect(io.err, args.join(" ")).toMatch(message);
    }
  });
});

describe("floorsFromYesterday", () => {
  it("names a calibrated role the day before has no minutes of", async () => {
    const io = memoryIo();
    expect(await runCalibrate([...userScalerArgs("floors-none.yaml", "TokenThroughput"), "-o", "json"], io)).toBe(0);
    const result = JSON.parse(io.out) as Parameters<typeof floorsFromYesterday>[0];
    const spec = validateScaler(parse(readFileSync(join(dir, "floors-none.yaml"), "utf8")));
    if (!spec.ok) throw new Error("the user's scaler does not validate");
    expect(() => floorsFromYesterday(result, spec.value.spec, [], "nowhere", 0)).toThrow(
      /--hourly-floors-from: role server: no minutes of the day before were read \(nowhere\)/,
    );
  });
});
