/** `--latency-guard-reading` (`MDS_LATENCY_GUARD_READING`): literal by default, queueing selectable, anything else named. */
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/app/config.js";

const base = ["--prometheus-url=http://127.0.0.1:9090"];

describe("--latency-guard-reading", () => {
  it("defaults to literal, the specification's reading (the queueing reading failed its quality rule)", () => {
    expect(loadConfig(base, {}).latencyGuardReading).toBe("literal");
  });

  it("selects a reading by flag or variable; the flag wins", () => {
    expect(loadConfig([...base, "--latency-guard-reading=queueing"], {}).latencyGuardReading).toBe("queueing");
    expect(loadConfig(base, { MDS_LATENCY_GUARD_READING: "queueing" }).latencyGuardReading).toBe("queueing");
    const both = loadConfig([...base, "--latency-guard-reading", "literal"], { MDS_LATENCY_GUARD_READING: "queueing" });
    expect(both.latencyGuardReading).toBe("literal");
  });

  it("refuses another value, naming the flag, the variable and the value", () => {
    let problems: readonly string[] = [];
    try {
      loadConfig([...base, "--latency-guard-reading=strict"], {});
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      problems = error.problems;
    }
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain('--latency-guard-reading (MDS_LATENCY_GUARD_READING) = "strict"');
  });
});
