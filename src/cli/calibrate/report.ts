/**
 * `calibrate --report FILE`: one self-contained HTML page (uPlot inline, as
 * `simulate --report` does). Per role, each minute is a point at its
 * throughput per ready replica against its p95 TTFT (ITL for Decode), within
 * targets or not, with the target and the calibrated figure drawn, and the
 * band table beneath. Each chart sits in `<section data-chart="ROLE">`.
 */
import { asset, escapeHtml, scriptJson } from "../../sim/quality/report.js";
import { judgedLatencies } from "../../core/calibrate/minute.js";
import { brokenTargets } from "../../core/calibrate/bands.js";
import { table, type CalibrationResult } from "./result.js";

export function renderCalibrationReport(result: CalibrationResult): string {
  const charts = result.roles.map((r) => {
    const ttft = judgedLatencies(r.kind).ttft;
    const sorted = [...r.points].sort((a, b) => a.tokensPerSecondPerReplica - b.tokensPerSecondPerReplica);
    const latency = (m: (typeof sorted)[number]): number | null =>
      (ttft ? m.ttftP95Milliseconds : m.itlP95Milliseconds) ?? null;
    const held = sorted.map((m) =>
      brokenTargets(r.kind, m, result.targets, result.reading).length === 0 ? latency(m) : null,
    );
    const broke = sorted.map((m) =>
      brokenTargets(r.kind, m, result.targets, result.reading).length > 0 ? latency(m) : null,
    );
    return {
      role: r.role,
      label: ttft ? "p95 TTFT (ms)" : "p95 ITL (ms)",
      target: ttft ? result.targets.ttftMilliseconds : result.targets.itlMilliseconds,
      figure: r.answer.kind === "calibrated" ? r.answer.tokensPerSecondPerReplica : null,
      x: sorted.map((m) => m.tokensPerSecondPerReplica),
      held,
      broke,
    };
  });
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>mds-scaler calibrate: ${escapeHtml(result.source)}</title>
<style>${asset("uPlot.min.css")}
body{font-family:system-ui,sans-serif;margin:24px;color:#222}pre{font-size:13px}section{margin:24px 0}h2{font-size:16px}</style>
</head><body>
<h1>mds-scaler calibrate</h1>
<pre>${escapeHtml(table(result))}</pre>
${charts.map((c) => `<section data-chart="${escapeHtml(c.role)}"><h2>${escapeHtml(c.role)}: one point per minute</h2><div class="chart"></div></section>`).join("\n")}
<script>${asset("uPlot.iife.min.js")}</script>
<script>
const charts = ${scriptJson(charts)};
const width = Math.max(600, Math.min(1100, window.innerWidth - 48));
for (const c of charts) {
  const el = document.querySelector('section[data-chart="' + CSS.escape(c.role) + '"] .chart');
  const target = c.x.map(() => c.target);
  const figure = c.x.map((x) => (c.figure !== null && x <= c.figure ? 0 : null));
  const dots = (stroke) => ({ stroke, width: 0, points: { show: true, size: 7, fill: stroke } });
  new uPlot({
    width, height: 320, scales: { x: { time: false } },
    series: [
      { label: "tok/s per ready replica" },
      { label: "within targets", ...dots("#2ca02c") },
      { label: "target broken", ...dots("#d62728") },
      { label: "latency target", stroke: "#555", dash: [6, 4] },
      { label: "up to the calibrated figure", stroke: "#1f77b4", width: 6 },
    ],
    axes: [{ label: "tokens per second per ready replica" }, { label: c.label }],
  }, [c.x, c.held, c.broke, target, figure], el);
  el.parentElement.setAttribute("data-rendered", "true");
}
</script>
</body></html>
`;
}
