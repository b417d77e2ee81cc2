/**
 * A signal source that samples every pass with both query plans (`unions` and `parts`) at
 * the same evaluation time and fails the test unless they read the same pass, so every
 * check a test makes on a pass holds for both plans. The passes differ only in their query
 * count, which the test reads from the pass it checks (the `unions` plan's).
 */
import { expect } from "vitest";
import type { PrometheusQueryClient } from "../../src/adapters/prometheus/client.js";
import type { PrometheusSignalConfig } from "../../src/adapters/prometheus/config.js";
import {
  PrometheusSignalSource,
  type SamplingPass,
  type ScalerSamplingInput,
} from "../../src/adapters/prometheus/source.js";

export class BothPlans {
  readonly unions: PrometheusSignalSource;
  readonly parts: PrometheusSignalSource;
  constructor(client: PrometheusQueryClient, config: PrometheusSignalConfig) {
    this.unions = new PrometheusSignalSource(client, { ...config, queryPlan: "unions" });
    this.parts = new PrometheusSignalSource(client, { ...config, queryPlan: "parts" });
  }

  /** The `unions` plan's pass, after checking that the `parts` plan read the same one. */
  async sample(scalers: readonly ScalerSamplingInput[], atUnixMs: number): Promise<SamplingPass> {
    const [unions, parts] = await Promise.all([
      this.unions.sample(scalers, atUnixMs),
      this.parts.sample(scalers, atUnixMs),
    ]);
    expect({ ...parts, queries: unions.queries }, "the parts plan reads the same pass").toEqual(unions);
    return unions;
  }

  queriesFor(scalers: readonly ScalerSamplingInput[]): ReturnType<PrometheusSignalSource["queriesFor"]> {
    return this.unions.queriesFor(scalers);
  }
}
