/**
 * A range client answering from a table of series per query text, recording what it was asked: for unit
 * tests of what reads range answers (RangeAnswers), without a Prometheus.
 */
import type { MatrixSeries, PrometheusRangeClient, RangeQueryResult } from "../../src/adapters/prometheus/client.js";

export interface RangeAsk {
  readonly query: string;
  readonly startUnixSeconds: number;
  readonly endUnixSeconds: number;
  readonly stepSeconds: number;
}

export class FakeRangeClient implements PrometheusRangeClient {
  readonly asked: RangeAsk[] = [];
  constructor(private readonly answer: (query: string) => { series: MatrixSeries[]; warnings?: string[] } | Error) {}

  async rangeQuery(
    query: string,
    startUnixSeconds: number,
    endUnixSeconds: number,
    stepSeconds: number,
  ): Promise<RangeQueryResult> {
    this.asked.push({ query, startUnixSeconds, endUnixSeconds, stepSeconds });
    await Promise.resolve();
    const a = this.answer(query);
    if (a instanceof Error) throw a;
    return { series: a.series, warnings: a.warnings ?? [] };
  }
}
