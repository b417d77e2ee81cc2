/**
 * The observation builder's window rules (the Prometheus source's): gauges
 * from the newest scrape, rates over the scrapes inside a window, fewer than
 * two scrapes is not established, and the core's `observeRole` does the rest.
 */
import { describe, expect, it } from "vitest";
import { buildObservation, ScrapeHistory, windowRates, type Scrape } from "../../../src/sim/quality/observations.js";

function scrape(atSeconds: number, promptTokens: number, generationTokens: number, running = 3, waiting = 1): Scrape {
  const ttft = [
    { upperBound: 0.25, count: atSeconds },
    { upperBound: 0.5, count: 2 * atSeconds },
    { upperBound: Infinity, count: 2 * atSeconds },
  ];
  return {
    atSeconds,
    promptTokens,
    generationTokens,
    prefixCacheHits: 0,
    running,
    waiting,
    kvUsage: 0.5,
    ttft,
    ttftCount: 2 * atSeconds,
    ttftSum: 0.6 * atSeconds,
    itl: [{ upperBound: Infinity, count: 0 }],
    itlCount: 0,
    itlSum: 0,
    queueTime: [
      { upperBound: 0.3, count: atSeconds },
      { upperBound: Infinity, count: atSeconds },
    ],
    queueTimeCount: atSeconds,
    queueTimeSum: 0.01 * atSeconds,
  };
}

const epochMs = Date.parse("2026-01-01T00:00:00Z");

describe("observation builder", () => {
  it("rates are the exact delta over the scrapes inside the window; one scrape is not established", () => {
    expect(windowRates([scrape(15, 100, 10)])).toEqual({ established: false });
    const rates = windowRates([scrape(15, 1000, 100), scrape(30, 4000, 400), scrape(45, 7000, 700)]);
    expect(rates.established).toBe(true);
    expect(rates.promptTokensPerSecond).toBe(200);
    expect(rates.generationTokensPerSecond).toBe(20);
    expect(rates.ttftSeconds?.count).toBe(60);
    expect(rates.queueTimeSeconds).toEqual({
      buckets: [
        { upperBound: 0.3, count: 30 },
        { upperBound: Infinity, count: 30 },
      ],
      count: 30,
      sum: expect.closeTo(0.3, 9) as number,
    });
  });

  it("builds the role observation through the core: windows, gauges, the p95 bucket", () => {
    const history = new ScrapeHistory(900);
    for (let t = 0; t <= 180; t += 15) history.add(scrape(t, 300 * t, 30 * t));
    const input = {
      pods: [{ pod: "server-0", history }],
      readyReplicas: 1,
      nowSeconds: 180,
      epochMs,
      stableWindowSeconds: 180,
      panicWindowSeconds: 60,
      samplingIntervalSeconds: 15,
      reads: [],
    };
    const observation = buildObservation(input);
    expect(observation).toMatchObject({
      signalState: "Fresh",
      readyReplicas: 1,
      sampledReplicas: 1,
      runningRequests: 3,
      waitingRequests: 1,
      promptTokensPerSecond: 300,
      generationTokensPerSecond: 30,
      panicPromptTokensPerSecond: 300,
      ttftMilliseconds: 500,
      queueTimeMilliseconds: 300,
      queueTimeExport: { pods: 1, of: 1 },
    });
    // A pod whose newest scrape is older than the staleness limit (60 s at a 15 s interval) is stale.
    expect(buildObservation({ ...input, nowSeconds: 300 }).signalState).toBe("Stale");
    // A ready pod with a single scrape holds coverage incomplete.
    const fresh = new ScrapeHistory(900);
    fresh.add(scrape(180, 0, 0));
    const two = buildObservation({
      ...input,
      pods: [...input.pods, { pod: "server-1", history: fresh }],
      readyReplicas: 2,
    });
    expect(two.sampledReplicas).toBe(1);
  });
});
