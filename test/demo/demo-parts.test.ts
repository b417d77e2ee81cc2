/** The demo's pure parts: the dashboards' queries as the page runs them, the settings it prints, the summary's attainment. */
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { readPanels, substitute } from "../../demo/dashboards.js";
import { attainment, lateByArrival, lookIndexAt, mergedCumulative, type Summary } from "../../demo/observer.js";
import { formatSummary, verdictLines } from "../../demo/terminal.js";
import { parseDemoArgs } from "../../demo/options.js";
import { timelineScript } from "../../demo/page.js";
import { nonDefaultScalerSettings } from "../../demo/settings.js";
import { timelineSeries, type DrawnSeries } from "../../demo/timeline.js";

const root = join(import.meta.dirname, "..", "..");
const known = { values: { scaler: "code-assistant" }, rateInterval: "5s", interval: "5s" };

describe("the dashboards' queries on the demo page", () => {
  const panels = readPanels(join(root, "dashboards"), known);

  it("takes every panel with a query from every dashboard, with every variable substituted", () => {
    interface Panel {
      type: string;
      targets?: { expr?: string }[];
      panels?: Panel[];
    }
    const count = (panels: readonly Panel[]): number =>
      panels.reduce(
        (n, p) => n + (p.type !== "row" && (p.targets ?? []).some((t) => t.expr) ? 1 : 0) + count(p.panels ?? []),
        0,
      );
    const files = readdirSync(join(root, "dashboards")).filter((f) => f.endsWith(".json"));
    const expected = files
      .map((f) => JSON.parse(readFileSync(join(root, "dashboards", f), "utf8")) as { panels: Panel[] })
      .reduce((n, d) => n + count(d.panels), 0);
    expect(panels.length).toBe(expected);
    for (const p of panels) for (const q of p.queries) expect(q.expr, p.title).not.toMatch(/\$|\[\[/);
    const replicas = panels.find((p) => p.title.startsWith("Replicas:"));
    expect(replicas?.queries[0]?.expr).toContain('scaler=~"code-assistant"');
    expect(replicas?.queries[0]?.expr).toContain('namespace=~".*"');
  });

  it("substitutes each Grafana variable syntax and the built-in intervals", () => {
    const variables = [{ name: "role" }, { name: "scaler" }];
    expect(substitute('a{role=~"$role",s="${scaler}",x="[[role]]"}[$__rate_interval]', variables, known)).toBe(
      'a{role=~".*",s="code-assistant",x=".*"}[5s]',
    );
    // An unknown name is left alone, so a broken query shows as an error instead of matching everything.
    expect(substitute("rate(x[$unknown])", variables, known)).toBe("rate(x[$unknown])");
  });
});

describe("state timelines on the demo page, drawn with each panel's value mappings", () => {
  const panels = readPanels(join(root, "dashboards"), known);
  const panic = panels.find((p) => p.title === "Panic mode");
  const reason = panels.find((p) => p.title === "Reason per role");
  const palette = ["#1f77b4", "#d62728"];
  const lanes = (drawn: readonly DrawnSeries[], colour: string): number =>
    drawn.filter((d) => d.colour === colour).reduce((n, d) => n + d.ys.filter((y) => y !== null).length, 0);

  it("reads the Panic mode panel's mappings from the dashboard, and none where a panel has none", () => {
    expect(panic?.type).toBe("state-timeline");
    expect(panic?.valueMappings).toEqual({
      "0": { text: "Stable", color: "green" },
      "1": { text: "Panic", color: "orange" },
    });
    expect(reason?.type).toBe("state-timeline");
    expect(reason?.valueMappings).toBeUndefined();
  });

  it("draws a run that stayed at 0 as Stable in a thin neutral line, with no Panic bar", () => {
    const drawn = timelineSeries([{ label: "llm/server", values: [0, 0, 0, null, 0] }], panic?.valueMappings, palette);
    expect(drawn).toEqual([
      { label: "llm/server: Stable", lane: 1, colour: "#b4bac1", width: 3, ys: [1, 1, 1, null, 1] },
    ]);
  });

  it("draws Panic in the mapping's orange only where the value is 1, one lane per role", () => {
    const drawn = timelineSeries(
      [
        { label: "llm/prefill", values: [0, 1, 1, 0] },
        { label: "llm/decode", values: [0, 0, 0, 0] },
      ],
      panic?.valueMappings,
      palette,
    );
    expect(drawn.map((d) => [d.label, d.lane, d.width])).toEqual([
      ["llm/prefill: Stable", 1, 3],
      ["llm/prefill: Panic", 1, 8],
      ["llm/decode: Stable", 2, 3],
    ]);
    expect(drawn[1]?.ys).toEqual([null, 1, 1, null]);
    expect(lanes(drawn, "#ff9830")).toBe(2);
  });

  it("draws a panel without mappings as before: a bar wherever its series has a point", () => {
    const drawn = timelineSeries(
      [{ label: "llm/server: TokenThroughput", values: [1, null, 1] }],
      reason?.valueMappings,
      palette,
    );
    expect(drawn).toEqual([
      { label: "llm/server: TokenThroughput", lane: 1, colour: "#1f77b4", width: 8, ys: [1, null, 1] },
    ]);
  });

  it("serves the page the very same function", () => {
    const served = new Function(`${timelineScript}; return timelineSeries;`)() as typeof timelineSeries;
    const input = [{ label: "a", values: [0, 1, null] }];
    expect(served(input, panic?.valueMappings, palette)).toEqual(timelineSeries(input, panic?.valueMappings, palette));
  });
});

describe("the settings the demo prints", () => {
  it("names each value of the demo scaler that differs from its default, with the reason", () => {
    const scaler = parse(readFileSync(join(root, "docs", "examples", "demo", "scaler.yaml"), "utf8")) as {
      spec: unknown;
    };
    const settings = nonDefaultScalerSettings(scaler.spec);
    expect(settings.map((s) => s.path)).toEqual([
      "spec.mode",
      "spec.sampling.intervalSeconds",
      "spec.algorithm.tokenThroughput.stableWindowSeconds",
      "spec.algorithm.tokenThroughput.panicWindowSeconds",
      "spec.behavior.scaleDown.stabilizationWindowSeconds",
    ]);
    expect(settings.find((s) => s.path.endsWith("stableWindowSeconds"))).toMatchObject({
      value: "30",
      defaultValue: "180",
    });
    for (const s of settings) expect(s.why).not.toBe("set in the scaler file");
  });
});

describe("flags", () => {
  it("names the flag and the value it refuses", () => {
    expect(parseDemoArgs(["--duration", "-3"])).toBe('--duration: "-3" is not a positive number of seconds');
    expect(parseDemoArgs(["--speedup=0"])).toMatch(/^--speedup: "0"/);
    expect(parseDemoArgs(["--bogus"])).toBe('unknown argument "--bogus"');
    expect(parseDemoArgs(["--duration=60", "--speedup", "5"])).toMatchObject({ durationSeconds: 60, speedup: 5 });
  });

  it("reads the traces from MDS_TRACES_DIR", () => {
    const options = parseDemoArgs([], { MDS_TRACES_DIR: "/data/traces" });
    expect(typeof options === "object" && options.tracePath).toBe(
      "/data/traces/azure_llm_2023/AzureLLMInferenceTrace_code.csv",
    );
  });
});

describe("SLO attainment", () => {
  const h = (pairs: [number, number][]): { upperBound: number; count: number }[] =>
    pairs.map(([upperBound, count]) => ({ upperBound, count }));

  it("counts observations at or below the largest bucket bound not above the target, over every engine", () => {
    const a = h([
      [0.25, 5],
      [0.5, 8],
      [1, 9],
      [Infinity, 10],
    ]);
    const b = h([
      [0.25, 0],
      [0.5, 2],
      [1, 10],
      [Infinity, 10],
    ]);
    expect(attainment([a, b], 0.5)).toEqual({ fraction: 0.5, boundSeconds: 0.5 });
    expect(attainment([a, b], 0.7)).toEqual({ fraction: 0.5, boundSeconds: 0.5 });
  });

  it("is unknown, not 100 %, when nothing was observed", () => {
    expect(attainment([], 0.5)).toBeUndefined();
    expect(attainment([h([[Infinity, 0]])], 0.5)).toBeUndefined();
  });
});

describe("late first tokens", () => {
  it("are charged to the look they arrived at: the look before now minus their bucket's lower bound", () => {
    const looks = [{ atMs: 10_000 }, { atMs: 11_000 }, { atMs: 14_000 }];
    expect(lookIndexAt(looks, 9_000)).toBe(0);
    expect(lookIndexAt(looks, 13_999)).toBe(1);
    expect(lookIndexAt(looks, 14_000)).toBe(2);
    const bucket = (upperBound: number, count: number): { upperBound: number; count: number } => ({
      upperBound,
      count,
    });
    // Two engines; since the last look: 3 within 0.5 s, 2 in (0.5, 1], 4 in (2.5, 5], 1 in (5, +Inf).
    const before = mergedCumulative([
      [bucket(0.5, 1), bucket(1, 1), bucket(2.5, 1), bucket(5, 1), bucket(Infinity, 1)],
    ]);
    const after = mergedCumulative([
      [bucket(0.5, 3), bucket(1, 4), bucket(2.5, 4), bucket(5, 6), bucket(Infinity, 6)],
      [bucket(0.5, 1), bucket(1, 2), bucket(2.5, 2), bucket(5, 4), bucket(Infinity, 5)],
    ]);
    const late = lateByArrival(before, after, 0.5, 14_500, (atMs) => lookIndexAt(looks, atMs));
    expect(Object.fromEntries(late)).toEqual({
      // (0.5, 1]: arrived before 14.0 s.
      2: 2,
      // (2.5, 5] before 12.0 s and (5, +Inf) before 9.5 s.
      1: 4,
      0: 1,
    });
    // A target between bounds counts late from the bucket above the largest bound not above it.
    expect([...lateByArrival(before, after, 0.7, 14_500, () => "x").values()]).toEqual([7]);
  });

  it("end the summary below 99 %: the SLO missed, then each rule's share, largest first", () => {
    const summary: Summary = {
      replaySeconds: 60,
      traceSeconds: 600,
      requestsOffered: 100,
      requestsServed: 90,
      ttftTargetMs: 500,
      itlTargetMs: 50,
      ttftAttainment: 0.6,
      ttftBoundMs: 500,
      itlAttainment: 1,
      itlBoundMs: 50,
      replicaSecondsByRole: { prefill: 60 },
      commits: [],
      commitsUp: 0,
      commitsDown: 0,
      lateFirstTokensByRule: { "maxReplicas: prefill at its maxReplicas of 8": 10, "replica start-up: 3 s": 30 },
    };
    const text = formatSummary(summary, ["  controller log      no warnings or errors"]);
    expect(text).toContain("\n  commits             0 (0 scaling a role up, 0 scaling a role down)\n");
    expect(text).toMatch(
      /controller log[^\n]*\n {2}SLO {17}missed: TTFT 60\.0 %, below 99 %\n {2}what kept it below {2}40 late first tokens, by the rule[^\n]*\n {5}75 % {2}replica start-up: 3 s\n {5}25 % {2}maxReplicas: prefill at its maxReplicas of 8\n$/,
    );
    expect(verdictLines({ ...summary, ttftAttainment: 0.995 })).toEqual([
      "  SLO                 met: TTFT and ITL within their targets for at least 99 % of first tokens and gaps",
    ]);
    // A miss on ITL alone names it, with no late first tokens to charge.
    expect(verdictLines({ ...summary, ttftAttainment: 0.995, itlAttainment: 0.9 })).toEqual([
      "  SLO                 missed: ITL 90.0 %, below 99 %",
    ]);
    expect(verdictLines({ ...summary, ttftAttainment: undefined })[0]).toMatch(/SLO {17}unknown/);
  });
});

describe("a missing piece", () => {
  it("is a message naming the set-up command, before anything starts", () => {
    const result = spawnSync(join(root, "node_modules", ".bin", "tsx"), [join(root, "demo", "main.ts")], {
      cwd: root,
      env: {
        ...process.env,
        PROMETHEUS_BIN: "/nonexistent/prometheus",
        MDS_KUBE_BIN_DIR: "/nonexistent/kube-bin",
        MDS_TRACES_DIR: "/nonexistent/traces",
      },
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(result.status).toBe(1);
    expect(result.stdout).toBe("");
    const lines = result.stderr.trim().split("\n");
    expect(lines[0]).toBe("the demo cannot start; missing:");
    expect(lines.filter((l) => l.includes("run `bash tools/setup.sh`"))).toHaveLength(2);
    expect(result.stderr).toContain("Prometheus is not installed at /nonexistent/prometheus");
    expect(result.stderr).toContain("/nonexistent/kube-bin/kube-apiserver is missing");
    expect(result.stderr).toContain(
      "the trace /nonexistent/traces/azure_llm_2023/AzureLLMInferenceTrace_code.csv is missing: run `bash tools/fetch-traces.sh`",
    );
    expect(result.stderr).not.toMatch(/\n\s+at /);
  }, 60_000);
});
