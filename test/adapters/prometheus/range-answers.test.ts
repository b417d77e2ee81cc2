/**
 * RangeAnswers: instant answers at the steps of a period, cut from one range query per query text. That
 * a real Prometheus and VictoriaMetrics answer a period's passes this way as their instant queries do is
 * tested against them (test/integration/prometheus-source.test.ts, victoria-metrics.test.ts).
 */
import { describe, expect, it } from "vitest";
import { PrometheusQueryError } from "../../../src/adapters/prometheus/client.js";
import { RangeAnswers } from "../../../src/adapters/prometheus/range-answers.js";
import { FakeRangeClient } from "../../fakes/range-client.js";
import { queryFailure } from "../../support/query-failure.js";

const first = 1_796_000_000;
const grid = { firstUnixSeconds: first, lastUnixSeconds: first + 180, stepSeconds: 60 };
const series = (pod: string, points: [number, number][]) => ({
  labels: { pod },
  points: points.map(([t, value]) => ({ timestampUnixSeconds: first + t, value })),
});

describe("RangeAnswers", () => {
  it("asks each query text once over the whole period and answers each step with its own vector", async () => {
    const client = new FakeRangeClient(() => ({
      series: [
        series("a", [
          [0, 1],
          [60, 2],
          [180, 4],
        ]),
        series("b", [[60, 7]]),
      ],
    }));
    const answers = new RangeAnswers(client, grid);
    const steps = await Promise.all([0, 60, 120, 180].map((t) => answers.instantQuery("q", (first + t) * 1000)));
    expect(steps.map((s) => s.samples.map((x) => [x.labels["pod"], x.value, x.timestampUnixSeconds - first]))).toEqual([
      [["a", 1, 0]],
      [
        ["a", 2, 60],
        ["b", 7, 60],
      ],
      [],
      [["a", 4, 180]],
    ]);
    await answers.instantQuery("other", first * 1000);
    expect(client.asked).toEqual([
      { query: "q", startUnixSeconds: first, endUnixSeconds: first + 180, stepSeconds: 60 },
      { query: "other", startUnixSeconds: first, endUnixSeconds: first + 180, stepSeconds: 60 },
    ]);
    expect(answers.rangeQueries).toBe(2);
  });

  it("fails the query at every step when its range query fails, and gives every step the answer's warnings", async () => {
    const failed = new PrometheusQueryError("cannot reach prometheus x", "network");
    const answers = new RangeAnswers(
      new FakeRangeClient((q) => (q === "down" ? failed : { series: [], warnings: ["store 2 did not answer"] })),
      grid,
    );
    for (const t of [0, 180]) {
      expect(await queryFailure(answers.instantQuery("down", (first + t) * 1000))).toBe(failed);
      expect((await answers.instantQuery("partial", (first + t) * 1000)).warnings).toEqual(["store 2 did not answer"]);
    }
  });

  it("asks the halves of a range that ran out of time, one after the other, and answers every step from its piece", async () => {
    const nine = { ...grid, lastUnixSeconds: first + 8 * 60 };
    const timeout = new PrometheusQueryError("query to x timed out after 10000ms", "timeout");
    // More than three steps run out of time; each answer carries a point at every step it covers.
    const client = new FakeRangeClient(() => timeout);
    const answering = new FakeRangeClient(() => ({ series: [] }));
    const answers = new RangeAnswers(
      {
        rangeQuery: async (query, start, end, step) => {
          if ((end - start) / step + 1 > 3) return client.rangeQuery(query, start, end, step);
          const points = Array.from({ length: (end - start) / step + 1 }, (_, i): [number, number] => [
            start - first + i * step,
            start - first + i * step,
          ]);
          await answering.rangeQuery(query, start, end, step);
          return { series: [series("a", points)], warnings: start === first ? ["early"] : [] };
        },
      },
      nine,
    );
    const steps = await Promise.all(
      Array.from({ length: 9 }, (_, i) => answers.instantQuery("q", (first + i * 60) * 1000)),
    );
    expect(steps.map((r) => r.samples.map((x) => x.value))).toEqual(Array.from({ length: 9 }, (_, i) => [i * 60]));
    // The first piece's warning is its steps' alone.
    expect(steps.map((r) => r.warnings.length)).toEqual([1, 1, 1, 0, 0, 0, 0, 0, 0]);
    const minutes = (asks: { startUnixSeconds: number; endUnixSeconds: number }[]) =>
      asks.map((a) => [(a.startUnixSeconds - first) / 60, (a.endUnixSeconds - first) / 60]);
    expect(minutes(client.asked)).toEqual([
      [0, 8],
      [0, 4],
      [5, 8],
    ]);
    expect(minutes(answering.asked)).toEqual([
      [0, 2],
      [3, 4],
      [5, 6],
      [7, 8],
    ]);
    expect(answers.rangeQueries).toBe(7);
  });

  it("halves at most three times, and fails only the steps of the piece that failed", async () => {
    const timeout = new PrometheusQueryError("query to x timed out after 10000ms", "timeout");
    const hung = new FakeRangeClient(() => timeout);
    const day = { ...grid, lastUnixSeconds: first + 359 * 60 };
    const never = new RangeAnswers(hung, day);
    expect(await queryFailure(never.instantQuery("q", first * 1000))).toBe(timeout);
    expect(await queryFailure(never.instantQuery("q", (first + 359 * 60) * 1000))).toBe(timeout);
    // 1 + 2 + 4 + 8 deadlines for the text, pieces of 45 steps at the least.
    expect(hung.asked).toHaveLength(15);
    expect(Math.min(...hung.asked.map((a) => (a.endUnixSeconds - a.startUnixSeconds) / 60 + 1))).toBe(45);

    const down = new PrometheusQueryError("cannot reach prometheus x", "network");
    let calls = 0;
    const half = new RangeAnswers(new FakeRangeClient(() => [timeout, { series: [] }, down][calls++] ?? down), grid);
    expect((await half.instantQuery("q", first * 1000)).samples).toEqual([]);
    expect(await queryFailure(half.instantQuery("q", (first + 180) * 1000))).toBe(down);
  });

  it("refuses a time that is not a step, and an answer with a point off the steps (a store that moved them)", async () => {
    const answers = new RangeAnswers(new FakeRangeClient(() => ({ series: [series("a", [[30, 1]])] })), grid);
    for (const t of [30, -60, 240, 0.5])
      expect((await queryFailure(answers.instantQuery("q", (first + t) * 1000))).message).toMatch(
        /is not a step of the period/,
      );
    const moved = await queryFailure(answers.instantQuery("q", first * 1000));
    expect(moved.kind).toBe("malformed");
    expect(moved.message).toMatch(new RegExp(`point at ${first + 30}, which is not a step asked`));
  });

  it("takes whole seconds only", () => {
    expect(
      () => new RangeAnswers(new FakeRangeClient(() => ({ series: [] })), { ...grid, firstUnixSeconds: first + 0.5 }),
    ).toThrow(/needs whole seconds/);
    expect(() => new RangeAnswers(new FakeRangeClient(() => ({ series: [] })), { ...grid, stepSeconds: 0 })).toThrow(
      /step > 0/,
    );
  });
});
