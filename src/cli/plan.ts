/**
 * `mds-scaler plan -f FILE [-o json|yaml]`: runs one planning pass on a saved
 * snapshot (scaler with its previous status, target, observations, time) and
 * prints `{status, commit}`. Feeding the printed status into the next input
 * replays a timeline. The latency guard's reading and the engines' scrape
 * interval are the controller's flags of the same names (src/cli/pass-flags.ts),
 * so the pass decides and words its conditions as the controller would.
 * Invalid input exits 1 naming the field; a blocked plan is an ordinary result
 * and exits 0.
 */
import { stringify } from "yaml";
import { z } from "zod";
import { formatProblem, type Problem } from "../core/api/problem.js";
import { schemaProblems } from "../core/api/rules/schema.js";
import { parseTarget, validateScaler } from "../core/api/validation.js";
import type { ModelDeployment } from "../core/api/model-deployment.js";
import type { Scaler } from "../core/api/scaler.js";
import type { Algorithm } from "../core/algorithms/types.js";
import { plan } from "../core/planner/plan.js";
import type { PlanInput, PlanResult } from "../core/planner/types.js";
import type { RoleObservation } from "../core/signals/types.js";
import { flagLines, invocationOf, readFlags, requiredFlag, stringFlag, UsageError } from "./flags.js";
import {
  engineScrapeIntervalFlag,
  engineScrapeIntervalSecondsOf,
  latencyGuardReadingFlag,
  latencyGuardReadingOf,
} from "./pass-flags.js";
import type { CommandFlag } from "../app/settings.js";
import { exitCodes, type CliIo, type Command } from "./io.js";
import { parseYamlDocuments } from "./yaml-documents.js";

const measured = z.number().finite().min(0);

/** One role's observation as `plan` reads it; an absent field is a missing signal. */
export const ObservationInputSchema = z.strictObject({
  readyReplicas: z.number().int().min(0),
  sampledReplicas: z.number().int().min(0),
  signalState: z.enum(["Fresh", "Idle", "Missing", "Stale"]),
  runningRequests: measured.optional(),
  waitingRequests: measured.optional(),
  promptTokensPerSecond: measured.optional(),
  generationTokensPerSecond: measured.optional(),
  panicPromptTokensPerSecond: measured.optional(),
  panicGenerationTokensPerSecond: measured.optional(),
  kvCacheUsage: measured.optional(),
  ttftMilliseconds: measured.optional(),
  itlMilliseconds: measured.optional(),
  /** p95 queue time; given, every sampled replica exports it, absent, none does. */
  queueTimeMilliseconds: measured.optional(),
});

/** The observation `plan` hands the core: queue time, when given, is exported by every sampled replica. */
function observationOf(input: z.output<typeof ObservationInputSchema>): RoleObservation {
  // Validated: every reading present is a finite number, absent ones are left out.
  const observation = input as RoleObservation;
  const sampled = observation.sampledReplicas;
  if (sampled === 0) return observation;
  const pods = observation.queueTimeMilliseconds === undefined ? 0 : sampled;
  return { ...observation, queueTimeExport: { pods, of: sampled } };
}

/** The envelope around the scaler and target, which have their own validation. */
const EnvelopeSchema = z.looseObject({
  now: z
    .string()
    .refine((text) => Number.isFinite(Date.parse(text)), "must be an RFC 3339 time such as 2026-11-29T12:00:00Z"),
  scaler: z.record(z.string(), z.unknown()),
  target: z.record(z.string(), z.unknown()).optional(),
  observations: z.record(z.string(), ObservationInputSchema).optional(),
});

export type OutputFormat = "json" | "yaml";

/** plan's flags: the help and the command line are both read from this table. */
const planFlags: readonly CommandFlag[] = [
  {
    flag: "--filename",
    short: "f",
    value: "FILE",
    help: "the pass input: scaler with its previous status, target, observations and time (- reads standard input)",
  },
  { flag: "--output", short: "o", value: "json|yaml", default: "yaml", help: "output format" },
  latencyGuardReadingFlag,
  engineScrapeIntervalFlag,
  { flag: "--help", short: "h", value: "", help: "this help" },
];

export const planUsage = `usage: mds-scaler plan -f <input.yaml|-> [-o json|yaml] [--latency-guard-reading queueing|literal] [--engine-scrape-interval DURATION]

${flagLines(planFlags)}
`;

interface PlanArgs {
  readonly file: string;
  readonly output: OutputFormat;
  readonly controllerFlags: ControllerFlags;
}

/** The planner inputs the controller's flags of the same names set (src/cli/pass-flags.ts). */
export type ControllerFlags = Pick<PlanInput, "latencyGuardReading" | "engineScrapeIntervalSeconds">;

/** The command line read by the flag table, or `undefined` for `--help`; throws `UsageError`. */
function parsePlanArgs(args: readonly string[]): PlanArgs | undefined {
  const values = readFlags(planFlags, args, { emptyIsMissing: true });
  if (values["help"] === true) return undefined;
  const output = stringFlag(values, "output") ?? "yaml";
  if (output !== "json" && output !== "yaml")
    throw new UsageError(`-o must be json or yaml, got ${JSON.stringify(output)}`);
  return {
    file: requiredFlag(values, "filename", "-f <input.yaml> is required (- reads standard input)"),
    output,
    controllerFlags: {
      latencyGuardReading: latencyGuardReadingOf(values),
      engineScrapeIntervalSeconds: engineScrapeIntervalSecondsOf(values),
    },
  };
}

/** A validated pass input, or the problems that refuse it. */
export type PlanFileResult =
  | { readonly ok: true; readonly input: Parameters<typeof plan>[0] }
  | { readonly ok: false; readonly problems: readonly Problem[] };

/** Validates one parsed input document into a planner input, with `controllerFlags` (none: the planner's defaults). */
export function readPlanInput(doc: unknown, algorithm?: Algorithm, controllerFlags?: ControllerFlags): PlanFileResult {
  const envelope = EnvelopeSchema.safeParse(doc);
  if (!envelope.success) return { ok: false, problems: schemaProblems(envelope.error.issues, doc) };
  const scaler = validateScaler(envelope.data.scaler);
  if (!scaler.ok) return { ok: false, problems: scaler.problems.map((p) => ({ ...p, path: `scaler.${p.path}` })) };
  let target: ModelDeployment | undefined;
  if (envelope.data.target !== undefined) {
    const parsed = parseTarget(envelope.data.target);
    if (!parsed.ok) return { ok: false, problems: parsed.problems };
    target = parsed.value;
  }
  const observations: Record<string, RoleObservation> = {};
  for (const [role, obs] of Object.entries(envelope.data.observations ?? {})) observations[role] = observationOf(obs);
  // DefaultedScaler omits `spec` from a loose object type, which widens the other fields.
  const { metadata, status } = scaler.value as unknown as Pick<Scaler, "metadata" | "status">;
  const spec = scaler.value.spec;
  return {
    ok: true,
    input: {
      scaler: { metadata, spec, status },
      target,
      observations,
      nowMs: Date.parse(envelope.data.now),
      ...(algorithm === undefined ? {} : { algorithm }),
      ...controllerFlags,
    },
  };
}

/** The printed result: `commit` is null when nothing is written. */
export function planOutput(result: PlanResult): { status: PlanResult["status"]; commit: PlanResult["commit"] | null } {
  return { status: result.status, commit: result.commit ?? null };
}

export function formatPlanOutput(result: PlanResult, format: OutputFormat): string {
  const out = planOutput(result);
  return format === "json"
    ? `${JSON.stringify(out, null, 2)}\n`
    : stringify(out, { lineWidth: 0, aliasDuplicateObjects: false });
}

/** Runs `plan`; `options.algorithm` replaces the registry's algorithm (tests). */
export function runPlan(args: readonly string[], io: CliIo, options: { readonly algorithm?: Algorithm } = {}): number {
  const parsed = invocationOf(() => parsePlanArgs(args), planUsage, io);
  if (typeof parsed === "number") return parsed;
  let text: string;
  try {
    text = io.readFile(parsed.file);
  } catch (error) {
    io.stderr(`cannot read ${parsed.file}: ${error instanceof Error ? error.message : String(error)}\n`);
    return exitCodes.invalid;
  }
  const values = parseYamlDocuments(text, parsed.file);
  if (typeof values === "string") {
    io.stderr(`${values}\n`);
    return exitCodes.invalid;
  }
  if (values.length !== 1) {
    io.stderr(`${parsed.file}: expected one input document, found ${values.length}\n`);
    return exitCodes.invalid;
  }
  const input = readPlanInput(values[0], options.algorithm, parsed.controllerFlags);
  if (!input.ok) {
    io.stderr(`${parsed.file}: ${input.problems.length} problem${input.problems.length === 1 ? "" : "s"}\n`);
    for (const p of input.problems) io.stderr(`${formatProblem(p)}\n`);
    return exitCodes.invalid;
  }
  io.stdout(formatPlanOutput(plan(input.input), parsed.output));
  return exitCodes.ok;
}

export const planCommand: Command = {
  summary: "run one planning pass on a saved snapshot and print {status, commit}",
  usage: planUsage,
  run: (args, io) => runPlan(args, io),
};
