/**
 * Admission for ModelDeploymentScaler objects: the same function backs the
 * webhook and `mds-scaler validate`. It never throws; it returns the
 * defaulted object, or every problem found, each with its field path, the
 * offending value and the reason.
 *
 * Order: the schema (types, ranges, quantities, `stepPolicy`), the
 * cross-field rules (`./rules/index.ts`), ratio feasibility
 * (`./ratio-feasibility.ts`), then, when a target is supplied, the target
 * checks (`./target-checks.ts`). Warnings: an undecided ratio feasibility
 * search; when the engines' scrape interval is given, a rate window shorter
 * than two scrapes (`./window-scrapes.ts`); when a target is supplied, what
 * the target makes of the spec (`./target-warnings.ts`); a floors' calibration date
 * that is not a time (`./floors-calibrated.ts`).
 */
import { defaultScaler } from "./defaulting.js";
import { floorsCalibratedWarnings } from "./floors-calibrated.js";
import { ModelDeploymentSchema, type ModelDeployment } from "./model-deployment.js";
import { valueAt, type Problem } from "./problem.js";
import { ratioFeasibilityFindings } from "./ratio-feasibility.js";
import { specRules } from "./rules/index.js";
import { schemaProblems } from "./rules/schema.js";
import { readSpecView } from "./rules/view.js";
import type { DefaultedScaler } from "./scaler.js";
import { checkAgainstTarget } from "./target-checks.js";
import { warnAgainstTarget } from "./target-warnings.js";
import { windowScrapeWarnings } from "./window-scrapes.js";

export type { Problem } from "./problem.js";

export interface ValidateOptions {
  /** The stored object on update; enables the update rules. */
  readonly old?: object;
  /** The target ModelDeployment when it exists; enables the target checks. */
  readonly target?: ModelDeployment;
  /** How often Prometheus scrapes the engines, seconds; enables the `window-scrapes` warnings. */
  readonly engineScrapeIntervalSeconds?: number;
}

/** Warnings never refuse the object (an undecided ratio feasibility search, a window shorter than two scrapes, the target warnings). */
export type ValidationResult =
  | { readonly ok: true; readonly value: DefaultedScaler; readonly warnings: Problem[] }
  | { readonly ok: false; readonly problems: Problem[]; readonly warnings: Problem[] };

export function validateScaler(input: unknown, opts: ValidateOptions = {}): ValidationResult {
  const defaulted = defaultScaler(input);
  const spec = readSpecView(valueAt(input, ["spec"]));
  // Stryker disable next-line ConditionalExpression: the view of no object names no target, so no update rule fires
  const old = opts.old === undefined ? undefined : readSpecView(valueAt(opts.old, ["spec"]));
  const feasibility = ratioFeasibilityFindings(spec);
  const problems = [
    ...(defaulted.ok ? [] : defaulted.problems),
    ...specRules.flatMap((rule) => rule.check(old === undefined ? { spec } : { spec, old })),
    ...feasibility.problems,
    ...(opts.target === undefined ? [] : checkAgainstTarget(spec, opts.target)),
  ];
  if (problems.length > 0 || !defaulted.ok) return { ok: false, problems, warnings: feasibility.warnings };
  const windows =
    opts.engineScrapeIntervalSeconds === undefined
      ? []
      : windowScrapeWarnings(defaulted.value.spec, opts.engineScrapeIntervalSeconds);
  const target = opts.target === undefined ? [] : warnAgainstTarget(defaulted.value.spec, opts.target);
  const floorsDate = floorsCalibratedWarnings(valueAt(input, ["metadata"]));
  return {
    ok: true,
    value: defaulted.value,
    warnings: [...feasibility.warnings, ...windows, ...target, ...floorsDate],
  };
}

/** Parses a target ModelDeployment; problems carry paths under `target`. */
export function parseTarget(input: unknown): { ok: true; value: ModelDeployment } | { ok: false; problems: Problem[] } {
  const parsed = ModelDeploymentSchema.safeParse(input);
  if (parsed.success) return { ok: true, value: parsed.data };
  return {
    ok: false,
    problems: schemaProblems(parsed.error.issues, input, ["target"]).map((p) => ({ ...p, rule: "target-schema" })),
  };
}
