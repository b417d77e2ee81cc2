/**
 * The fleet the backend tests (VictoriaMetrics, Thanos) run: a vLLM
 * prefill/decode deployment and an SGLang one with DP attention whose every
 * scheduler writes stats (TP rank 1 repeats rank 0), under steady load, and
 * the scalers that sample them.
 */
import type { ScalerSamplingInput } from "../../src/adapters/prometheus/source.js";
import { EngineFleet, FleetServer, type SimDeploymentSpec } from "../../src/sim/engines/index.js";
import { steadyLoad } from "./steady-load.js";

/** The two deployments in `namespace`; `load` multiplies the arrivals and the capacity. */
export function backendDeployments(namespace: string, startSeconds: number, load: number): SimDeploymentSpec[] {
  const capacity = { decodeTokensPerSecond: 400 * load, maxTokensPerSecondPerRequest: 40 };
  return [
    {
      namespace,
      name: "pd-vllm",
      engine: "vllm",
      kvTransferSeconds: 0.3,
      roles: [
        { name: "prefill", serving: "prefill", replicas: 2, capacity },
        { name: "decode", serving: "decode", replicas: 2, capacity: { ...capacity, maxRunningRequests: 6 * load } },
      ],
      workload: steadyLoad(namespace.length, startSeconds, 8 * load),
    },
    {
      namespace,
      name: "chat-sglang",
      engine: "sglang",
      roles: [
        {
          name: "server",
          serving: "unified",
          replicas: 2,
          dataParallelSize: 2,
          tensorParallelSize: 2,
          metricsForAllSchedulers: true,
          capacity: { ...capacity, maxRunningRequests: 3 * load },
        },
      ],
      workload: steadyLoad(namespace.length + 1, startSeconds, 12 * load),
    },
  ];
}

/** `backendDeployments` at load 1, started now, recorded for the truth the tests compare with, and served. */
export async function startBackendFleet(namespace: string): Promise<{ fleet: EngineFleet; server: FleetServer }> {
  const startSeconds = Date.now() / 1000;
  const fleet = new EngineFleet({ startSeconds, recordEverySeconds: 0.25, recordHistorySeconds: 120 });
  for (const d of backendDeployments(namespace, startSeconds, 1)) fleet.addDeployment(d);
  const server = new FleetServer({ fleet });
  await server.start();
  return { fleet, server };
}

/** One scaler per deployment of `backendDeployments`, sampled every second. */
export function backendScalers(
  namespace: string,
  stableWindowSeconds: number,
  panicWindowSeconds: number,
): ScalerSamplingInput[] {
  return [
    { deployment: "pd-vllm", roles: ["prefill", "decode"] },
    { deployment: "chat-sglang", roles: ["server"] },
  ].map(({ deployment, roles }) => ({
    key: `${namespace}/${deployment}`,
    namespace,
    deployment,
    roles,
    stableWindowSeconds,
    panicWindowSeconds,
    intervalSeconds: 1,
  }));
}
