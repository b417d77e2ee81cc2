/**
 * `mds-scaler validate -f scaler.yaml [--target deployment.yaml]`: prints the
 * defaulted object as YAML and exits 0, or prints every problem (field path,
 * value, reason) and exits 1. The admission webhook runs the same validation,
 * with the same warnings (`--engine-scrape-interval` is the controller's).
 */
import { stringify } from "yaml";
import { formatProblem, type Problem } from "../core/api/problem.js";
import { parseTarget, validateScaler } from "../core/api/validation.js";
import type { ModelDeployment } from "../core/api/model-deployment.js";
import { flagLines, invocationOf, readFlags, requiredFlag, stringFlag } from "./flags.js";
import type { CommandFlag } from "../app/settings.js";
import { engineScrapeIntervalFlag, engineScrapeIntervalSecondsOf } from "./pass-flags.js";
import { exitCodes, type CliIo, type Command } from "./io.js";
import { parseYamlDocuments } from "./yaml-documents.js";

/** validate's flags: the help and the command line are both read from this table. */
const validateFlags: readonly CommandFlag[] = [
  { flag: "--filename", short: "f", value: "FILE", help: "the ModelDeploymentScaler (every document of the file)" },
  { flag: "--target", short: "t", value: "FILE", help: "its ModelDeployment, to check the scaler's roles against" },
  engineScrapeIntervalFlag,
  { flag: "--help", short: "h", value: "", help: "this help" },
];

export const validateUsage = `usage: mds-scaler validate -f <scaler.yaml> [--target <deployment.yaml>]

${flagLines(validateFlags)}
`;

interface ValidateArgs {
  readonly file: string;
  readonly target?: string;
  readonly engineScrapeIntervalSeconds: number;
}

/** The command line read by the flag table, or `undefined` for `--help`; throws `UsageError`. */
function parseValidateArgs(args: readonly string[]): ValidateArgs | undefined {
  const values = readFlags(validateFlags, args, { emptyIsMissing: true });
  if (values["help"] === true) return undefined;
  const file = requiredFlag(values, "filename", "-f <scaler.yaml> is required");
  const target = stringFlag(values, "target");
  const engineScrapeIntervalSeconds = engineScrapeIntervalSecondsOf(values);
  return { file, engineScrapeIntervalSeconds, ...(target === undefined ? {} : { target }) };
}

/** Reads the YAML documents of a file, or returns why it cannot. */
function readDocuments(path: string, io: CliIo): unknown[] | string {
  let text: string;
  try {
    text = io.readFile(path);
  } catch (error) {
    return `cannot read ${path}: ${error instanceof Error ? error.message : String(error)}`;
  }
  return parseYamlDocuments(text, path);
}

function printProblems(io: CliIo, problems: readonly Problem[], heading?: string): void {
  if (heading !== undefined) io.stderr(`${heading}\n`);
  for (const p of problems) io.stderr(`${formatProblem(p)}\n`);
}

function loadTarget(path: string, io: CliIo): ModelDeployment | number {
  const docs = readDocuments(path, io);
  if (typeof docs === "string") {
    io.stderr(`${docs}\n`);
    return exitCodes.invalid;
  }
  if (docs.length !== 1) {
    io.stderr(`${path}: expected one ModelDeployment, found ${docs.length} documents\n`);
    return exitCodes.invalid;
  }
  const parsed = parseTarget(docs[0]);
  if (!parsed.ok) {
    printProblems(io, parsed.problems, `${path}: not a ModelDeployment the scaler can read`);
    return exitCodes.invalid;
  }
  return parsed.value;
}

export function runValidate(args: readonly string[], io: CliIo): number {
  const parsed = invocationOf(() => parseValidateArgs(args), validateUsage, io);
  if (typeof parsed === "number") return parsed;
  const target = parsed.target === undefined ? undefined : loadTarget(parsed.target, io);
  if (typeof target === "number") return target;
  const docs = readDocuments(parsed.file, io);
  if (typeof docs === "string") {
    io.stderr(`${docs}\n`);
    return exitCodes.invalid;
  }
  if (docs.length === 0) {
    io.stderr(`${parsed.file}: no ModelDeploymentScaler found\n`);
    return exitCodes.invalid;
  }
  let code: number = exitCodes.ok;
  const outputs: string[] = [];
  docs.forEach((doc, index) => {
    const result = validateScaler(doc, {
      engineScrapeIntervalSeconds: parsed.engineScrapeIntervalSeconds,
      ...(target === undefined ? {} : { target }),
    });
    const where = docs.length > 1 ? `${parsed.file} (document ${index + 1})` : parsed.file;
    if (result.warnings.length > 0)
      printProblems(
        io,
        result.warnings.map((w) => ({ ...w, reason: `warning: ${w.reason}` })),
      );
    if (result.ok) outputs.push(stringify(result.value, { lineWidth: 0 }));
    else {
      printProblems(
        io,
        result.problems,
        `${where}: ${result.problems.length} problem${result.problems.length === 1 ? "" : "s"}`,
      );
      code = exitCodes.invalid;
    }
  });
  if (code === exitCodes.ok) io.stdout(outputs.join("---\n"));
  return code;
}

export const validateCommand: Command = {
  summary: "check a ModelDeploymentScaler and print it with defaults applied",
  usage: validateUsage,
  run: runValidate,
};
