/**
 * A signal source for the control-loop benchmark: every role of every
 * requested scaler has one vLLM pod answering with steady, Fresh readings
 * below its target, so a converged scaler has nothing to change. No
 * Prometheus: the pass is measured without the sampling cost.
 */
import type { HistogramWindow, PodWindowRates, RoleSamples } from "../src/core/signals/types.js";
import type { SampleRequest, SignalSource } from "../src/app/controller.js";

const latency: HistogramWindow = {
  buckets: [
    { upperBound: 0.05, count: 40 },
    { upperBound: 0.1, count: 90 },
    { upperBound: Infinity, count: 100 },
  ],
  count: 100,
  sum: 6,
};

const window: PodWindowRates = {
  established: true,
  promptTokensPerSecond: 300,
  generationTokensPerSecond: 100,
  prefixCacheHitTokensPerSecond: 0,
  ttftSeconds: latency,
  itlSeconds: latency,
  itlSeries: "vllm:inter_token_latency_seconds",
};

export class SteadySignals implements SignalSource {
  calls = 0;
  constructor(private readonly nowMs: () => number) {}

  sample(requests: readonly SampleRequest[]): Promise<ReadonlyMap<string, ReadonlyMap<string, RoleSamples>>> {
    this.calls++;
    const atSeconds = this.nowMs() / 1000 - 1;
    const out = new Map<string, Map<string, RoleSamples>>();
    for (const r of requests) {
      const roles = new Map<string, RoleSamples>();
      for (const role of r.roles) {
        roles.set(role, {
          pods: [
            {
              pod: `${r.deployment}-${role}-0`,
              engine: "vllm",
              lastSampleUnixSeconds: atSeconds,
              runningRequests: 2,
              waitingRequests: 0,
              kvCacheUsage: 0.2,
              gaugeSeries: { kvCacheUsage: "vllm:kv_cache_usage_perc" },
              windows: { stable: window, panic: window },
            },
          ],
        });
      }
      out.set(r.key, roles);
    }
    return Promise.resolve(out);
  }
}
