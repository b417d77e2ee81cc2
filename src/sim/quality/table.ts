/** Markdown tables of a comparison, as the benchmark prints them and docs/quality.md pastes them. */
import { goalVerdict } from "./goal.js";
import { attainmentGoal, calibratedLabel, cheapestAtGoal, frontier, type MatrixResult, type Row } from "./matrix.js";
import { trainingSeconds, type CalibratedFigures } from "./user-figures.js";
import type { ScenarioResult } from "./scenarios.js";

const pct = (x: number): string => (100 * x).toFixed(2);

function line(cells: readonly string[]): string {
  return `| ${cells.join(" | ")} |`;
}

export const tableHeader = [
  "policy",
  "SLO %",
  "TTFT %",
  "ITL %",
  "GPU-h",
  "× oracle",
  "scale events",
  "max backlog",
  "sim s",
];

export function rowCells(row: Row, oracleGpuHours: number | undefined): string[] {
  return [
    row.policy,
    pct(row.attainment.both),
    pct(row.attainment.ttft),
    pct(row.attainment.itl),
    row.gpuHours.toFixed(2),
    oracleGpuHours === undefined || !(oracleGpuHours > 0) ? "–" : (row.gpuHours / oracleGpuHours).toFixed(2),
    String(row.scaleEvents),
    String(row.maxBacklog),
    row.wallSeconds.toFixed(1),
  ];
}

export type FrontierPosition = "beyond" | "behind" | "outside";

/**
 * Where a run lies against a family's frontier (attainment over GPU-hours,
 * linear between swept points): `beyond` when its attainment is above the
 * frontier at its GPU-hours, `behind` when at or below, `outside` when it
 * spends more GPU-hours than any swept point (no point to compare with).
 * Left of the first point the frontier is that point's attainment.
 */
export function frontierPosition(row: Row, familyRows: readonly Row[]): FrontierPosition {
  const points = frontier(familyRows);
  const last = points[points.length - 1];
  if (last === undefined || row.gpuHours > last.gpuHours) return "outside";
  let attainmentAt = points[0]?.attainment.both ?? 0;
  for (let k = 1; k < points.length; k++) {
    const a = points[k - 1] as Row;
    const b = points[k] as Row;
    if (row.gpuHours >= a.gpuHours && row.gpuHours <= b.gpuHours) {
      const w = b.gpuHours === a.gpuHours ? 1 : (row.gpuHours - a.gpuHours) / (b.gpuHours - a.gpuHours);
      attainmentAt = a.attainment.both + w * (b.attainment.both - a.attainment.both);
      break;
    }
  }
  return row.attainment.both > attainmentAt ? "beyond" : "behind";
}

const calibratedPolicies = [calibratedLabel("TokenThroughput"), calibratedLabel("Predictive")];

/** A calibration's demand noise as the User figures line prints it, for the calibrated and the filled figures alike. */
const demandNoiseText = (c: CalibratedFigures): string =>
  `demand noise ${c.calibration.demandNoise?.varianceTokensPerSecondSquared ?? "not measured"} (tok/s)²`;

/** The figures the token algorithms were given: calibrated on the training slice, and today's rule beside them. */
export function userFiguresLine(result: MatrixResult): string {
  const old = result.ruleOfThumb;
  const today = `80 % rows: ${old.tokensPerSecondPerReplica} tok/s per replica (80 % of the fluid capacity at this replay's mean request), TTFT target = SLO ${old.ttftTargetMilliseconds} ms.`;
  const all = result.calibrated;
  if (all === undefined) return `User figures: no training slice, no calibrated row. ${today}`;
  const each = all.map((c) => {
    const figure =
      c.tokensPerSecondPerReplica === undefined
        ? "no figure, so no calibrated row"
        : `${c.tokensPerSecondPerReplica} tok/s per replica`;
    return `judged as the ${c.reading} guard reads TTFT, served by static fleets of ${c.loadTestReplicas.join(", ")} replicas: ${figure}, TTFT target ${c.ttftTargetMilliseconds} ms, ITL ${c.itlTargetMilliseconds} ms, maxReplicas ${c.maxReplicas}, training fleet ${c.trainingFleetReplicas ?? "not sized"}, ${demandNoiseText(c)} (calibrate: ${c.why})`;
  });
  // The "load test filled" rows' figures (docs/quality.md, sixteenth run).
  const filled = (result.filled ?? []).map(
    (c) =>
      `served by static fleets of ${c.loadTestReplicas.join(", ")} replicas: ${c.tokensPerSecondPerReplica ?? "no figure"} tok/s per replica, targets broke at ${c.capacityTokensPerSecondPerReplica ?? "no break"}, ${demandNoiseText(c)}`,
  );
  const fill = filled.length === 0 ? "" : ` With the load test filled, ${filled.join("; and ")}.`;
  return `User figures: calibrated on the first ${trainingSeconds / 60} min (not in this replay), ${each.join("; and ")}.${fill} ${today}`;
}

/** One table: the oracle, the best point of each baseline at the goal, every mds-scaler run, then the sweeps. */
export function formatMatrix(result: MatrixResult, title: string): string {
  const o = result.oracle.gpuHours;
  const out: string[] = [
    `### ${title}`,
    "",
    `${result.requests} requests over ${(result.spanSeconds / 60).toFixed(1)} min; matrix run time ${result.wallSeconds.toFixed(0)} s.`,
    "",
    userFiguresLine(result),
    "",
    line(tableHeader),
    line(tableHeader.map(() => "---")),
  ];
  out.push(line(rowCells(result.oracle, o)));
  const families = ["static", "hpa", "knative"];
  for (const family of families) {
    const best = cheapestAtGoal(result.rows.filter((r) => r.family === family));
    out.push(
      best === undefined
        ? line([`best ${family} at ${pct(attainmentGoal)}%: none reached`, ...tableHeader.slice(1).map(() => "")])
        : line(rowCells({ ...best, policy: `best ${family} at 99%: ${best.policy}` }, o)),
    );
  }
  const baselines = result.rows.filter((r) => families.includes(r.family));
  for (const row of result.rows.filter((r) => r.family === "mds-scaler")) {
    const position = families
      .map(
        (f) =>
          `${f} ${frontierPosition(
            row,
            result.rows.filter((r) => r.family === f),
          )}`,
      )
      .join(", ");
    out.push(line(rowCells({ ...row, policy: `**${row.policy}**` }, o)));
    out.push(line([`↳ frontier: ${position}; reasons: ${row.notes ?? ""}`, ...tableHeader.slice(1).map(() => "")]));
    // With both guard readings a calibrated row's label ends "(calibrated; <reading> guard)".
    if (calibratedPolicies.some((label) => row.policy.startsWith(label.slice(0, -1)))) {
      const verdict = goalVerdict(row, result);
      const text = `↳ goal: ${verdict.met ? "met" : "not met"} (${verdict.parts.join("; ")})`;
      out.push(line([text, ...tableHeader.slice(1).map(() => "")]));
    }
  }
  out.push(line(["*sweeps*", ...tableHeader.slice(1).map(() => "")]));
  for (const row of baselines) out.push(line(rowCells(row, o)));
  out.push("");
  return out.join("\n");
}

const scenarioHeader = [
  "policy",
  "SLO %",
  "TTFT %",
  "ITL %",
  "GPU-h",
  "GPU-h by role",
  "scale events",
  "rollbacks",
  "pending holds",
  "max replicas",
  "max backlog",
  "sim s",
];

/** The quota and disaggregation runs of one trace: one row per run, then the planner's reasons. */
export function formatScenarios(result: ScenarioResult, title: string): string {
  const out: string[] = [
    `### ${title}`,
    "",
    `${result.requests} requests over ${(result.spanSeconds / 60).toFixed(1)} min; run time ${result.wallSeconds.toFixed(0)} s.`,
    "",
    line(scenarioHeader),
    line(scenarioHeader.map(() => "---")),
  ];
  for (const { run, rollbacks, pendingPasses } of result.rows) {
    const byRole = Object.entries(run.gpuHoursByRole);
    out.push(
      line([
        run.family === "mds-scaler" ? `**${run.policy}**` : run.policy,
        pct(run.attainment.both),
        pct(run.attainment.ttft),
        pct(run.attainment.itl),
        run.gpuHours.toFixed(2),
        byRole.length > 1 ? byRole.map(([role, h]) => `${role} ${h.toFixed(2)}`).join(", ") : "",
        String(run.scaleEvents),
        String(rollbacks),
        String(pendingPasses),
        String(run.maxReplicas),
        String(run.maxBacklog),
        run.wallSeconds.toFixed(1),
      ]),
    );
    if (run.notes !== undefined) out.push(line([`↳ reasons: ${run.notes}`, ...scenarioHeader.slice(1).map(() => "")]));
  }
  out.push("");
  return out.join("\n");
}
