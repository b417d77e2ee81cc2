/** The retry back-off and the once-per-state-change failure log, with the draw and the time pinned. */
import { describe, expect, it } from "vitest";
import { backoffDelayMs, FailureLog } from "../../../src/adapters/retry/backoff.js";
import { createLogger } from "../../../src/adapters/telemetry/logger.js";

const policy = { initialMs: 1_000, maxMs: 30_000 };

describe("backoffDelayMs", () => {
  it("doubles per consecutive failure up to the cap", () => {
    // The top of the jitter range is the step itself.
    const tops = [1, 2, 3, 4, 5, 6, 7, 50].map((n) => backoffDelayMs(n, 1, policy));
    expect(tops).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000]);
  });

  it("draws from the upper half of the step, so replicas failing together spread out", () => {
    expect(backoffDelayMs(3, 0, policy)).toBe(2_000);
    expect(backoffDelayMs(3, 0.5, policy)).toBe(3_000);
    expect(backoffDelayMs(3, 0.999, policy)).toBe(3_998);
    const draws = new Set([0.1, 0.3, 0.7, 0.9].map((r) => backoffDelayMs(4, r, policy)));
    expect(draws.size).toBe(4);
  });

  it("stays within [step/2, step] for any draw and any count", () => {
    for (const n of [0, 1, 2, 10, 1_000]) {
      for (const r of [-1, 0, 0.25, 0.75, 1, 2]) {
        const step = Math.min(policy.maxMs, policy.initialMs * 2 ** Math.max(0, Math.min(n - 1, 30)));
        const delay = backoffDelayMs(n, r, policy);
        expect(delay).toBeGreaterThanOrEqual(step / 2);
        expect(delay).toBeLessThanOrEqual(step);
      }
    }
  });
});

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
