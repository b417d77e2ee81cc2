/** The trace readers on the real shared traces, and ServeGen draws on a small series. */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  loadTrace,
  overlay,
  parseServeGenClient,
  serveGenArrivals,
  spreadQuantised,
} from "../../../src/sim/quality/traces.js";
import { tracesDir } from "./fixtures.js";

describe("trace readers", () => {
  it("reads the Azure 2023 traces whole and in order", () => {
    for (const [name, rows] of [
      ["azure-conv", 19_366],
      ["azure-code", 8_819],
    ] as const) {
      const trace = loadTrace(name, { tracesDir });
      expect(trace.requests).toHaveLength(rows);
      expect(trace.requests[0]?.arrivalSeconds).toBe(0);
      for (let i = 1; i < trace.requests.length; i++)
        expect(trace.requests[i]?.arrivalSeconds).toBeGreaterThanOrEqual(trace.requests[i - 1]?.arrivalSeconds ?? 0);
      expect(trace.spanSeconds).toBeGreaterThan(3400);
    }
  });

  it("spreads Mooncake's quantised timestamps within their step, keeping order and count", () => {
    const trace = loadTrace("mooncake-conversation", { tracesDir });
    expect(trace.requests).toHaveLength(12_031);
    const distinct = new Set(trace.requests.map((r) => r.arrivalSeconds)).size;
    expect(distinct).toBeGreaterThan(12_000);
    const spread = spreadQuantised([
      { arrivalSeconds: 0, promptTokens: 1, outputTokens: 1 },
      { arrivalSeconds: 0, promptTokens: 2, outputTokens: 1 },
      { arrivalSeconds: 3, promptTokens: 3, outputTokens: 1 },
    ]);
    expect(spread.map((r) => r.arrivalSeconds)).toEqual([0.75, 2.25, 4.5]);
    expect(spread.map((r) => r.promptTokens)).toEqual([1, 2, 3]);
  });

  it("names the file and the field of a bad trace", () => {
    const dir = mkdtempSync(join(tmpdir(), "mds-trace-"));
    const bad = join(dir, "bad.csv");
    writeFileSync(bad, "time,a,b\n1,2,3\n");
    expect(() => loadTrace(bad)).toThrow(/bad\.csv: line 1: the header "time,a,b" is no trace format read here/);
    expect(() => loadTrace("no-such-trace")).toThrow(/"no-such-trace" is neither a trace name/);
    expect(() => parseServeGenClient("0,abc,1,Gamma,1,1\n", "c.csv")).toThrow(/c\.csv: line 1: .*rate_rps/);
  });

  it("draws ServeGen arrivals at each window's rate and cuts out all-zero gap windows", () => {
    const client = parseServeGenClient(
      ["0,2,1,Gamma,1,0.5", "600,0,0,,0,0", "1200,4,2,Weibull,0.6,0.2"].join("\n"),
      "client.csv",
    );
    const lengths = [{ arrivalSeconds: 0, promptTokens: 100, outputTokens: 10 }];
    const requests = serveGenArrivals([client], {
      seed: 1,
      firstWindow: 0,
      windowCount: 3,
      rateScale: 1,
      compression: 1,
      lengths,
    });
    // The gap window is cut: the third window replays as the second.
    expect(Math.max(...requests.map((r) => r.arrivalSeconds))).toBeLessThan(1200);
    const first = requests.filter((r) => r.arrivalSeconds < 600).length;
    const second = requests.filter((r) => r.arrivalSeconds >= 600).length;
    expect(first / 600).toBeGreaterThan(1.6);
    expect(first / 600).toBeLessThan(2.4);
    expect(second / 600).toBeGreaterThan(3);
    expect(second / 600).toBeLessThan(5);
    expect(requests.every((r) => r.promptTokens === 100)).toBe(true);
  });

  it("the ServeGen day sample replays m-large's day at about the Azure conversation rate", () => {
    const trace = loadTrace("servegen-m-large-day", { tracesDir });
    expect(trace.spanSeconds).toBe(3600);
    const rate = trace.requests.length / trace.spanSeconds;
    expect(rate).toBeGreaterThan(4);
    expect(rate).toBeLessThan(7.5);
  });

  it("overlays shifted copies: K times the requests, same order of time", () => {
    const base = loadTrace("azure-code", { tracesDir });
    const scaled = overlay(base, 3, 1);
    expect(scaled.requests).toHaveLength(3 * base.requests.length);
    expect(scaled.spanSeconds).toBe(base.spanSeconds + 60);
  });
});
