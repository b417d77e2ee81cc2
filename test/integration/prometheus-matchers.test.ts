/**
 * `--prometheus-matchers` on a store that holds two clusters: a real Prometheus (Debian's 2.42) scrapes two
 * simulated fleets with the same namespace, deployment, role and pod names, one labelled `cluster="a"`,
 * the other `cluster="b"` with five times the traffic, as a central store fed by two clusters holds them.
 * Pinned to its cluster, the source reads exactly that cluster's series; unpinned, it reads both as one
 * role, which is what the matcher is for.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PrometheusClient } from "../../src/adapters/prometheus/client.js";
import { defaultPrometheusSignalConfig } from "../../src/adapters/prometheus/config.js";
import { parseLabelMatchers } from "../../src/adapters/prometheus/matchers.js";
import { PrometheusSignalSource, type ScalerSamplingInput } from "../../src/adapters/prometheus/source.js";
import type { RoleSamples } from "../../src/core/signals/types.js";
import { EngineFleet, FleetServer } from "../../src/sim/engines/index.js";
import { PrometheusHarness } from "../../harness/prometheus.js";
import { backendDeployments, backendScalers } from "../support/backend-fleet.js";

const namespace = "serving";
const stableWindowSeconds = 10;
const scalers: ScalerSamplingInput[] = backendScalers(namespace, stableWindowSeconds, 3);
const servers: FleetServer[] = [];
let prometheus: PrometheusHarness;
let fleetStartMs = 0;
/** Past the fleets' ramp-up: decode pods at their steady rate. */
const warmUpMs = 10_000;

function sourceWith(matchers: string): PrometheusSignalSource {
  const parsed = parseLabelMatchers(matchers);
  if (!parsed.ok) throw new Error(parsed.problem);
  return new PrometheusSignalSource(new PrometheusClient({ endpoint: prometheus.url, timeoutMs: 10_000 }), {
    ...defaultPrometheusSignalConfig,
    matchers: parsed.matchers,
  });
}

async function samplesOf(source: PrometheusSignalSource, atMs: number): Promise<Map<string, RoleSamples>> {
  const pass = await source.sample(scalers, atMs);
  const out = new Map<string, RoleSamples>();
  for (const [key, roles] of pass.scalers) for (const [role, samples] of roles) out.set(`${key}/${role}`, samples);
  return out;
}

/** Per pod, the generation rate PromQL gives for `selector` over the stable window. */
async function generationByPod(selector: string, atMs: number): Promise<Map<string, number>> {
  const params = new URLSearchParams({
    query: `sum by (pod) (rate(vllm:generation_tokens_total{${selector}}[${stableWindowSeconds}s]))`,
    time: String(atMs / 1000),
  });
  const res = await fetch(`${prometheus.url}/api/v1/query`, { method: "POST", body: params });
  const body = (await res.json()) as { data: { result: { metric: { pod: string }; value: [number, string] }[] } };
  return new Map(body.data.result.map((r) => [r.metric.pod, Number(r.value[1])]));
}

beforeAll(async () => {
  fleetStartMs = Date.now();
  const startSeconds = fleetStartMs / 1000;
  const groups = [];
  for (const [cluster, load] of [
    ["a", 1],
    ["b", 5],
  ] as const) {
    const fleet = new EngineFleet({ startSeconds, recordEverySeconds: 0.25, recordHistorySeconds: 90 });
    for (const d of backendDeployments(namespace, startSeconds, load)) fleet.addDeployment(d);
    const server = new FleetServer({ fleet });
    await server.start();
    servers.push(server);
    groups.push(...server.fileSdGroups().map((g) => ({ ...g, labels: { ...g.labels, cluster } })));
  }
  prometheus = await PrometheusHarness.start({ scrapeIntervalSeconds: 1, targets: groups });
  await prometheus.waitForHealthyTargets(groups.length);
}, 120_000);

afterAll(async () => {
  await prometheus?.stop();
  for (const s of servers) await s.stop();
});

describe("two clusters' series with the same names in one store", () => {
  it("pinned by --prometheus-matchers, each scaler reads its own cluster's series only", async () => {
    // A stable window that starts after the warm-up (one read inside the ramp-up saw cluster b's decode at
    // 2.9 times cluster a's, where the steady ratio is 5), with enough scrapes for every pod of both clusters,
    // read 5 s in the past so every scrape up to it has landed even on a loaded machine, and every query
    // below sees the same samples.
    const firstReadMs = fleetStartMs + warmUpMs + stableWindowSeconds * 1000 + 5_000;
    await new Promise((r) => setTimeout(r, Math.max(0, firstReadMs - Date.now())));
    const decode = `${namespace}/pd-vllm/decode`;
    const flowing = (samples: Map<string, RoleSamples>): boolean =>
      (samples.get(decode)?.pods ?? []).filter((p) => (p.windows.stable.generationTokensPerSecond ?? 0) > 0).length ===
      2;
    const deadline = Date.now() + 60_000;
    let atMs = Date.now() - 5_000;
    let pinned = new Map<string, RoleSamples>();
    let other = new Map<string, RoleSamples>();
    for (;;) {
      atMs = Date.now() - 5_000;
      pinned = await samplesOf(sourceWith('cluster="a"'), atMs);
      other = await samplesOf(sourceWith('cluster="b"'), atMs);
      if (flowing(pinned) && flowing(other)) break;
      if (Date.now() > deadline) throw new Error("both clusters' decode pods never had a generation rate");
      await new Promise((r) => setTimeout(r, 500));
    }
    const unpinned = await samplesOf(sourceWith(""), atMs);
    const truthA = await generationByPod(
      `cluster="a",namespace="${namespace}",app_kubernetes_io_instance="pd-vllm"`,
      atMs,
    );
    const truthBoth = await generationByPod(`namespace="${namespace}",app_kubernetes_io_instance="pd-vllm"`, atMs);

    const generation = (s: RoleSamples | undefined): Map<string, number | undefined> =>
      new Map((s?.pods ?? []).map((p) => [p.pod, p.windows.stable.generationTokensPerSecond]));
    const ownA = generation(pinned.get(decode));
    expect([...ownA.keys()].sort()).toEqual(["pd-vllm-decode-0", "pd-vllm-decode-1"]);
    for (const [pod, rate] of ownA) {
      expect(rate, pod).toBeGreaterThan(0);
      // Exactly cluster a's series: what PromQL gives for them alone.
      expect(rate, `${pod}: cluster a`).toBeCloseTo(truthA.get(pod) ?? NaN, 9);
      // Cluster b has five times the traffic on the same pod names.
      expect(generation(other.get(decode)).get(pod), `${pod}: cluster b`).toBeGreaterThan(3 * (rate ?? NaN));
      // Unpinned, the same pod name in both clusters reads as one pod with both clusters' traffic.
      expect(generation(unpinned.get(decode)).get(pod), `${pod}: unpinned`).toBeCloseTo(truthBoth.get(pod) ?? NaN, 9);
      expect(generation(unpinned.get(decode)).get(pod), `${pod}: unpinned`).toBeGreaterThan(4 * (rate ?? NaN));
    }
    // Every role of both scalers is read, in cluster a alone.
    expect([...pinned.keys()].sort()).toEqual([
      `${namespace}/chat-sglang/server`,
      `${namespace}/pd-vllm/decode`,
      `${namespace}/pd-vllm/prefill`,
    ]);
  }, 120_000);
});
