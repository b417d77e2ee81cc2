/**
 * A command's own flags as one table: `node:util` `parseArgs` reads the command line from it and the
 * `--help` lines are generated from it, so the two cannot disagree. A usage mistake (an unknown flag, a
 * missing or bad value) is a `UsageError` naming the flag and the value, which the command answers with
 * its usage and exit 2. A flag's shape (`CommandFlag`), its `parseArgs` options and its help line are
 * src/app/settings.ts's, as are the settings `controller` and `observe` share (flag and variable);
 * `calibrate` appends the Prometheus ones to its table.
 */
import { parseArgs } from "node:util";
import { commandFlagOptions, describeCommandFlags, type CommandFlag } from "../app/settings.js";
import { exitCodes, type CliIo } from "./io.js";

/** The command line was wrong: the command prints the message and its usage, and exits 2. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

export type FlagValues = Readonly<Record<string, string | string[] | boolean | undefined>>;

/** The `--help` lines of a table. */
export function flagLines(flags: readonly CommandFlag[]): string {
  return describeCommandFlags(flags).join("\n");
}

/**
 * Reads the command line by the table; unknown flags, stray arguments and missing values throw
 * `UsageError` with `node:util`'s message, which names the flag. With `emptyIsMissing`, `--flag=` is
 * refused too (`--flag needs a value`), for commands where no value may be empty.
 */
export function readFlags(
  flags: readonly CommandFlag[],
  args: readonly string[],
  options: { readonly emptyIsMissing?: boolean } = {},
): FlagValues {
  let values: FlagValues;
  try {
    values = parseArgs({ args: [...args], options: commandFlagOptions(flags), strict: true, allowPositionals: false })
      .values as FlagValues;
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  if (options.emptyIsMissing === true) {
    const empty = flags.find((f) => values[f.flag.slice(2)] === "");
    if (empty !== undefined) throw new UsageError(`${empty.flag} needs a value`);
  }
  return values;
}

/** A string flag's value, if given. */
export function stringFlag(values: FlagValues, name: string): string | undefined {
  const value = values[name];
  return typeof value === "string" ? value : undefined;
}

/** A given flag's value, or `UsageError` with `message` when it is absent. */
export function requiredFlag(values: FlagValues, name: string, message: string): string {
  const value = stringFlag(values, name);
  if (value === undefined) throw new UsageError(message);
  return value;
}

/**
 * A command's reading of its command line: the value `parse` returns, or the exit code after `--help`
 * (`parse` returns `undefined`: the usage, exit 0) or a `UsageError` (its message and the usage, exit 2).
 */
export function invocationOf<T>(parse: () => T | undefined, usage: string, io: CliIo): T | number {
  try {
    const parsed = parse();
    if (parsed !== undefined) return parsed;
    io.stderr(usage);
    return exitCodes.ok;
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.stderr(`${error.message}\n${usage}`);
    return exitCodes.usage;
  }
}

/** A positive number (or integer) flag, its default when absent; `UsageError` naming the flag and the value. */
export function positiveFlag(values: FlagValues, name: string, integer: boolean): number | undefined {
  const text = stringFlag(values, name);
  if (text === undefined) return undefined;
  const n = Number(text);
  if (Number.isFinite(n) && n > 0 && (!integer || Number.isInteger(n))) return n;
  throw new UsageError(`--${name} must be a positive ${integer ? "integer" : "number"}, got ${JSON.stringify(text)}`);
}
