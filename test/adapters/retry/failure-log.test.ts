/** The once-per-state-change failure log, with the time pinned. */
import { describe, expect, it } from "vitest";
import { FailureLog } from "../../../src/adapters/retry/failure-log.js";
import { createLogger } from "../../../src/adapters/telemetry/logger.js";

describe("FailureLog", () => {
  function recording(): { log: FailureLog; lines: () => { level: string; msg: string; [k: string]: unknown }[] } {
    const written: string[] = [];
    const logger = createLogger({ level: "debug", write: (line) => written.push(line) });
    return {
      log: new FailureLog("watch of scalers", logger),
      lines: () => written.map((l) => JSON.parse(l) as { level: string; msg: string }),
    };
  }

  it("logs once when failing starts and once when it recovers, not on every retry", () => {
    const { log, lines } = recording();
    log.succeeded(0);
    expect(lines()).toEqual([]);
    for (let i = 1; i <= 50; i++) expect(log.failed(new Error("connect ECONNREFUSED"), 1_000 * i)).toBe(i);
    expect(lines()).toHaveLength(1);
    expect(lines()[0]).toMatchObject({
      level: "warn",
      msg: "watch of scalers failing; retrying with back-off, logged again when it recovers",
      error: { message: "connect ECONNREFUSED" },
    });
    log.succeeded(60_000);
    log.succeeded(61_000);
    expect(lines()).toHaveLength(2);
    expect(lines()[1]).toMatchObject({
      level: "info",
      msg: "watch of scalers recovered",
      failedAttempts: 50,
      failingMs: 59_000,
    });
    expect(log.consecutiveFailures).toBe(0);
  });

  it("logs a second outage again and counts it from one", () => {
    const { log, lines } = recording();
    log.failed("first", 0);
    log.succeeded(10);
    expect(log.failed("second", 20)).toBe(1);
    log.failed("second", 30);
    expect(lines().map((l) => l.level)).toEqual(["warn", "info", "warn"]);
  });
});
