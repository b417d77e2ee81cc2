/**
 * `bench:quality --seed 1,2,3`: each table drawn at several seeds, and one line per table and seed with the rows
 * docs/quality.md's summary judges (TokenThroughput as calibrated, Predictive's best calibrated row), so a verdict
 * that holds at one draw and not at another shows in one run (the thirty-third run found such verdicts).
 */
import { goalVerdict, type GoalVerdict } from "./goal.js";
import {
  attainmentGoal,
  calibratedLabel,
  cheapestAtGoal,
  predictiveBestLabel,
  type MatrixResult,
  type Row,
} from "./matrix.js";

/** One table at one seed. */
export interface SeededTable {
  readonly table: string;
  readonly seed: number;
  readonly result: MatrixResult;
}

/** The summary's two rows, by label; a row is absent where the matrix ran none (no figure, or several guard readings, whose labels name the reading). */
export function headlineRows(result: MatrixResult): { readonly tokenThroughput?: Row; readonly predictive?: Row } {
  const tokenThroughput = result.rows.find((r) => r.policy === calibratedLabel("TokenThroughput"));
  const predictive = result.rows.find((r) => r.policy === predictiveBestLabel);
  return { ...(tokenThroughput ? { tokenThroughput } : {}), ...(predictive ? { predictive } : {}) };
}

/** The goal of each headline row of one table; absent where the table has no such row. */
function headlineVerdicts(result: MatrixResult): {
  readonly tokenThroughput?: GoalVerdict;
  readonly predictive?: GoalVerdict;
} {
  const rows = headlineRows(result);
  return {
    ...(rows.tokenThroughput ? { tokenThroughput: goalVerdict(rows.tokenThroughput, result) } : {}),
    ...(rows.predictive ? { predictive: goalVerdict(rows.predictive, result) } : {}),
  };
}

function verdictCell(v: GoalVerdict | undefined): string {
  if (v === undefined) return "no row";
  const cell = `${(100 * v.attainment).toFixed(2)} %, ${v.oracleRatio.toFixed(2)} ×`;
  // Worth saying where the row keeps 99 % and spends less than a fleet it had to beat, yet misses on the oracle's ratio.
  const belowFleet = !v.met && v.attainment >= attainmentGoal && v.staticMustBeBeaten && v.beatsStatic;
  return `${v.met ? `**${cell}** met` : cell}${belowFleet ? " (below the fleet)" : ""}`;
}

/** A markdown table: per table and seed, calibrate's figure, the fixed fleet ÷ the oracle, and each headline row's goal. */
export function formatSeedSummary(tables: readonly SeededTable[]): string {
  const lines = [
    "### The goal per seed",
    "",
    "| table | seed | calibrate's figure | smallest fixed fleet at 99 % ÷ oracle | TokenThroughput (calibrated) | Predictive (best calibrated) |",
    "| --- | --- | --- | --- | --- | --- |",
  ];
  const metBySeed = { tokenThroughput: new Map<number, number>(), predictive: new Map<number, number>() };
  for (const { table, seed, result } of tables) {
    const verdicts = headlineVerdicts(result);
    for (const pick of ["tokenThroughput", "predictive"] as const)
      metBySeed[pick].set(seed, (metBySeed[pick].get(seed) ?? 0) + (verdicts[pick]?.met === true ? 1 : 0));
    const figure = result.calibrated?.[0]?.tokensPerSecondPerReplica;
    const best = cheapestAtGoal(result.rows.filter((r) => r.family === "static"));
    const fleet =
      best === undefined ? "none" : `${best.policy}: ${(best.gpuHours / result.oracle.gpuHours).toFixed(2)} ×`;
    lines.push(
      `| ${table} | ${seed} | ${figure ?? "none"} | ${fleet} | ${verdictCell(verdicts.tokenThroughput)} | ${verdictCell(verdicts.predictive)} |`,
    );
  }
  const met = (bySeed: ReadonlyMap<number, number>): string =>
    [...bySeed].map(([seed, n]) => `seed ${seed}: ${n}`).join(", ");
  const perSeed = new Set(tables.map((t) => t.table)).size;
  lines.push(
    "",
    `Tables meeting the goal, of ${perSeed}: TokenThroughput ${met(metBySeed.tokenThroughput)}; Predictive ${met(metBySeed.predictive)}.`,
  );
  return `${lines.join("\n")}\n`;
}
