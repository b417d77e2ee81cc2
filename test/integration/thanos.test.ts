/**
 * The PromQL source against a real Thanos Querier (tools/thanos-bin) over two
 * Prometheus replicas (Debian 2.42, external label `replica="a"|"b"`), each
 * with a Thanos sidecar, both scraping the same engine fleet simulator:
 *
 * - deduplicated by `--query.replica-label=replica`: each pod once, its gauges
 *   equal to a scrape the simulator served, its rates within the Prometheus
 *   source test's tolerance of the simulator's truth; `dedup=false` on the
 *   same Querier reads every series twice;
 * - a store that hangs (SIGSTOP) under a Querier that keeps it in the set
 *   (`--endpoint-strict`): every query waits for the scaler's deadline, even
 *   with `--store.response-timeout=2s`, and every family is unknown;
 * - one replica's sidecar killed: a Querier that keeps it in the set answers
 *   with a partial-response warning on every query, and the source reads every
 *   family that store held (all four: a replica holds every series) as unknown;
 *   a Querier that drops unhealthy stores (plain `--endpoint`) answers from the
 *   other replica, complete and without a warning, field by field as that
 *   replica's Prometheus answers directly.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PrometheusClient } from "../../src/adapters/prometheus/client.js";
import { defaultPrometheusSignalConfig } from "../../src/adapters/prometheus/config.js";
import { RangeAnswers } from "../../src/adapters/prometheus/range-answers.js";
import { PrometheusSignalSource } from "../../src/adapters/prometheus/source.js";
import { observeRole } from "../../src/core/signals/observe.js";
import type { RoleSamples } from "../../src/core/signals/types.js";
import type { EngineFleet, FleetServer } from "../../src/sim/engines/index.js";
import { PrometheusHarness } from "../../harness/prometheus.js";
import { startQuerier, startSidecar, waitForStores, type ThanosProcess } from "../../harness/thanos.js";
import { runCli } from "../../src/cli/commands.js";
import { backendScalers, startBackendFleet } from "../support/backend-fleet.js";
import { toDigits } from "../support/digits.js";
import { memoryIo } from "../support/memory-io.js";

const namespace = "serving";
const stableWindowSeconds = 10;
const panicWindowSeconds = 3;
const rateTolerance = 0.12;
/** The scaler's query deadline while a store hangs. */
const hungTimeoutMs = 3_000;

const scalers = backendScalers(namespace, stableWindowSeconds, panicWindowSeconds);

let fleet: EngineFleet;
/** When a full stable window of scrapes under steady load was in the replicas. */
let loadedSinceMs = 0;
let server: FleetServer;
const replicas: PrometheusHarness[] = [];
const sidecars: ThanosProcess[] = [];
/** Drops an unhealthy store from its set. */
let querier: ThanosProcess;
/** Keeps both stores whatever their health; a store silent for 2 s is left out of the answer, with a warning. */
let strictQuerier: ThanosProcess;

const sourceFor = (url: string): PrometheusSignalSource =>
  new PrometheusSignalSource(new PrometheusClient({ endpoint: url, timeoutMs: 10_000 }), defaultPrometheusSignalConfig);

async function sleep(ms: number): Promise<void> {
  await new Promise((r) => setTimeout(r, ms));
}

async function samplesOf(from: string | PrometheusSignalSource, atMs: number): Promise<Map<string, RoleSamples>> {
  const pass = await (typeof from === "string" ? sourceFor(from) : from).sample(scalers, atMs);
  const out = new Map<string, RoleSamples>();
  for (const [key, roles] of pass.scalers) for (const [role, samples] of roles) out.set(`${key}/${role}`, samples);
  return out;
}

/** Each pod once, its gauges as the simulator served them, its rates within tolerance of the truth. */
function expectMatchesSimulator(roles: Map<string, RoleSamples>, atMs: number): void {
  expect(roles.size).toBe(3);
  for (const [key, samples] of roles) {
    expect(samples.queryFailed, key).toBeUndefined();
    expect(samples.unknownFamilies ?? {}, key).toEqual({});
    expect(samples.pods.map((p) => p.pod).length, key).toBe(2);
    for (const pod of samples.pods) {
      // Two replicas scrape the same pod, each once a second at its own offset, and deduplication picks one per
      // query (over a range query's samples, per step): the sample time is one of the pod's scrapes, and its
      // gauges those of a scrape the simulator served within a second of it.
      const sampledMs = pod.lastSampleUnixSeconds * 1000;
      const scrapes = server.servedScrapes(namespace, pod.pod);
      expect(server.scrapeOfSample(namespace, pod.pod, sampledMs), `${pod.pod} scrape`).toBeDefined();
      expect(
        scrapes
          .filter((served) => Math.abs(served.unixMs - sampledMs) <= 1_000)
          .map((served) => [served.gauges.running, served.gauges.waiting]),
        `${pod.pod} running and waiting`,
      ).toContainEqual([pod.runningRequests, pod.waitingRequests]);
      const truth = fleet.truthRates(namespace, pod.pod, atMs / 1000 - stableWindowSeconds, atMs / 1000);
      if (!truth) throw new Error(`no ground truth for ${pod.pod}`);
      const stable = pod.windows.stable;
      expect(stable.established, `${pod.pod} established`).toBe(true);
      const generation = stable.generationTokensPerSecond ?? NaN;
      expect(
        Math.abs(generation - truth.generationTokensPerSecond),
        `${pod.pod} generation ${generation} vs ${truth.generationTokensPerSecond}`,
      ).toBeLessThanOrEqual(Math.max(rateTolerance * truth.generationTokensPerSecond, 5));
    }
  }
}

beforeAll(async () => {
  ({ fleet, server } = await startBackendFleet(namespace));
  for (const replica of ["a", "b"]) {
    const prometheus = await PrometheusHarness.start({
      scrapeIntervalSeconds: 1,
      targets: server.fileSdGroups(),
      externalLabels: { replica },
    });
    replicas.push(prometheus);
    sidecars.push(await startSidecar(prometheus.url, `${prometheus.dir}/data`));
  }
  const endpoints = sidecars.map((s) => s.grpcAddress);
  querier = await startQuerier({ endpoints, replicaLabel: "replica" });
  strictQuerier = await startQuerier({
    strictEndpoints: endpoints,
    replicaLabel: "replica",
    extraArgs: ["--store.response-timeout=2s"],
  });
  await waitForStores(querier, 2);
  await waitForStores(strictQuerier, 2);
  for (const r of replicas) await r.waitForHealthyTargets(fleet.listPods().length);
  // A full stable window of scrapes under steady load.
  await sleep((stableWindowSeconds + 2) * 1000);
  loadedSinceMs = Date.now();
}, 120_000);

afterAll(async () => {
  for (const q of [querier, strictQuerier]) await q?.stop();
  for (const s of sidecars) await s.stop();
  for (const r of replicas) await r.stop();
  await server?.stop();
});

describe("the PromQL source on a Thanos Querier over two Prometheus replicas", () => {
  it("reads each pod once (deduplicated by the replica label), as the simulator served it", async () => {
    const at = Date.now() - 1000;
    expectMatchesSimulator(await samplesOf(querier.httpUrl, at), at);
    // The same Querier without deduplication reads every series twice.
    const count = async (dedup: boolean): Promise<number> => {
      const params = new URLSearchParams({
        query: `count(vllm:num_requests_running{namespace="${namespace}",app_kubernetes_io_instance="pd-vllm"})`,
        time: String(at / 1000),
        dedup: String(dedup),
      });
      const res = await fetch(`${querier.httpUrl}/api/v1/query`, { method: "POST", body: params });
      const body = (await res.json()) as { data: { result: { value: [number, string] }[] } };
      return Number(body.data.result[0]?.value[1]);
    };
    expect(await count(true)).toBe(4);
    expect(await count(false)).toBe(8);
  }, 60_000);

  it("serves mds-scaler observe: each pod once, in the state the replica it deduplicates gives", async () => {
    const files: Record<string, string> = {
      "scaler.yaml": `apiVersion: worker.gpustack.ai/v1
kind: ModelDeploymentScaler
metadata: { name: chat-sglang, namespace: ${namespace} }
spec:
  targetRef: { name: chat-sglang }
  roles: [{ name: server, minReplicas: 1, maxReplicas: 4 }]
  algorithm:
    type: TokenThroughput
    tokenThroughput: { serverTargetTokensPerSecond: "800", stableWindowSeconds: 30, panicWindowSeconds: 10 }
`,
      "target.yaml": `apiVersion: worker.gpustack.ai/v1
kind: ModelDeployment
metadata: { name: chat-sglang, namespace: ${namespace} }
spec: { roles: [{ name: server, kind: Server, replicas: 2 }] }
status: { roles: [{ name: server, ready: 2 }] }
`,
    };
    const observe = async (url: string) => {
      const io = memoryIo((path) => files[path] ?? "");
      const args = ["observe", "--prometheus-url", url, "-f", "scaler.yaml", "--target", "target.yaml", "-o", "json"];
      expect(await runCli(args, io), io.err).toBe(0);
      return JSON.parse(io.out) as { roles: { signalState: string; pods: { pod: string }[] }[] };
    };
    const thanos = await observe(querier.httpUrl);
    const direct = await observe((replicas[0] as PrometheusHarness).url);
    expect(thanos.roles.map((r) => r.signalState)).toEqual(direct.roles.map((r) => r.signalState));
    expect(thanos.roles[0]?.pods.map((p) => p.pod).sort()).toEqual(direct.roles[0]?.pods.map((p) => p.pod).sort());
    expect(thanos.roles[0]?.pods).toHaveLength(2);
  });

  it("answers a period's passes from range queries with each pod once, as the simulator served it, under every plan", async () => {
    // calibrate reads a period this way (RangeAnswers). The steps start when the first test's pass could (a full
    // stable window of scrapes under load) and end a few seconds ago, every scrape before them landed.
    // Deduplication may read a step of a range query from another replica's scrapes than an instant query at
    // that step (it picks the replica over the range's samples), so each pass is held to the simulator as the
    // instant passes are, and to their pods.
    const firstUnixSeconds = Math.ceil(loadedSinceMs / 1000);
    while (Date.now() / 1000 - 3 < firstUnixSeconds + 3) await sleep(250);
    const grid = { firstUnixSeconds, lastUnixSeconds: Math.floor(Date.now() / 1000) - 3, stepSeconds: 1 };
    const client = new PrometheusClient({ endpoint: querier.httpUrl, timeoutMs: 10_000 });
    const podsOf = (roles: Map<string, RoleSamples>) => [...roles].map(([key, r]) => [key, r.pods.map((p) => p.pod)]);
    for (const queryPlan of ["unions", "parts", "roles"] as const) {
      const config = { ...defaultPrometheusSignalConfig, queryPlan };
      const answers = new RangeAnswers(client, grid);
      for (let t = grid.firstUnixSeconds; t <= grid.lastUnixSeconds; t += grid.stepSeconds) {
        const [instant, ranged] = await Promise.all(
          [client, answers].map((c) => samplesOf(new PrometheusSignalSource(c, config), t * 1000)),
        );
        expectMatchesSimulator(ranged as Map<string, RoleSamples>, t * 1000);
        expect(podsOf(ranged as Map<string, RoleSamples>), `${queryPlan} plan at ${t}`).toEqual(
          podsOf(instant as Map<string, RoleSamples>),
        );
      }
      expect(answers.rangeQueries, queryPlan).toBeLessThan(100);
    }
  }, 120_000);

  it("reads a store that hangs (SIGSTOP) as failed queries: every family unknown at the scaler's deadline", async () => {
    const sidecar = sidecars[1];
    if (!sidecar) throw new Error("two sidecars expected");
    sidecar.signal("SIGSTOP");
    try {
      const at = Date.now() - 1000;
      const client = new PrometheusClient({ endpoint: strictQuerier.httpUrl, timeoutMs: hungTimeoutMs });
      const pass = await new PrometheusSignalSource(client, defaultPrometheusSignalConfig).sample(scalers, at);
      // Most queries wait for the deadline (`--store.response-timeout=2s` does not cut the stopped store
      // short); among the default plan's many concurrent queries some come back partial after that timeout,
      // and on a loaded machine some are refused by the querier itself when its own context runs out (422,
      // "context deadline exceeded"). Every way, every family is unknown.
      const hung = /timed out|answered partially|context deadline exceeded/;
      expect(Object.keys(pass.unknownFamilies).sort()).toEqual(["counters", "gauges", "itl", "ttft"]);
      for (const reason of Object.values(pass.unknownFamilies)) expect(reason).toMatch(hung);
      for (const roles of pass.scalers.values())
        for (const r of roles.values())
          expect(r.queryFailed?.reason ?? `gauges: ${r.unknownFamilies?.gauges ?? "known"}`).toMatch(
            new RegExp(`^gauges: .*(${hung.source})`),
          );
    } finally {
      sidecar.signal("SIGCONT");
    }
    await waitForStores(strictQuerier, 2);
  }, 60_000);

  it("reads a killed store kept in the set as a partial answer: every family it held is unknown", async () => {
    const sidecar = sidecars[1];
    if (!sidecar) throw new Error("two sidecars expected");
    sidecar.signal("SIGKILL");
    await waitForStores(strictQuerier, 1);
    const at = Date.now() - 1000;
    const pass = await sourceFor(strictQuerier.httpUrl).sample(scalers, at);
    expect(pass.warnings.length).toBe(4);
    // A replica holds every series, so the store that failed held part of every query's answer.
    expect(Object.keys(pass.unknownFamilies).sort()).toEqual(["counters", "gauges", "itl", "ttft"]);
    for (const reason of Object.values(pass.unknownFamilies)) expect(reason).toMatch(/answered partially/);
    const decode = pass.scalers.get(`${namespace}/pd-vllm`)?.get("decode");
    if (!decode) throw new Error("no decode samples");
    // The pods a partial gauge answer names stay listed, without their values.
    expect(decode.pods).toHaveLength(2);
    expect(decode.pods[0]?.runningRequests).toBeUndefined();
    const observation = observeRole({
      kind: "Decode",
      samples: decode,
      readyReplicas: 2,
      nowMs: at,
      staleAfterSeconds: 60,
      reads: ["generationTokens"],
    });
    expect(observation.sampledReplicas).toBe(0);
    expect(observation.generationTokensPerSecond).toBeUndefined();
  }, 60_000);

  it("answers from the other replica, complete, once the killed store leaves the set: as that Prometheus does", async () => {
    await waitForStores(querier, 1);
    // Five scrape intervals back: the two reads below happen a moment apart, and a scrape stamped before `at` but
    // appended between them (a slow scrape on a loaded machine) would make the second answer differ from the first.
    const at = Date.now() - 5000;
    const throughThanos = await samplesOf(querier.httpUrl, at);
    expectMatchesSimulator(throughThanos, at);
    // One store left: the same samples as its Prometheus answers directly, field by field, to 12
    // significant digits: a role's summed buckets are added up by the querier in its own order.
    const replica = replicas[0];
    if (!replica) throw new Error("two replicas expected");
    expect(toDigits(throughThanos)).toEqual(toDigits(await samplesOf(replica.url, at)));
  }, 60_000);
});
