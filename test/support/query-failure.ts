import { expect } from "vitest";
import { PrometheusQueryError } from "../../src/adapters/prometheus/client.js";

/** The error a Prometheus query was rejected with; fails the test unless it is a `PrometheusQueryError`. */
export async function queryFailure(query: Promise<unknown>): Promise<PrometheusQueryError> {
  const err = await query.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(PrometheusQueryError);
  return err as PrometheusQueryError;
}
