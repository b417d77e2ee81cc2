/**
 * `--report`: one self-contained HTML page with the run's time series drawn by
 * uPlot (bundled inline, script and stylesheet, so the page needs no network):
 * demand, replicas, and latency against the SLO targets. Each chart sits in a
 * `<section data-chart="...">` so a test can find it after rendering.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { RunResult, SloTargets } from "./run.js";

const require = createRequire(import.meta.url);

export function asset(path: string): string {
  return readFileSync(require.resolve(`uplot/dist/${path}`), "utf8");
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** JSON safe inside a `<script>` element. */
export function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, "\\u003c");
}

export interface ReportInput {
  readonly result: RunResult;
  readonly slo: SloTargets;
  readonly summary: readonly (readonly [string, string])[];
}

export const reportCharts = ["demand", "replicas", "latency"] as const;

export function renderReport(input: ReportInput): string {
  const { result } = input;
  const s = result.series;
  const data = {
    t: s.map((p) => p.atSeconds / 60),
    demand: s.map((p) => p.arrivalsPerSecond),
    desired: s.map((p) => p.desiredReplicas),
    ready: s.map((p) => p.readyReplicas),
    ttft: s.map((p) => p.ttftP95Seconds ?? null),
    itl: s.map((p) => (p.itlMeanSeconds === undefined ? null : p.itlMeanSeconds * 1000)),
    ttftBase: input.slo.ttftBaseSeconds,
    itlTarget: input.slo.itlSeconds * 1000,
  };
  const rows = input.summary.map(([k, v]) => `<tr><th>${escapeHtml(k)}</th><td>${escapeHtml(v)}</td></tr>`).join("");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>mds-scaler simulate: ${escapeHtml(result.policy)} on ${escapeHtml(result.trace)}</title>
<style>${asset("uPlot.min.css")}
body{font-family:system-ui,sans-serif;margin:24px;color:#222}table{border-collapse:collapse}
th,td{text-align:left;padding:2px 12px 2px 0}section{margin:24px 0}h2{font-size:16px}</style>
</head><body>
<h1>${escapeHtml(result.policy)} on ${escapeHtml(result.trace)}</h1>
<table>${rows}</table>
${reportCharts.map((c) => `<section data-chart="${c}"><h2>${c}</h2><div class="chart"></div></section>`).join("\n")}
<script>${asset("uPlot.iife.min.js")}</script>
<script>
const d = ${scriptJson(data)};
const width = Math.max(600, Math.min(1100, window.innerWidth - 48));
const x = { label: "minutes" };
function draw(name, series, values, yLabel) {
  const el = document.querySelector('section[data-chart="' + name + '"] .chart');
  new uPlot({ width, height: 260, scales: { x: { time: false } }, series: [{ label: "minute" }, ...series], axes: [x, { label: yLabel }] }, [d.t, ...values], el);
  el.parentElement.setAttribute("data-rendered", "true");
}
draw("demand", [{ label: "arrivals/s", stroke: "#1f77b4" }], [d.demand], "requests/s");
draw("replicas", [{ label: "desired", stroke: "#ff7f0e" }, { label: "ready", stroke: "#2ca02c" }], [d.desired, d.ready], "replicas");
draw("latency", [
  { label: "TTFT p95 (s)", stroke: "#d62728" },
  { label: "mean ITL (ms)", stroke: "#9467bd", scale: "ms" },
], [d.ttft, d.itl], "seconds");
</script>
</body></html>
`;
}
