/**
 * A signal source that samples every pass with every query plan at the same evaluation
 * time and fails the test unless they read the same pass (plan-observations.ts), so every
 * check a test makes on a pass holds for all of them. The passes differ in their query count,
 * which the test reads from the pass it checks (the `unions` plan's).
 */
import { expect } from "vitest";
import type { PrometheusQueryClient } from "../../src/adapters/prometheus/client.js";
import type { PrometheusSignalConfig } from "../../src/adapters/prometheus/config.js";
import {
  PrometheusSignalSource,
  type SamplingPass,
  type ScalerSamplingInput,
} from "../../src/adapters/prometheus/source.js";
import { observationsOf, withoutBucketsAndSums } from "./plan-observations.js";

/** Longer than a scrape of these tests' 1 s interval takes to land in the TSDB on a loaded machine. */
const ingestionSettleMs = 2_000;

export class BothPlans {
  readonly unions: PrometheusSignalSource;
  readonly parts: PrometheusSignalSource;
  readonly roles: PrometheusSignalSource;
  /** Without native histograms in the Prometheus (Debian's 2.42 stores none), every role falls back to its classic sums. */
  readonly native: PrometheusSignalSource;
  constructor(client: PrometheusQueryClient, config: PrometheusSignalConfig) {
    this.unions = new PrometheusSignalSource(client, { ...config, queryPlan: "unions" });
    this.parts = new PrometheusSignalSource(client, { ...config, queryPlan: "parts" });
    this.roles = new PrometheusSignalSource(client, { ...config, queryPlan: "roles" });
    this.native = new PrometheusSignalSource(client, { ...config, queryPlan: "native" });
  }

  /** The `unions` plan's pass, after checking that the `parts` plan read the same one. */
  async sample(scalers: readonly ScalerSamplingInput[], atUnixMs: number): Promise<SamplingPass> {
    // A scrape stamped at or before `atUnixMs` may still be on its way into the TSDB when the plans
    // ask: one plan would see it and the other not. Ask once every such scrape has landed.
    const settleMs = atUnixMs + ingestionSettleMs - Date.now();
    if (settleMs > 0) await new Promise((resolve) => setTimeout(resolve, settleMs));
    const [unions, parts, roles, native] = await Promise.all([
      this.unions.sample(scalers, atUnixMs),
      this.parts.sample(scalers, atUnixMs),
      this.roles.sample(scalers, atUnixMs),
      this.native.sample(scalers, atUnixMs),
    ]);
    expect({ ...parts, queries: unions.queries }, "the parts plan reads the same pass").toEqual(unions);
    expectSameObservations(parts, roles, scalers, "roles");
    expectSameObservations(parts, native, scalers, "native");
    for (const pass of [unions, parts, roles]) expect(pass.nativeSumsMissing).toEqual([]);
    expectNativeSumsMissing(native, scalers);
    return unions;
  }

  queriesFor(scalers: readonly ScalerSamplingInput[]): ReturnType<PrometheusSignalSource["queriesFor"]> {
    return this.unions.queriesFor(scalers);
  }
}

/** A plan summing by role (`roles`, `native`) reads as the `parts` plan: samples but for buckets, and every observation. */
function expectSameObservations(
  parts: SamplingPass,
  summed: SamplingPass,
  scalers: readonly ScalerSamplingInput[],
  plan: "roles" | "native",
): void {
  expect(withoutBucketsAndSums(summed), `the ${plan} plan reads the same samples but for buckets`).toEqual(
    withoutBucketsAndSums(parts),
  );
  const expected = observationsOf(parts, scalers);
  for (const [key, observation] of observationsOf(summed, scalers))
    expect(observation, `${key} under the ${plan} plan`).toEqual(expected.get(key));
}

/**
 * Where Prometheus stores no native histograms (Debian's 2.42, the classic prepared TSDB), the `native` pass
 * names every role whose pods hold a latency histogram in the panic window (its sum was asked, and missing),
 * and nothing but the scalers' roles.
 */
function expectNativeSumsMissing(native: SamplingPass, scalers: readonly ScalerSamplingInput[]): void {
  const listed = new Set(native.nativeSumsMissing.map((entry) => entry.slice(0, entry.indexOf(" ("))));
  const asked = new Set(scalers.flatMap((s) => s.roles.map((r) => `${s.key} ${r}`)));
  for (const role of listed) expect(asked, `${role} is a scaler's role`).toContain(role);
  for (const s of scalers)
    for (const role of s.roles) {
      const pods = native.scalers.get(s.key)?.get(role)?.pods ?? [];
      const latency = pods.some(({ windows: { panic } }) =>
        [panic.ttftSeconds, panic.itlSeconds, panic.queueTimeSeconds].some((h) => h !== undefined),
      );
      if (latency) expect(listed, `${s.key} ${role}: no native sum stored`).toContain(`${s.key} ${role}`);
    }
}
