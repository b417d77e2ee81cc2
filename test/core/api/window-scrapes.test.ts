/** Rule `window-scrapes`: a window shorter than two engine scrapes is warned about, never refused. */
import { describe, expect, it } from "vitest";
import { validateScaler } from "../../../src/core/api/validation.js";
import { windowScrapeWarnings } from "../../../src/core/api/window-scrapes.js";
import type { ScalerSpec } from "../../../src/core/api/scaler.js";

function spec(algorithm: Record<string, unknown>): ScalerSpec {
  const result = validateScaler({
    apiVersion: "worker.gpustack.ai/v1",
    kind: "ModelDeploymentScaler",
    metadata: { name: "llm", namespace: "default" },
    spec: { targetRef: { name: "llm" }, roles: [{ name: "server", maxReplicas: 4 }], algorithm },
  });
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result.value.spec;
}

const tokenThroughput = (windows: Record<string, number>) =>
  spec({ tokenThroughput: { serverTargetTokensPerSecond: "4000", ...windows } });

describe("window-scrapes", () => {
  it("warns about a panic window of one scrape, naming the field, the value and what it costs", () => {
    const [warning, ...rest] = windowScrapeWarnings(tokenThroughput({ panicWindowSeconds: 15 }), 15);
    expect(rest).toEqual([]);
    expect(warning).toEqual({
      rule: "window-scrapes",
      path: "spec.algorithm.tokenThroughput.panicWindowSeconds",
      value: 15,
      reason:
        "15 s holds under two engine scrapes of 15 s, so it never reads a rate: panic never engages, and latency and token-rate Proportional read the stable window; write at least 30 s",
    });
  });

  it("keeps every warning within the 256 ASCII characters Kubernetes shows, on the longest path", () => {
    const predictive = spec({
      predictive: {
        tokenThroughput: { serverTargetTokensPerSecond: "4000", stableWindowSeconds: 599, panicWindowSeconds: 299 },
      },
    });
    const warnings = windowScrapeWarnings(predictive, 299.999);
    expect(warnings).toHaveLength(2);
    for (const w of warnings) {
      const line = `${w.path} = ${String(w.value)}: ${w.reason}`;
      expect(line.length, line).toBeLessThanOrEqual(256);
      expect(line).toMatch(/^[\x20-\x7e]*$/);
    }
  });

  it("takes a window of exactly two scrapes: (t − 30 s, t] holds two samples 15 s apart", () => {
    expect(windowScrapeWarnings(tokenThroughput({ panicWindowSeconds: 30 }), 15)).toEqual([]);
    expect(windowScrapeWarnings(tokenThroughput({ panicWindowSeconds: 29 }), 14.5)).toEqual([]);
  });

  it("warns about the defaults where the engines are scraped every 31 s or more, stable window too", () => {
    const defaults = spec({ tokenThroughput: { serverTargetTokensPerSecond: "4000" } });
    expect(windowScrapeWarnings(defaults, 30)).toEqual([]);
    expect(windowScrapeWarnings(defaults, 31).map((w) => [w.path, w.value])).toEqual([
      ["spec.algorithm.tokenThroughput.panicWindowSeconds", 60],
    ]);
    const both = windowScrapeWarnings(defaults, 120);
    expect(both.map((w) => [w.path, w.value])).toEqual([
      ["spec.algorithm.tokenThroughput.stableWindowSeconds", 180],
      ["spec.algorithm.tokenThroughput.panicWindowSeconds", 60],
    ]);
    expect(both[0]?.reason).toContain("no pod is covered and every role waits for metrics; write at least 240 s");
  });

  it("names the block the algorithm reads: Predictive's own TokenThroughput block, or where a default applies", () => {
    const predictive = spec({
      predictive: { tokenThroughput: { serverTargetTokensPerSecond: "4000", panicWindowSeconds: 10 } },
    });
    expect(windowScrapeWarnings(predictive, 15).map((w) => w.path)).toEqual([
      "spec.algorithm.predictive.tokenThroughput.panicWindowSeconds",
    ]);
    const proportional = spec({
      proportional: { metric: "QueueDepth", roleTargets: [{ name: "server", target: "8" }] },
    });
    expect(windowScrapeWarnings(proportional, 45).map((w) => w.path)).toEqual([
      "spec.algorithm.tokenThroughput.panicWindowSeconds",
    ]);
  });

  it("reaches the warnings of admission only when the scrape interval is given, and never refuses", () => {
    const object = {
      apiVersion: "worker.gpustack.ai/v1",
      kind: "ModelDeploymentScaler",
      metadata: { name: "llm", namespace: "default" },
      spec: {
        targetRef: { name: "llm" },
        roles: [{ name: "server", maxReplicas: 4 }],
        algorithm: { tokenThroughput: { serverTargetTokensPerSecond: "4000", panicWindowSeconds: 10 } },
      },
    };
    const without = validateScaler(object);
    expect(without.ok && without.warnings).toEqual([]);
    const withInterval = validateScaler(object, { engineScrapeIntervalSeconds: 15 });
    expect(withInterval.ok).toBe(true);
    expect(withInterval.warnings.map((w) => w.rule)).toEqual(["window-scrapes"]);
  });
});
