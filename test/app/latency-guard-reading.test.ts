/** `--latency-guard-reading` (`MDS_LATENCY_GUARD_READING`): queueing by default (design call 14), literal selectable, anything else named. */
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/app/config.js";

const base = ["--prometheus-url=http://127.0.0.1:9090"];

describe("--latency-guard-reading", () => {
  it("defaults to queueing, the guard on latency replicas can lower (docs/quality.md, fifth run)", () => {
    expect(loadConfig(base, {}).latencyGuardReading).toBe("queueing");
  });

  it("selects a reading by flag or variable; the flag wins", () => {
    expect(loadConfig([...base, "--latency-guard-reading=literal"], {}).latencyGuardReading).toBe("literal");
    expect(loadConfig(base, { MDS_LATENCY_GUARD_READING: "literal" }).latencyGuardReading).toBe("literal");
    const both = loadConfig([...base, "--latency-guard-reading", "queueing"], { MDS_LATENCY_GUARD_READING: "literal" });
    expect(both.latencyGuardReading).toBe("queueing");
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
