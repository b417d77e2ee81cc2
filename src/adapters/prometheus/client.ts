/**
 * A thin instant-query client over `prometheus-query`: one deadline per call,
 * typed errors with `cause`, Prometheus warnings and infos returned with the
 * result, and strict checking of the response shape.
 */
import { PrometheusDriver, type QueryResult } from "prometheus-query";

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
  /** May be NaN or ±Inf; callers decide what a non-finite value means. */
  readonly value: number;
  readonly timestampUnixSeconds: number;
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
  /** `name` says which of the source's queries this is (`gauges`, `counters`, ...), for the controller's own timings. */
  instantQuery(query: string, atUnixMs: number, name?: string): Promise<InstantQueryResult>;
}

export interface PrometheusClientOptions {
  /** e.g. `http://prometheus-operated.monitoring:9090`. */
  readonly endpoint: string;
  readonly timeoutMs: number;
  readonly headers?: Readonly<Record<string, string>>;
  readonly auth?: { readonly username: string; readonly password: string };
}

interface DriverError {
  readonly errorType?: string;
  readonly error?: unknown;
  readonly httpStatus?: number;
}

function isDriverError(err: unknown): err is DriverError {
  return typeof err === "object" && err !== null && "errorType" in err;
}

export class PrometheusClient implements PrometheusQueryClient {
  constructor(private readonly options: PrometheusClientOptions) {}

  async instantQuery(query: string, atUnixMs: number): Promise<InstantQueryResult> {
    const call = this.call();
    let result: QueryResult;
    try {
      result = await call.driver.instantQuery(query, atUnixMs, call.evalTimeout);
    } catch (err) {
      throw this.wrap(err, call.deadline.aborted, call.httpStatus.value);
    }
    return { samples: parseVector(result), warnings: call.warnings, infos: call.infos };
  }

  /** A driver per call keeps the deadline and the warnings of concurrent calls apart. */
  private call(): {
    driver: PrometheusDriver;
    deadline: AbortSignal;
    warnings: string[];
    infos: string[];
    evalTimeout: string;
    httpStatus: { value?: number };
  } {
    const timeoutMs = this.options.timeoutMs;
    const warnings: string[] = [];
    const infos: string[] = [];
    const deadline = AbortSignal.timeout(timeoutMs);
    const httpStatus: { value?: number } = {};
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
          return config;
        },
      },
      responseInterceptor: {
        onFulfilled: (response) => {
          // The driver looks for warnings beside the body, where Prometheus never puts them.
          const body: unknown = response.data;
          if (typeof body === "object" && body !== null) {
            if ("warnings" in body && Array.isArray(body.warnings))
              for (const w of body.warnings) warnings.push(String(w));
            if ("infos" in body && Array.isArray(body.infos)) for (const i of body.infos) infos.push(String(i));
            // VictoriaMetrics cluster's vmselect marks an answer that missed a vmstorage node this way, without a warning.
            if ("isPartial" in body && body.isPartial === true) warnings.push(vmPartialWarning);
          }
          return response;
        },
        onRejected: (error: unknown) => {
          // A gateway's refusal (401, 403, 429) carries no Prometheus body: keep its status for the message.
          const status = (error as { response?: { status?: unknown } }).response?.status;
          if (typeof status === "number") httpStatus.value = status;
          return Promise.reject(error);
        },
      },
    });
    const evalTimeout = `${Math.max(1, Math.floor(timeoutMs / 1000))}s`;
    return { driver, deadline, warnings, infos, evalTimeout, httpStatus };
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
            "http",
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

/** Checks the shape of an instant-vector result; anything else is malformed. */
function parseVector(result: unknown): VectorSample[] {
  if (typeof result !== "object" || result === null)
    throw new PrometheusQueryError("query result is missing", "malformed");
  const r = result as { resultType?: unknown; result?: unknown };
  if (r.resultType !== "vector" || !Array.isArray(r.result)) {
    throw new PrometheusQueryError(`expected a vector result, got ${String(r.resultType)}`, "malformed");
  }
  const samples: VectorSample[] = [];
  for (const item of r.result as unknown[]) {
    const it = item as { metric?: { labels?: unknown }; value?: { time?: unknown; value?: unknown } } | null;
    const labels = it?.metric?.labels;
    const time = it?.value?.time;
    const value = it?.value?.value;
    if (typeof labels !== "object" || labels === null || !(time instanceof Date) || typeof value !== "number") {
      throw new PrometheusQueryError("vector sample without labels or value", "malformed");
    }
    const clean: Record<string, string> = {};
    for (const [k, v] of Object.entries(labels)) if (typeof v === "string") clean[k] = v;
    samples.push({ labels: clean, value, timestampUnixSeconds: time.getTime() / 1000 });
  }
  return samples;
}
