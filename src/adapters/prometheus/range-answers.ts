/**
 * Instant answers at the steps of a period, read from range queries: the
 * sampling pass asks what it always asks, one instant query per part at one
 * time, and each distinct query text is sent once as a range query over all
 * the steps, its matrix cut into one vector per step. Prometheus evaluates a
 * range query step by step as it would an instant query at each step, so the
 * passes read the same series and values (checked against a real Prometheus
 * and VictoriaMetrics under every query plan: prometheus-source.test.ts,
 * victoria-metrics.test.ts), and calibrate reading a day sends a few hundred
 * queries instead of a pass of 42 for each of its 1,440 minutes
 * (docs/calibrate.md, "Reading Prometheus"). Through a Thanos Querier that
 * deduplicates replicas a step may read the other replica's scrapes of the
 * same pods (thanos.test.ts).
 *
 * A range query that runs out of time is asked again as two range queries
 * over the halves of its steps, one after the other, at most `halvings`
 * times: a large role or a busy Prometheus costs more queries, not the
 * period. A failure fails the query at every step of the range that failed;
 * an answer's warnings (a partial answer) are every step's of its range, since
 * the answer does not say which steps they concern: partial is unknown.
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

/**
 * How often a range query that ran out of time is halved: pieces of 45 minutes of a stretch of six hours at
 * the least, so a Prometheus that never answers costs each query text 15 deadlines in a row, not one per step.
 */
const halvings = 3;

/** One range answer cut by step (in Unix seconds): the vector at each step of its grid, and the rest of the answer. */
interface SteppedAnswer {
  readonly grid: StepGrid;
  readonly byStep: ReadonlyMap<number, VectorSample[]>;
  readonly warnings: readonly string[];
  readonly infos: readonly string[];
}

/** The steps of a range whose query failed, with the failure. */
interface FailedRange {
  readonly grid: StepGrid;
  readonly error: unknown;
}

type Piece = SteppedAnswer | FailedRange;

export class RangeAnswers implements PrometheusQueryClient {
  /** Range queries sent so far: one per distinct query text, more where one ran out of time. */
  rangeQueries = 0;
  /** Per query text, its range answers: one, or the pieces of one that ran out of time, in time order. */
  private readonly answers = new Map<string, Promise<Piece[]>>();

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
      answer = this.ask(query, this.grid);
      this.answers.set(query, answer);
    }
    const piece = (await answer).find((a) => isStep(a.grid, at));
    if (piece === undefined) throw new Error(`no range answer holds the step ${at}`);
    if ("error" in piece) throw piece.error;
    return { samples: piece.byStep.get(at) ?? [], warnings: piece.warnings, infos: piece.infos };
  }

  /** The query over the grid's steps, in pieces where it ran out of time (see the file's comment). */
  private async ask(query: string, grid: StepGrid, halved = 0): Promise<Piece[]> {
    const { firstUnixSeconds: first, lastUnixSeconds: last, stepSeconds: step } = grid;
    this.rangeQueries++;
    try {
      return [byStep(await this.client.rangeQuery(query, first, last, step), grid)];
    } catch (error) {
      const timedOut = error instanceof PrometheusQueryError && error.kind === "timeout";
      if (!timedOut || halved === halvings || first === last) return [{ grid, error }];
      const middle = first + Math.floor((last - first) / step / 2) * step;
      const early = await this.ask(query, { ...grid, lastUnixSeconds: middle }, halved + 1);
      return [...early, ...(await this.ask(query, { ...grid, firstUnixSeconds: middle + step }, halved + 1))];
    }
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
    for (const { timestampUnixSeconds: at, value, histogram } of series.points) {
      if (!isStep(grid, at))
        throw new PrometheusQueryError(
          `range answer has a point at ${at}, which is not a step asked (${periodText(grid)})`,
          "malformed",
        );
      const sample: VectorSample = {
        labels: series.labels,
        value,
        timestampUnixSeconds: at,
        ...(histogram === undefined ? {} : { histogram }),
      };
      const list = steps.get(at);
      if (list) list.push(sample);
      else steps.set(at, [sample]);
    }
  return { grid, byStep: steps, warnings: result.warnings, infos: result.infos ?? [] };
}
