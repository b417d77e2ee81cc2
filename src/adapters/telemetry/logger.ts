/**
 * Structured JSON logs, one object per line. Created once in the composition
 * root and passed down; nothing reads a global logger.
 */
export type LogLevel = "debug" | "info" | "warn" | "error";
const levelRank: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
}

/** Serialises errors with their `cause` chain, so wrapped adapter errors stay readable. */
function plain(value: unknown, depth = 0): unknown {
  if (value instanceof Error) {
    const out: Record<string, unknown> = { name: value.name, message: value.message };
    if (value.cause !== undefined && depth < 5) out["cause"] = plain(value.cause, depth + 1);
    return out;
  }
  return value;
}

export function createLogger(opts: {
  level: LogLevel;
  write?: (line: string) => void;
  clock?: () => Date;
  fields?: Record<string, unknown>;
}): Logger {
  const write = opts.write ?? ((line: string) => process.stderr.write(line + "\n"));
  const clock = opts.clock ?? (() => new Date());
  const base = opts.fields ?? {};
  const emit = (level: LogLevel, message: string, fields?: Record<string, unknown>): void => {
    if (levelRank[level] < levelRank[opts.level]) return;
    const record: Record<string, unknown> = { time: clock().toISOString(), level, msg: message, ...base };
    for (const [k, v] of Object.entries(fields ?? {})) record[k] = plain(v);
    write(JSON.stringify(record));
  };
  return {
    debug: (m, f) => emit("debug", m, f),
    info: (m, f) => emit("info", m, f),
    warn: (m, f) => emit("warn", m, f),
    error: (m, f) => emit("error", m, f),
    child: (fields) => createLogger({ ...opts, write, clock, fields: { ...base, ...fields } }),
  };
}
