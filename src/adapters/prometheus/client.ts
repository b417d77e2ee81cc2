/**
 * A thin query client over `prometheus-query`: instant queries (a sampling
 * pass) and range queries (calibrate reading a period, range-answers.ts), one
 * deadline per call, typed errors with `cause`, Prometheus warnings and infos
 * returned with the result, and strict checking of the response shape. The
 * driver sends the query and reports failures; the answer's body is parsed
 * from its chunks (body.ts) and its series read once (`readVector`,
 * `readMatrix`), since the controller's CPU per pass is per answered series.
 */
import { pipeline, Readable } from "node:stream";
import { constants as zlibConstants, createUnzip } from "node:zlib";
import { PrometheusDriver } from "prometheus-query";
import { AnswerBody } from "./body.js";

export type PrometheusErrorKind = "timeout" | "network" | "http" | "malformed";

export class PrometheusQueryError extends Error {
  override readonly name = "PrometheusQueryError";
  constructor(
    message: string,
    readonly kind: PrometheusErrorKind,
    options: { cause?: unknown; httpStatus?: number } = {},
  ) {
    super(message, { cause: options.cause });
    if (options.httpStatus !== undefined) this.httpStatus = options.httpStatus;
  }
  readonly httpStatus?: number;
}

/** The warning an answer marked `"isPartial": true` (VictoriaMetrics cluster) is read as. */
export const vmPartialWarning = "isPartial: the answer misses at least one storage node (VictoriaMetrics cluster)";

export interface VectorSample {
  readonly labels: Readonly<Record<string, string>>;
  /** May be NaN or ±Inf; callers decide what a non-finite value means. NaN for a native histogram. */
  readonly value: number;
  readonly timestampUnixSeconds: number;
  /** Set where the series is a native histogram (the `native` plan's bucket sums); `value` is then NaN. */
  readonly histogram?: NativeHistogram;
}

/**
 * A native histogram as the HTTP API writes it: its count and sum, and its
 * buckets, not cumulative, in order, the empty ones left out. A histogram with
 * custom buckets (NHCB, a classic histogram stored as one series) has buckets
 * `(lower, upper]`, the first from -Inf, the last to +Inf.
 */
export interface NativeHistogram {
  readonly count: number;
  readonly sum: number;
  readonly buckets: readonly NativeBucket[];
}

export interface NativeBucket {
  readonly lower: number;
  readonly upper: number;
  readonly count: number;
}

export interface InstantQueryResult {
  readonly samples: readonly VectorSample[];
  /**
   * The response's `warnings`: a store that did not answer (a remote read, a
   * federating layer's partial response) or a PromQL warning; an answer
   * VictoriaMetrics marks `isPartial` adds `vmPartialWarning`. The caller
   * decides; the signal source reads any warning as a partial answer.
   */
  readonly warnings: readonly string[];
  /** The response's `infos` (Prometheus 3 info annotations, e.g. "metric might not be a counter"). */
  readonly infos?: readonly string[];
}

export interface PrometheusQueryClient {
  /**
   * `name` says which of the source's queries this is (`gauges`, `counters`, ...), for the controller's own
   * timings.
   */
  instantQuery(query: string, atUnixMs: number, name?: string): Promise<InstantQueryResult>;
}

/** One series of a range query's answer: its value at each step it has one, in time order. */
export interface MatrixSeries {
  readonly labels: Readonly<Record<string, string>>;
  readonly points: readonly MatrixPoint[];
}

/** One step of a series: a float, or a native histogram (`value` NaN). */
export interface MatrixPoint {
  readonly timestampUnixSeconds: number;
  readonly value: number;
  readonly histogram?: NativeHistogram;
}

export interface RangeQueryResult {
  readonly series: readonly MatrixSeries[];
  /** As `InstantQueryResult.warnings`: the whole answer's, not a step's. */
  readonly warnings: readonly string[];
  readonly infos?: readonly string[];
}

export interface PrometheusRangeClient {
  /** The query evaluated at `startUnixSeconds`, every `stepSeconds` after it, up to `endUnixSeconds`. */
  rangeQuery(
    query: string,
    startUnixSeconds: number,
    endUnixSeconds: number,
    stepSeconds: number,
  ): Promise<RangeQueryResult>;
}

export interface PrometheusClientOptions {
  /** e.g. `http://prometheus-operated.monitoring:9090`. */
  readonly endpoint: string;
  readonly timeoutMs: number;
  readonly headers?: Readonly<Record<string, string>>;
  readonly auth?: { readonly username: string; readonly password: string };
  /** How answers travel (`gzip` unless set): see `prometheusCompressions`. */
  readonly compression?: PrometheusCompression;
}

/**
 * `gzip`: answers compressed, about 40 times fewer bytes on the wire; `none`: asked
 * uncompressed (`Accept-Encoding: identity`). The controller asks for `gzip`; `none`
 * is there for `bench:sampling --compression`, which measures both (docs/prometheus-signals.md, Cost).
 */
export const prometheusCompressions = ["gzip", "none"] as const;
export type PrometheusCompression = (typeof prometheusCompressions)[number];

interface DriverError {
  readonly errorType?: string;
  readonly error?: unknown;
  readonly httpStatus?: number;
  /** Prometheus' error body, on an `http_error`. */
  readonly prometheus?: { readonly errorType?: unknown };
}

/** What the response interceptor read from a successful answer's body. */
interface Answer<T> {
  read?: T | PrometheusQueryError;
}

/**
 * Inflated pieces of this size, where zlib's default is 16 kB: one buffer and one callback per piece, and
 * the small pieces cost about 2.5 times the CPU (docs/prometheus-signals.md, Cost). The body parser cuts
 * them into smaller runs of whole series (body.ts).
 */
const inflatedPieceBytes = 256 * 1024;

/** The encodings the client inflates; it asks for gzip alone, or for none (`identity`). */
const inflatedEncodings: readonly string[] = ["gzip", "x-gzip", "deflate"];

/** A body in an encoding the client neither asked for nor inflates (say, a proxy's `br`): named, not parsed as text. */
class UnaskedEncoding extends Error {
  constructor(readonly encoding: string) {
    super(`body encoded as ${JSON.stringify(encoding)}`);
  }
}

/**
 * A streamed body parsed as axios would parse the whole text (the object, or the text when not JSON);
 * anything else as is. A gzip or deflate body (the client inflates it: `decompress: false`) is inflated
 * with axios' own flush settings, so a body cut short reads as what arrived, as before.
 */
async function parseBody(data: unknown, contentEncoding: unknown): Promise<unknown> {
  if (!(data instanceof Readable)) return data;
  const encoding = typeof contentEncoding === "string" ? contentEncoding.trim().toLowerCase() : "";
  const inflated = inflatedEncodings.includes(encoding);
  if (!inflated && encoding !== "" && encoding !== "identity") {
    data.destroy();
    throw new UnaskedEncoding(encoding);
  }
  let stream: Readable = data;
  if (inflated) {
    const unzip = createUnzip({
      chunkSize: inflatedPieceBytes,
      flush: zlibConstants.Z_SYNC_FLUSH,
      finishFlush: zlibConstants.Z_SYNC_FLUSH,
    });
    // pipeline hands an error of either side, or a body closed early (the deadline's abort), to the loop below
    // through the inflating stream, as the driver's own pipeline did; the loop reports it.
    pipeline(data, unzip, () => undefined);
    stream = unzip;
  }
  const body = new AnswerBody();
  for await (const chunk of stream) body.push(chunk as Buffer);
  return body.end();
}

/** zlib's own errors (`Z_DATA_ERROR`, `Z_BUF_ERROR`, …): the body is not what its encoding says. */
function isInflateError(err: unknown): err is Error {
  const code = (err as { code?: unknown } | null)?.code;
  return err instanceof Error && typeof code === "string" && code.startsWith("Z_");
}

function isDriverError(err: unknown): err is DriverError {
  return typeof err === "object" && err !== null && "errorType" in err;
}

export class PrometheusClient implements PrometheusQueryClient, PrometheusRangeClient {
  constructor(private readonly options: PrometheusClientOptions) {}

  /** What the client asks Prometheus to send, and names when a body came in something else. */
  private get acceptEncoding(): "identity" | "gzip" {
    return this.options.compression === "none" ? "identity" : "gzip";
  }

  async instantQuery(query: string, atUnixMs: number): Promise<InstantQueryResult> {
    const { read, warnings, infos } = await this.send(readVector, {}, (driver, timeout) =>
      driver.instantQuery(query, atUnixMs, timeout),
    );
    return { samples: read, warnings, infos };
  }

  async rangeQuery(
    query: string,
    startUnixSeconds: number,
    endUnixSeconds: number,
    stepSeconds: number,
  ): Promise<RangeQueryResult> {
    // VictoriaMetrics moves the steps of an answer of 50 points or more onto multiples of the step, for its
    // cache, unless told `nocache=1`; Prometheus and Thanos ignore the parameter.
    const { read, warnings, infos } = await this.send(readMatrix, { nocache: "1" }, (driver, timeout) =>
      driver.rangeQuery(query, startUnixSeconds * 1000, endUnixSeconds * 1000, stepSeconds, timeout),
    );
    return { series: read, warnings, infos };
  }

  /** One call: `ask` sends it through the call's driver, `read` reads its answer; failures wrapped by kind. */
  private async send<T>(
    read: (data: unknown) => T,
    params: Readonly<Record<string, string>>,
    ask: (driver: PrometheusDriver, evalTimeout: string) => Promise<unknown>,
  ): Promise<{ read: T; warnings: string[]; infos: string[] }> {
    const call = this.call(read, params);
    try {
      await ask(call.driver, call.evalTimeout);
    } catch (err) {
      throw this.wrap(err, call.deadline.aborted, call.httpStatus.value);
    }
    const answer = call.answer.read ?? new PrometheusQueryError("query result is missing", "malformed");
    if (answer instanceof PrometheusQueryError) throw answer;
    return { read: answer, warnings: call.warnings, infos: call.infos };
  }

  /**
   * A driver per call keeps the deadline and the warnings of concurrent calls apart; `read` reads the
   * answer's `data`; `params` go in the URL beside the query's own.
   */
  private call<T>(
    read: (data: unknown) => T,
    params: Readonly<Record<string, string>>,
  ): {
    driver: PrometheusDriver;
    deadline: AbortSignal;
    warnings: string[];
    infos: string[];
    evalTimeout: string;
    httpStatus: { value?: number };
    answer: Answer<T>;
  } {
    const timeoutMs = this.options.timeoutMs;
    const warnings: string[] = [];
    const infos: string[] = [];
    const deadline = AbortSignal.timeout(timeoutMs);
    const httpStatus: { value?: number } = {};
    const answer: Answer<T> = {};
    const driver = new PrometheusDriver({
      endpoint: this.options.endpoint,
      baseURL: "/api/v1/",
      timeout: timeoutMs,
      preferPost: true,
      headers: { ...this.options.headers },
      ...(this.options.auth ? { auth: { ...this.options.auth } } : {}),
      requestInterceptor: {
        onFulfilled: (config) => {
          // axios' own timeout only covers an idle socket; the signal bounds the whole call.
          config.signal = deadline;
          if (Object.keys(params).length > 0) config.params = { ...(config.params as object | undefined), ...params };
          // The body is parsed from its chunks (body.ts), not from one text of the whole answer.
          config.responseType = "stream";
          // Inflated here, in larger pieces than the driver's (parseBody); gzip is all Prometheus sends.
          config.decompress = false;
          config.headers.set("Accept-Encoding", this.acceptEncoding);
          return config;
        },
      },
      responseInterceptor: {
        onFulfilled: async (response) => {
          try {
            response.data = await parseBody(response.data, response.headers["content-encoding"]);
          } catch (error) {
            if (!isInflateError(error) && !(error instanceof UnaskedEncoding)) throw error;
            // Read here, not thrown: thrown, the driver would report a body it could not read as a lost connection.
            answer.read = new PrometheusQueryError(
              error instanceof UnaskedEncoding
                ? `prometheus ${this.options.endpoint} sent a body encoded as ${JSON.stringify(error.encoding)}, which the client did not ask for (it asks for ${this.acceptEncoding})`
                : `prometheus ${this.options.endpoint} sent a compressed body that does not inflate: ${error.message}`,
              "malformed",
              { cause: error },
            );
            response.data = { status: "success", data: { resultType: "vector", result: [] } };
            return response;
          }
          // The driver looks for warnings beside the body, where Prometheus never puts them.
          const body: unknown = response.data;
          if (typeof body === "object" && body !== null) {
            if ("warnings" in body && Array.isArray(body.warnings))
              for (const w of body.warnings) warnings.push(String(w));
            if ("infos" in body && Array.isArray(body.infos)) for (const i of body.infos) infos.push(String(i));
            // VictoriaMetrics cluster's vmselect marks an answer that missed a vmstorage node this way, without a
            // warning.
            if ("isPartial" in body && body.isPartial === true) warnings.push(vmPartialWarning);
            // Where the driver would take the body's `data` as the result, it is read here instead, once,
            // and the driver is handed an empty vector: its own reading builds several objects per series.
            if ("status" in body && body.status !== null && body.status !== undefined) {
              // Not thrown here: the driver would report it as a network error.
              answer.read = readOrError(read, "data" in body ? body.data : undefined);
              response.data = { ...body, data: { resultType: "vector", result: [] } };
            }
          }
          return response;
        },
        onRejected: async (error: unknown) => {
          const response = (
            error as { response?: { status?: unknown; data?: unknown; headers?: Record<string, unknown> } }
          ).response;
          // An error's body names the error (`{"status":"error","error":...}`): the driver reads it parsed.
          if (response !== undefined)
            response.data = await parseBody(response.data, response.headers?.["content-encoding"]);
          // A gateway's refusal (401, 403, 429) carries no Prometheus body: keep its status for the message.
          if (typeof response?.status === "number") httpStatus.value = response.status;
          throw error;
        },
      },
    });
    const evalTimeout = `${Math.max(1, Math.floor(timeoutMs / 1000))}s`;
    return { driver, deadline, warnings, infos, evalTimeout, httpStatus, answer };
  }

  private wrap(err: unknown, deadlinePassed: boolean, status?: number): PrometheusQueryError {
    const endpoint = this.options.endpoint;
    if (deadlinePassed)
      return new PrometheusQueryError(`query to ${endpoint} timed out after ${this.options.timeoutMs}ms`, "timeout", {
        cause: err,
      });
    // The driver re-catches its own errors thrown on the success path and reports
    // them as network errors; the real one is kept as `original`.
    const original = isDriverError(err) ? (err as { original?: unknown }).original : undefined;
    if (isDriverError(original)) err = original;
    if (isDriverError(err)) {
      const detail = typeof err.error === "string" ? err.error : "unknown error";
      switch (err.errorType) {
        case "timeout_error":
          return new PrometheusQueryError(`query to ${endpoint} timed out: ${detail}`, "timeout", { cause: err });
        case "http_error":
          return new PrometheusQueryError(
            `prometheus ${endpoint} answered ${err.httpStatus ?? "?"}: ${detail}`,
            // Prometheus ran out of its own `timeout` (errorType "timeout", HTTP 503): a timeout as the client's is.
            err.prometheus?.errorType === "timeout" ? "timeout" : "http",
            {
              cause: err,
              ...(err.httpStatus !== undefined ? { httpStatus: err.httpStatus } : {}),
            },
          );
        case "client_error":
          if (status !== undefined && (status < 200 || status > 299))
            return new PrometheusQueryError(
              `prometheus ${endpoint} answered ${status} with a body that is not a Prometheus API response`,
              "http",
              { cause: err, httpStatus: status },
            );
          return new PrometheusQueryError(
            `prometheus ${endpoint} sent a body that is not a Prometheus API response`,
            "malformed",
            { cause: err },
          );
        default:
          return new PrometheusQueryError(`cannot reach prometheus ${endpoint}: ${detail}`, "network", { cause: err });
      }
    }
    return new PrometheusQueryError(`prometheus ${endpoint} sent an unreadable response`, "malformed", { cause: err });
  }
}

/**
 * The samples of an instant vector, read in one pass over the parsed body: a
 * series' label object, as the JSON parse built it, becomes the sample's
 * labels. The controller's CPU is per answered series (docs/prometheus-signals.md,
 * Cost), so no series is copied or wrapped on the way. Anything but a vector is malformed.
 */
export function readVector(data: unknown): VectorSample[] {
  const result = resultOf(data, "vector");
  const samples = new Array<VectorSample>(result.length);
  for (let i = 0; i < result.length; i++) samples[i] = readSample(result[i]);
  return samples;
}

/**
 * The series of a range query's answer, each with its points in time order. Anything but a matrix is
 * malformed, and so is a series without labels or points, or a point that is not `[time, "value"]`.
 */
export function readMatrix(data: unknown): MatrixSeries[] {
  const result = resultOf(data, "matrix");
  const series = new Array<MatrixSeries>(result.length);
  for (let i = 0; i < result.length; i++) {
    const it = result[i] as { metric?: unknown; values?: unknown; histograms?: unknown } | null;
    const metric = it?.metric;
    if (typeof metric !== "object" || metric === null || (it?.values === undefined && it?.histograms === undefined))
      throw new PrometheusQueryError("matrix series without labels or values", "malformed");
    const points = floatPoints(it.values ?? []);
    const histograms = histogramPoints(it.histograms ?? []);
    // A series that was a float at some steps and a histogram at others answers both lists: merged in time order.
    if (histograms.length > 0) {
      points.push(...histograms);
      if (points.length > histograms.length) points.sort((a, b) => a.timestampUnixSeconds - b.timestampUnixSeconds);
    }
    series[i] = { labels: labelsOf(metric as Record<string, unknown>), points };
  }
  return series;
}

/** A matrix series' `values`: `[time, "value"]` each. */
function floatPoints(values: unknown): MatrixPoint[] {
  if (!Array.isArray(values)) throw new PrometheusQueryError("matrix series without labels or values", "malformed");
  const points = new Array<MatrixPoint>(values.length);
  for (let j = 0; j < values.length; j++) {
    const [time, value] = (Array.isArray(values[j]) ? values[j] : []) as unknown[];
    if (typeof time !== "number" || typeof value !== "string")
      throw new PrometheusQueryError(`matrix point ${JSON.stringify(values[j])} is not [time, "value"]`, "malformed");
    points[j] = { timestampUnixSeconds: time, value: parseFloat(value) };
  }
  return points;
}

/** A matrix series' `histograms`: `[time, {histogram}]` each (`readHistogram`). */
function histogramPoints(histograms: unknown): MatrixPoint[] {
  if (!Array.isArray(histograms)) throw new PrometheusQueryError("matrix series without labels or values", "malformed");
  return histograms.map((h: unknown) => histogramAt(h, "matrix point"));
}

/** `[time, {histogram}]`, as a vector sample's `histogram` and a matrix series' `histograms` hold it. */
function histogramAt(
  pair: unknown,
  what: string,
): { timestampUnixSeconds: number; value: number; histogram: NativeHistogram } {
  const [time, histogram] = (Array.isArray(pair) ? pair : []) as unknown[];
  if (typeof time !== "number")
    throw new PrometheusQueryError(`${what} ${JSON.stringify(pair)} is not [time, {histogram}]`, "malformed");
  return { timestampUnixSeconds: time, value: NaN, histogram: readHistogram(histogram) };
}

/** The answer's series, where its `data` is a result of the type asked for; anything else is malformed. */
function resultOf(data: unknown, type: "vector" | "matrix"): unknown[] {
  if (typeof data !== "object" || data === null) throw new PrometheusQueryError("query result is missing", "malformed");
  const { resultType, result } = data as { resultType?: unknown; result?: unknown };
  if (resultType !== type || !Array.isArray(result))
    throw new PrometheusQueryError(`expected a ${type} result, got ${String(resultType)}`, "malformed");
  return result;
}

function readOrError<T>(read: (data: unknown) => T, data: unknown): T | PrometheusQueryError {
  try {
    return read(data);
  } catch (err) {
    return err instanceof PrometheusQueryError
      ? err
      : new PrometheusQueryError("query result is unreadable", "malformed", { cause: err });
  }
}

function readSample(item: unknown): VectorSample {
  const it = item as { metric?: unknown; value?: unknown; histogram?: unknown } | null;
  const metric = it?.metric;
  const pair = it?.value;
  if (typeof metric === "object" && metric !== null && pair === undefined && Array.isArray(it?.histogram))
    return { labels: labelsOf(metric as Record<string, unknown>), ...histogramAt(it.histogram, "vector sample") };
  if (typeof metric !== "object" || metric === null || !Array.isArray(pair))
    throw new PrometheusQueryError("vector sample without labels or value", "malformed");
  const [time, value] = pair as unknown[];
  if (typeof time !== "number" || typeof value !== "string")
    throw new PrometheusQueryError("vector sample without labels or value", "malformed");
  return {
    labels: labelsOf(metric as Record<string, unknown>),
    // "NaN", "+Inf" and "-Inf" read as themselves; callers decide what a non-finite value means.
    value: parseFloat(value),
    timestampUnixSeconds: time,
  };
}

/**
 * A native histogram of the HTTP API:
 * `{"count": "…", "sum": "…", "buckets": [[rule, "lower", "upper", "count"], …]}`, numbers as strings ("+Inf" and
 * "-Inf" included), `buckets` absent when every bucket is empty. Anything else is malformed.
 */
export function readHistogram(value: unknown): NativeHistogram {
  const h = value as { count?: unknown; sum?: unknown; buckets?: unknown } | null;
  const bad = (): PrometheusQueryError =>
    new PrometheusQueryError(`native histogram ${JSON.stringify(value)} is not {count, sum, buckets}`, "malformed");
  if (typeof h !== "object" || h === null || typeof h.count !== "string" || typeof h.sum !== "string") throw bad();
  const raw = h.buckets ?? [];
  if (!Array.isArray(raw)) throw bad();
  const buckets = new Array<NativeBucket>(raw.length);
  for (let i = 0; i < raw.length; i++) {
    const [, lower, upper, count] = (Array.isArray(raw[i]) ? raw[i] : []) as unknown[];
    if (typeof lower !== "string" || typeof upper !== "string" || typeof count !== "string") throw bad();
    buckets[i] = { lower: promNumber(lower), upper: promNumber(upper), count: promNumber(count) };
  }
  return { count: promNumber(h.count), sum: promNumber(h.sum), buckets };
}

/** A number as Prometheus writes it: "+Inf", "-Inf" and "NaN" included (`parseFloat` reads the infinities as NaN). */
function promNumber(text: string): number {
  if (text === "+Inf" || text === "Inf") return Infinity;
  if (text === "-Inf") return -Infinity;
  return parseFloat(text);
}

/** The series' labels as parsed, unless the metric name or a value that is not a string has to go. */
function labelsOf(metric: Record<string, unknown>): Readonly<Record<string, string>> {
  let clean = true;
  for (const k in metric) if (k === "__name__" || typeof metric[k] !== "string") clean = false;
  if (clean) return metric as Record<string, string>;
  const labels: Record<string, string> = {};
  for (const k in metric) {
    const v = metric[k];
    if (k !== "__name__" && typeof v === "string") labels[k] = v;
  }
  return labels;
}
