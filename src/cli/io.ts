/** What a CLI command may touch: tests pass an in-memory implementation. */
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  /** Reads a whole file as UTF-8; `-` is standard input. Throws when it cannot. */
  readFile(path: string): string;
}

/** Exit codes shared by every command. */
export const exitCodes = { ok: 0, invalid: 1, usage: 2 } as const;

/** A subcommand: `run` returns the process exit code. */
export interface Command {
  readonly summary: string;
  readonly usage: string;
  run(args: readonly string[], io: CliIo): number | Promise<number>;
}
