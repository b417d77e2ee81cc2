/**
 * Instant answers at the steps of a period, read from range queries: the
 * sampling pass asks what it always asks, one instant query per part at one
 * time, and each distinct query text is sent once as a range query over all
 * the steps, its matrix cut into one vector per step. Prometheus evaluates a
 * range query step by step as it would an instant query at each step, so the
 * passes read the same series and values (checked against a real Prometheus
 * and VictoriaMetrics under every query plan: prometheus-source.test.ts,
 * victoria-metrics.test.ts), and calibrate reading a day sends a few hundred
 * queries instead of a pass of 53 for each of its 1,440 minutes
 * (docs/calibrate.md, "Reading Prometheus"). Through a Thanos Querier that
 * deduplicates replicas a step may read the other replica's scrapes of the
 * same pods (thanos.test.ts).
 *
 * A range answer's failure fails the query at every step; its warnings (a
 * partial answer) are every step's, since the answer does not say which
 * steps they concern: partial is unknown.
 */
import {
  PrometheusQueryError,
  type InstantQueryResult,
  type PrometheusQueryClient,
  type PrometheusRangeClient,
  type RangeQueryResult,
  type VectorSample,
} from "./client.js";

/**
 * The evaluation times of a period: `firstUnixSeconds`, then every `stepSeconds`, through `lastUnixSeconds`,
 * all whole seconds, so that a step is the same instant here and in the store (which counts milliseconds).
 */
export interface StepGrid {
  readonly firstUnixSeconds: number;
  readonly lastUnixSeconds: number;
  readonly stepSeconds: number;
}

/** One range answer cut by step (in Unix seconds): the vector at each step, and the rest of the answer. */
interface SteppedAnswer {
  readonly byStep: ReadonlyMap<number, VectorSample[]>;
  readonly warnings: readonly string[];
  readonly infos: readonly string[];
}

export class RangeAnswers implements PrometheusQueryClient {
  /** Range queries sent so far: one per distinct query text. */
  rangeQueries = 0;
  private readonly answers = new Map<string, Promise<SteppedAnswer>>();

  constructor(
    private readonly client: PrometheusRangeClient,
    private readonly grid: StepGrid,
  ) {
    const { firstUnixSeconds: first, lastUnixSeconds: last, stepSeconds: step } = grid;
    if (!(Number.isInteger(first) && Number.isInteger(last) && Number.isInteger(step) && step > 0 && last >= first))
      throw new Error(`step grid ${JSON.stringify(grid)}: needs whole seconds, a step > 0 and first <= last`);
  }

  async instantQuery(query: string, atUnixMs: number): Promise<InstantQueryResult> {
    const at = atUnixMs / 1000;
    if (!isStep(this.grid, at))
      throw new PrometheusQueryError(
        `instant query at ${new Date(atUnixMs).toISOString()} is not a step of the period read by range (${periodText(this.grid)})`,
        "malformed",
      );
    let answer = this.answers.get(query);
    if (answer === undefined) {
      this.rangeQueries++;
      const { firstUnixSeconds: first, lastUnixSeconds: last, stepSeconds: step } = this.grid;
      answer = this.client.rangeQuery(query, first, last, step).then((result) => byStep(result, this.grid));
      this.answers.set(query, answer);
    }
    const { byStep: steps, warnings, infos } = await answer;
    return { samples: steps.get(at) ?? [], warnings, infos };
  }
}

function isStep({ firstUnixSeconds: first, lastUnixSeconds: last, stepSeconds: step }: StepGrid, at: number): boolean {
  return Number.isInteger(at) && at >= first && at <= last && (at - first) % step === 0;
}

function periodText({ firstUnixSeconds: first, lastUnixSeconds: last, stepSeconds: step }: StepGrid): string {
  return `${new Date(first * 1000).toISOString()} to ${new Date(last * 1000).toISOString()}, every ${step} s`;
}

/**
 * The matrix as one vector per step, each sample timed at its step as an instant answer is. A point at a
 * time that is not a step asked makes the answer malformed: a store that moved the steps evaluated at
 * other times than the passes ask for, and its answer is no pass's.
 */
function byStep(result: RangeQueryResult, grid: StepGrid): SteppedAnswer {
  const steps = new Map<number, VectorSample[]>();
  for (const series of result.series)
    for (const { timestampUnixSeconds: at, value } of series.points) {
      if (!isStep(grid, at))
        throw new PrometheusQueryError(
          `range answer has a point at ${at}, which is not a step asked (${periodText(grid)})`,
          "malformed",
        );
      const sample: VectorSample = { labels: series.labels, value, timestampUnixSeconds: at };
      const list = steps.get(at);
      if (list) list.push(sample);
      else steps.set(at, [sample]);
    }
  return { byStep: steps, warnings: result.warnings, infos: result.infos ?? [] };
}
