/**
 * The PromQL source against a real Prometheus scraping the engine fleet
 * simulator: vLLM and SGLang, aggregated and prefill/decode.
 *
 * Tolerances: token rates within 12% of the simulator's true rate over the
 * same window (constant arrivals of fixed-length requests; the residue is one
 * request's worth of tokens against a 10 s window plus Prometheus'
 * extrapolation); gauges and KV usage exactly equal to what the simulator
 * served in the scrape Prometheus holds (matched by its timestamp); the p95
 * latency buckets (TTFT, ITL, queue time) equal to the ones computed from the
 * simulator's own histogram deltas over the window.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PrometheusClient } from "../../src/adapters/prometheus/client.js";
import { defaultPrometheusSignalConfig } from "../../src/adapters/prometheus/config.js";
import { RangeAnswers } from "../../src/adapters/prometheus/range-answers.js";
import { PromqlSignals } from "../../src/adapters/prometheus/signal-port.js";
import { createLogger } from "../../src/adapters/telemetry/logger.js";
import { PrometheusSignalSource, type ScalerSamplingInput } from "../../src/adapters/prometheus/source.js";
import type { HistogramWindow, PodSample, RoleSamples } from "../../src/core/signals/types.js";
import { EngineFleet, FleetServer, type SimDeploymentSpec } from "../../src/sim/engines/index.js";
import { PrometheusHarness } from "../../harness/prometheus.js";
import { BothPlans } from "../support/both-plans.js";
import { observationsOf, withoutBucketsAndSums } from "../support/plan-observations.js";
import { steadyLoad } from "../support/steady-load.js";

const namespace = "serving";
const stableWindowSeconds = 10;
const panicWindowSeconds = 3;
const rateTolerance = 0.12;
const hostileDeployment = 'evil"} or vector(1) or {x="\\';
/** When `quiet-vllm`'s arrivals stop, after the start: its stable window is established with traffic by then. */
const quietAfterSeconds = 13;

let fleet: EngineFleet;
let server: FleetServer;
let prometheus: PrometheusHarness;
/** Every pass read with both query plans, compared. */
let source: BothPlans;
let fleetStartSeconds: number;

function deployments(startSeconds: number): SimDeploymentSpec[] {
  const capacity = { decodeTokensPerSecond: 400, maxTokensPerSecondPerRequest: 40 };
  return [
    {
      namespace,
      name: "chat-vllm",
      engine: "vllm",
      roles: [{ name: "server", serving: "unified", replicas: 2, dataParallelSize: 2, capacity }],
      workload: steadyLoad(1, startSeconds, 12),
    },
    {
      namespace,
      name: "chat-sglang",
      engine: "sglang",
      // DP attention with two TP ranks per DP rank; a small batch limit builds a queue.
      roles: [
        {
          name: "server",
          serving: "unified",
          replicas: 2,
          dataParallelSize: 2,
          tensorParallelSize: 2,
          // Every scheduler writes stats, so TP rank 1 duplicates rank 0 and the reader must collapse them.
          metricsForAllSchedulers: true,
          capacity: { ...capacity, maxRunningRequests: 3 },
        },
      ],
      workload: steadyLoad(2, startSeconds, 12),
    },
    {
      namespace,
      name: "pd-vllm",
      engine: "vllm",
      kvTransferSeconds: 0.3,
      roles: [
        { name: "prefill", serving: "prefill", replicas: 2, capacity },
        { name: "decode", serving: "decode", replicas: 2, capacity: { ...capacity, maxRunningRequests: 6 } },
      ],
      workload: steadyLoad(3, startSeconds, 8),
    },
    {
      namespace,
      name: "pd-sglang",
      engine: "sglang",
      kvTransferSeconds: 0.3,
      roles: [
        { name: "prefill", serving: "prefill", replicas: 2, tensorParallelSize: 2, capacity },
        { name: "decode", serving: "decode", replicas: 2, tensorParallelSize: 2, capacity },
      ],
      workload: steadyLoad(4, startSeconds, 8),
    },
    // Traffic, then none: a pass a few seconds later finds the panic window empty and the stable one not.
    {
      namespace,
      name: "quiet-vllm",
      engine: "vllm",
      roles: [{ name: "server", serving: "unified", replicas: 2, capacity }],
      workload: steadyLoad(8, startSeconds, (at) => (at < startSeconds + quietAfterSeconds ? 6 : 0)),
    },
    // The same, with a pod restarted before the traffic stops (beforeAll): its stable window holds a reset.
    {
      namespace,
      name: "quiet-restart-vllm",
      engine: "vllm",
      roles: [{ name: "server", serving: "unified", replicas: 2, capacity }],
      workload: steadyLoad(9, startSeconds, (at) => (at < startSeconds + quietAfterSeconds ? 6 : 0)),
    },
    // Names that would change an unescaped query or match as a regex.
    {
      namespace,
      name: "a.c",
      engine: "vllm",
      roles: [{ name: "server", serving: "unified", replicas: 1 }],
      workload: steadyLoad(5, startSeconds, 2),
    },
    {
      namespace,
      name: "abc",
      engine: "vllm",
      roles: [{ name: "server", serving: "unified", replicas: 1 }],
      workload: steadyLoad(6, startSeconds, 2),
    },
    {
      namespace,
      name: hostileDeployment,
      podNamePrefix: "evil",
      engine: "vllm",
      roles: [{ name: "server", serving: "unified", replicas: 1 }],
      workload: steadyLoad(7, startSeconds, 2),
    },
  ];
}

function scaler(
  deployment: string,
  roles: string[],
  overrides: Partial<ScalerSamplingInput> = {},
): ScalerSamplingInput {
  return {
    key: `${namespace}/${deployment}`,
    namespace,
    deployment,
    roles,
    stableWindowSeconds,
    panicWindowSeconds,
    intervalSeconds: 1,
    ...overrides,
  };
}

const mainScalers = [
  scaler("chat-vllm", ["server"]),
  scaler("chat-sglang", ["server"]),
  scaler("pd-vllm", ["prefill", "decode"]),
  scaler("pd-sglang", ["prefill", "decode"]),
];

/** The smallest bucket bound holding 95% of the observations. */
function p95Bucket(buckets: readonly { upperBound: number; count: number }[]): number | undefined {
  const sorted = [...buckets].sort((a, b) => a.upperBound - b.upperBound);
  const total = sorted[sorted.length - 1]?.count ?? 0;
  if (total <= 0) return undefined;
  return sorted.find((b) => b.count >= 0.95 * total)?.upperBound;
}

function sumBuckets(hs: (HistogramWindow | undefined)[]): { upperBound: number; count: number }[] {
  const m = new Map<number, number>();
  for (const h of hs) for (const b of h?.buckets ?? []) m.set(b.upperBound, (m.get(b.upperBound) ?? 0) + b.count);
  return [...m.entries()].map(([upperBound, count]) => ({ upperBound, count }));
}

/** Largest relative rate error seen, printed with MDS_TEST_VERBOSE=1 to report the achieved tolerance. */
let worstRelativeError = { error: 0, what: "" };

function expectClose(observed: number | undefined, truth: number, what: string): void {
  if (observed !== undefined && truth > 0 && Math.abs(observed - truth) / truth > worstRelativeError.error) {
    worstRelativeError = { error: Math.abs(observed - truth) / truth, what };
  }
  expect(observed, what).toBeDefined();
  const tolerance = Math.max(rateTolerance * Math.abs(truth), 5);
  expect(Math.abs((observed ?? NaN) - truth), `${what}: observed ${observed}, truth ${truth}`).toBeLessThanOrEqual(
    tolerance,
  );
}

function role(
  pass: Awaited<ReturnType<PrometheusSignalSource["sample"]>>,
  deployment: string,
  roleName: string,
): RoleSamples {
  const r = pass.scalers.get(`${namespace}/${deployment}`)?.get(roleName);
  if (!r) throw new Error(`no samples for ${deployment}/${roleName}`);
  return r;
}

/** Checks every pod of a role against the simulator's truth, and the role's p95 buckets. */
function checkRole(roleSamples: RoleSamples, atUnixMs: number, expectedPods: number): void {
  expect(roleSamples.queryFailed).toBeUndefined();
  expect(roleSamples.pods).toHaveLength(expectedPods);
  const atSeconds = atUnixMs / 1000;
  const truthTtft: { upperBound: number; count: number }[][] = [];
  const truthItl: { upperBound: number; count: number }[][] = [];
  const truthQueue: { upperBound: number; count: number }[][] = [];
  for (const pod of roleSamples.pods) {
    checkGauges(pod);
    const truth = fleet.truthRates(namespace, pod.pod, atSeconds - stableWindowSeconds, atSeconds);
    if (!truth) throw new Error(`no ground truth for ${pod.pod}`);
    const w = pod.windows.stable;
    expect(w.established, `${pod.pod} established`).toBe(true);
    expectClose(w.promptTokensPerSecond, truth.promptTokensPerSecond, `${pod.pod} prompt`);
    expectClose(w.generationTokensPerSecond, truth.generationTokensPerSecond, `${pod.pod} generation`);
    // The cache-adjusted prompt rate each engine's series give.
    if (pod.engine === "vllm") {
      const adjusted = Math.max(0, (w.promptTokensPerSecond ?? NaN) - (w.prefixCacheHitTokensPerSecond ?? NaN));
      const trueAdjusted = Math.max(0, truth.promptTokensPerSecond - truth.prefixCacheHitTokensPerSecond);
      expectClose(adjusted, trueAdjusted, `${pod.pod} cache-adjusted prompt`);
    } else {
      expectClose(
        w.effectivePrefillTokensPerSecond,
        truth.effectiveInputTokensPerSecond,
        `${pod.pod} effective prompt`,
      );
      // The demand is the input mode's rate: the pass asks that mode alone, so no hit tier is read (each hit
      // mode's series is there, seeded at 0 or counting the fleet's shared prefixes).
      expect(w.deviceHitTokensPerSecond, `${pod.pod} device hits read`).toBeUndefined();
      expect(w.hostHitTokensPerSecond, `${pod.pod} host hits read`).toBeUndefined();
      expect(w.cacheSeries, `${pod.pod} hit tiers' series`).toBeUndefined();
    }
    truthTtft.push(truth.ttftBuckets.map((b) => ({ ...b })));
    truthItl.push(truth.itlBuckets.map((b) => ({ ...b })));
    truthQueue.push(truth.queueTimeBuckets.map((b) => ({ ...b })));
    // Queue time rides in the TTFT query. Every pod that takes arrivals exports it; an SGLang decode
    // pod schedules no prefill, and its first-use histogram does not exist.
    if (pod.engine === "vllm" || !pod.pod.includes("decode")) {
      expect(w.queueTimeSeconds, `${pod.pod} queue time`).toBeDefined();
    }
  }
  const observedTtft = p95Bucket(sumBuckets(roleSamples.pods.map((p) => p.windows.stable.ttftSeconds)));
  const observedItl = p95Bucket(sumBuckets(roleSamples.pods.map((p) => p.windows.stable.itlSeconds)));
  const flat = (xs: { upperBound: number; count: number }[][]) =>
    sumBuckets(xs.map((buckets) => ({ buckets, count: 0, sum: 0 })));
  expect(observedTtft, "p95 TTFT bucket").toBe(p95Bucket(flat(truthTtft)));
  expect(observedItl, "p95 ITL bucket").toBe(p95Bucket(flat(truthItl)));
  const observedQueue = p95Bucket(sumBuckets(roleSamples.pods.map((p) => p.windows.stable.queueTimeSeconds)));
  expect(observedQueue, "p95 queue-time bucket").toBe(p95Bucket(flat(truthQueue)));
}

function checkGauges(pod: PodSample): void {
  const served = server.scrapeOfSample(namespace, pod.pod, pod.lastSampleUnixSeconds * 1000);
  if (!served) throw new Error(`${pod.pod}: no scrape answered within 0.6 s of its sample time`);
  expect(pod.runningRequests, `${pod.pod} running`).toBe(served.gauges.running);
  expect(pod.waitingRequests, `${pod.pod} waiting`).toBe(served.gauges.waiting);
  expect(pod.kvCacheUsage ?? NaN, `${pod.pod} kv usage`).toBeCloseTo(served.gauges.kvUsage, 9);
  if (pod.engine === "sglang" && pod.pod.includes("decode")) {
    expect(pod.decodeTransferQueueRequests, `${pod.pod} transfer queue`).toBe(served.gauges.decodeTransfer);
  }
}

async function sleep(ms: number): Promise<void> {
  await new Promise((r) => setTimeout(r, ms));
}

beforeAll(async () => {
  const startSeconds = Date.now() / 1000;
  fleetStartSeconds = startSeconds;
  // quiet-restart-vllm's first pod restarts (1 s cold start) 2 s before its traffic stops.
  setTimeout(() => fleet.restartPod(namespace, "quiet-restart-vllm-server-0", 1), (quietAfterSeconds - 2) * 1000);
  fleet = new EngineFleet({ startSeconds, recordEverySeconds: 0.25, recordHistorySeconds: 60 });
  for (const d of deployments(startSeconds)) fleet.addDeployment(d);
  server = new FleetServer({ fleet });
  await server.start();
  prometheus = await PrometheusHarness.start({ scrapeIntervalSeconds: 1, targets: server.fileSdGroups() });
  await prometheus.waitForHealthyTargets(fleet.listPods().length);
  source = new BothPlans(
    new PrometheusClient({ endpoint: prometheus.url, timeoutMs: 5_000 }),
    defaultPrometheusSignalConfig,
  );
  // A full stable window of scrapes under steady load.
  await sleep((stableWindowSeconds + 1.5) * 1000);
});

afterAll(async () => {
  if (process.env["MDS_TEST_VERBOSE"]) console.info("worst relative rate error", worstRelativeError);
  await prometheus?.stop();
  await server?.stop();
});

describe("PromQL source against a real Prometheus", () => {
  it("matches the simulator for vLLM and SGLang, aggregated and prefill/decode, in four queries", async () => {
    const at = Date.now();
    const pass = await source.sample(mainScalers, at);
    expect(pass.queries).toBe(4);
    checkRole(role(pass, "chat-vllm", "server"), at, 2);
    checkRole(role(pass, "chat-sglang", "server"), at, 2);
    checkRole(role(pass, "pd-vllm", "prefill"), at, 2);
    checkRole(role(pass, "pd-vllm", "decode"), at, 2);
    checkRole(role(pass, "pd-sglang", "prefill"), at, 2);
    checkRole(role(pass, "pd-sglang", "decode"), at, 2);
    // The loads were chosen so queues and batches are not trivially zero.
    const sglangWaiting = role(pass, "chat-sglang", "server").pods.reduce((n, p) => n + (p.waitingRequests ?? 0), 0);
    expect(sglangWaiting).toBeGreaterThan(0);
    // ... and the queue builds queue time: SGLang's scheduler histogram (one series per DP rank,
    // repeated on a second TP rank) is read once per rank.
    const sglangQueue = role(pass, "chat-sglang", "server").pods.map((p) => p.windows.stable.queueTimeSeconds?.count);
    for (const count of sglangQueue) expect(count).toBeGreaterThan(0);
    const panic = role(pass, "chat-vllm", "server").pods[0]?.windows.panic;
    expect(panic?.established).toBe(true);
    expect(panic?.generationTokensPerSecond).toBeGreaterThan(0);
  });

  it("has the controller's port warn once, under the native plan, that this Prometheus answers no native sums", async () => {
    // Debian's 2.42 stores no native histograms: every role with latency observations is read from its classic
    // buckets instead, which the port logs once, naming them, and not again on the next pass.
    const lines: { level: string; msg: string; roles?: string[]; rolesMissing?: number }[] = [];
    const logger = createLogger({ level: "info", write: (line) => lines.push(JSON.parse(line) as never) });
    const native = new PrometheusSignalSource(new PrometheusClient({ endpoint: prometheus.url, timeoutMs: 5_000 }), {
      ...defaultPrometheusSignalConfig,
      queryPlan: "native",
    });
    const port = new PromqlSignals(native, () => Date.now() - 1000, logger);
    await port.sample(mainScalers);
    await port.sample(mainScalers);
    const warnings = lines.filter((l) => l.level === "warn");
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.msg).toMatch(/^native plan: Prometheus answered no native histogram sum for some roles/);
    // The four scalers' six roles, each with a latency histogram counted in its panic window.
    expect(warnings[0]?.rolesMissing).toBe(6);
    expect(warnings[0]?.roles).toContain(`${namespace}/pd-vllm prefill (ttftSeconds, itlSeconds, queueTimeSeconds)`);
    // Those roles are read from their classic buckets summed by role, as the roles plan reads them, not per pod.
    const pass = await native.sample(mainScalers, Date.now() - 1000);
    for (const s of mainScalers)
      for (const r of s.roles)
        expect(pass.scalers.get(s.key)?.get(r)?.roleHistograms?.panic, `${s.key} ${r}: sums, not pods`).toBeDefined();
  });

  it("reads a role whose panic window holds no observation from its stable window, asking those buckets for it alone", async () => {
    // Every request of quiet-vllm has finished within 3 s of the last arrival (at most 64 tokens at 40 per second):
    // the panic window (3 s) ending 6 s after it holds none, the stable one (10 s) the last 4 s of traffic.
    const at = (fleetStartSeconds + quietAfterSeconds + 6) * 1000;
    const scalers = [scaler("quiet-vllm", ["server"]), scaler("chat-vllm", ["server"])];
    // Every plan reads the same pass and the same observations (BothPlans), the latency among them.
    const pass = await source.sample(scalers, at);
    const quiet = role(pass, "quiet-vllm", "server");
    expect(quiet.pods).toHaveLength(2);
    for (const pod of quiet.pods) {
      expect(pod.windows.panic.established, `${pod.pod} panic established`).toBe(true);
      expect(pod.windows.panic.ttftSeconds?.count, `${pod.pod} panic TTFT count`).toBe(0);
      expect(pod.windows.stable.ttftSeconds?.count, `${pod.pod} stable TTFT count`).toBeGreaterThan(0);
    }
    const observed = observationsOf(pass, scalers).get(`${namespace}/quiet-vllm/server/Server`);
    expect(observed?.ttftMilliseconds, "TTFT p95 read from the stable window").toBeGreaterThan(0);
    expect(observed?.itlMilliseconds, "ITL p95 read from the stable window").toBeGreaterThan(0);

    // The roles plan asked the stable window's six bucket queries for quiet-vllm alone, after the 42.
    const roles = await source.roles.sample(scalers, at);
    expect(roles.queries).toBe(42 + 6);
    const summed = role(roles, "quiet-vllm", "server");
    expect(summed.roleHistograms?.stable?.ttftSeconds?.buckets.at(-1)?.count).toBeGreaterThan(0);
    expect(summed.roleHistograms?.panic?.ttftSeconds?.buckets.at(-1)?.count ?? 0).toBe(0);
    const busy = role(roles, "chat-vllm", "server");
    expect(busy.roleHistograms?.panic?.ttftSeconds?.buckets.at(-1)?.count).toBeGreaterThan(0);
    expect(busy.roleHistograms?.stable, "chat-vllm had traffic in its panic window: no stable sums").toBeUndefined();

    // The native plan on this Prometheus (no native sums): its first ask (36: the pods' sums left out, the role's
    // native sum carrying them), the panic window's classic sums with the pods' `_sum`s (12), then, the role being
    // quiet, its stable window's (12) at once, never a native stable sum that would be missing too.
    const native = await source.native.sample(scalers, at);
    expect(native.queries).toBe(36 + 12 + 12);
    const classic = role(native, "quiet-vllm", "server");
    expect(classic.roleHistograms?.stable?.ttftSeconds?.buckets.at(-1)?.count).toBeGreaterThan(0);
    expect(classic.roleHistograms?.panic?.ttftSeconds?.buckets.at(-1)?.count ?? 0).toBe(0);
    // The mean reads the pods' own sums, asked beside the classic buckets (a `_sum` summed by role could not
    // tell a pod missing from it); no role's sum.
    expect(classic.roleHistograms?.stable?.ttftSeconds?.sum).toBeUndefined();
    expect(classic.pods.length).toBeGreaterThan(0);
    for (const p of classic.pods) expect(p.windows.stable.ttftSeconds?.sum, p.pod).toBeGreaterThan(0);
  });

  it("asks a quiet role's pods for their own buckets where its stable window's sum cannot stand for them", async () => {
    // quiet-restart-vllm-server-0 restarted 2 s before the traffic stopped: its stable window (10 s) holds a counter
    // reset, so the stable sum covers a pod the merge leaves out. Every plan reads the same observations (BothPlans).
    const at = (fleetStartSeconds + quietAfterSeconds + 6) * 1000;
    const scalers = [scaler("quiet-restart-vllm", ["server"])];
    const pass = await source.sample(scalers, at);
    const pods = role(pass, "quiet-restart-vllm", "server").pods;
    expect(pods.map((p) => p.windows.stable.established)).toEqual([false, true]);
    expect(pods.map((p) => p.windows.panic.ttftSeconds?.count)).toEqual([0, 0]);
    const observed = observationsOf(pass, scalers).get(`${namespace}/quiet-restart-vllm/server/Server`);
    expect(observed?.ttftMilliseconds, "TTFT p95 read from the stable window").toBeGreaterThan(0);

    // 42 queries, the panic window's resets of the role whose stable window saw one (4), the stable window's
    // sums (6), then the pods' own buckets (6).
    const roles = await source.roles.sample(scalers, at);
    expect(roles.queries).toBe(42 + 4 + 6 + 6);
    const perPod = role(roles, "quiet-restart-vllm", "server");
    expect(perPod.roleHistograms).toBeUndefined();
    expect(perPod.pods[1]?.windows.stable.ttftSeconds?.buckets.at(-1)?.count).toBeGreaterThan(0);
  });

  it("keeps object names literal: regex characters and injection attempts select only their own series", async () => {
    const at = Date.now();
    const pass = await source.sample(
      [
        scaler("a.c", ["server"]),
        scaler(hostileDeployment, ["server"]),
        scaler('nope"} or vector(1) or {x="', ["server"], { key: "missing" }),
      ],
      at,
    );
    const dotted = role(pass, "a.c", "server");
    expect(dotted.pods.map((p) => p.pod)).toEqual(["a.c-server-0"]);
    const hostile = role(pass, hostileDeployment, "server");
    expect(hostile.queryFailed).toBeUndefined();
    expect(hostile.pods.map((p) => p.pod)).toEqual(["evil-server-0"]);
    expect(hostile.pods[0]?.windows.stable.generationTokensPerSecond).toBeGreaterThan(0);
    const missing = pass.scalers.get("missing")?.get("server");
    expect(missing).toEqual({ pods: [] });
  });

  it("leaves a restarted pod's rates unestablished until a new baseline exists", async () => {
    const podName = "chat-vllm-server-0";
    const restartedAtMs = Date.now();
    fleet.restartPod(namespace, podName, 1);
    const input = [scaler("chat-vllm", ["server"])];
    // Back after the cold start: the stable window still holds the old process's samples.
    let restarted: PodSample | undefined;
    for (let i = 0; i < 40 && !restarted; i++) {
      await sleep(250);
      const pass = await source.sample(input, Date.now());
      restarted = role(pass, "chat-vllm", "server").pods.find(
        (p) => p.pod === podName && p.lastSampleUnixSeconds * 1000 > restartedAtMs + 1000,
      );
    }
    expect(restarted, "restarted pod answers again").toBeDefined();
    expect(restarted?.windows.stable.established).toBe(false);
    // The panic window (3 s) fills with the new process's samples first.
    let baseline: PodSample | undefined;
    for (let i = 0; i < 40 && !baseline; i++) {
      await sleep(250);
      const pass = await source.sample(input, Date.now());
      const pods = role(pass, "chat-vllm", "server").pods;
      expect(pods.find((p) => p.pod === "chat-vllm-server-1")?.windows.stable.established).toBe(true);
      baseline = pods.find((p) => p.pod === podName && p.windows.panic.established);
    }
    expect(baseline, "a new baseline forms").toBeDefined();
    expect(baseline?.windows.panic.generationTokensPerSecond).toBeGreaterThan(0);
  });

  it("drops a stopped pod from its role instead of reading it as zero", async () => {
    fleet.stopPod(namespace, "abc-server-0");
    let gone = false;
    for (let i = 0; i < 20 && !gone; i++) {
      await sleep(250);
      const pass = await source.sample([scaler("abc", ["server"])], Date.now());
      const abc = role(pass, "abc", "server");
      expect(abc.queryFailed).toBeUndefined();
      gone = abc.pods.length === 0;
    }
    expect(gone, "the stopped pod's series went stale").toBe(true);
  });

  it("answers every pass of a period from range queries as its own instant queries answer it, under every plan", async () => {
    // The period behind the tests so far: the quiet roles' last traffic, the restarted and the stopped pod.
    // Its last step is a few seconds old, so every scrape stamped before it has landed in the TSDB.
    const grid = {
      firstUnixSeconds: Math.ceil(fleetStartSeconds) + 4,
      lastUnixSeconds: Math.floor(Date.now() / 1000) - 3,
      stepSeconds: 1,
    };
    const scalers = [
      ...mainScalers,
      scaler("quiet-vllm", ["server"]),
      scaler("quiet-restart-vllm", ["server"]),
      scaler("abc", ["server"]),
    ];
    const client = new PrometheusClient({ endpoint: prometheus.url, timeoutMs: 5_000 });
    await sleep(2_000);
    // `native` too: this Prometheus stores no native histograms, so its range path reads the classic sums by role.
    for (const queryPlan of ["unions", "parts", "roles", "native"] as const) {
      const config = { ...defaultPrometheusSignalConfig, queryPlan };
      const instant = new PrometheusSignalSource(client, config);
      const sent: string[] = [];
      const answers = new RangeAnswers(
        { rangeQuery: (query, ...period) => (sent.push(query), client.rangeQuery(query, ...period)) },
        grid,
      );
      const ranged = new PrometheusSignalSource(answers, config);
      let podsRead = 0;
      let instantQueries = 0;
      for (let t = grid.firstUnixSeconds; t <= grid.lastUnixSeconds; t += grid.stepSeconds) {
        const [want, got] = await Promise.all([instant.sample(scalers, t * 1000), ranged.sample(scalers, t * 1000)]);
        const at = `${queryPlan} plan at ${t - grid.firstUnixSeconds} s`;
        if (queryPlan !== "roles" && queryPlan !== "native") expect(got, at).toEqual(want);
        else {
          // Prometheus adds a role's buckets in another order in a range query: the same sums but for the
          // last bits, which the observation's rounding to the nanosecond absorbs (plan-observations.ts).
          expect(withoutBucketsAndSums(got), at).toEqual(withoutBucketsAndSums(want));
          expect(got.queries, at).toBe(want.queries);
          const expected = observationsOf(want, scalers);
          for (const [key, observation] of observationsOf(got, scalers))
            expect(observation, `${at}: ${key}`).toEqual(expected.get(key));
        }
        for (const roles of got.scalers.values()) for (const r of roles.values()) podsRead += r.pods.length;
        instantQueries += want.queries;
      }
      // Each query text once, whatever the number of steps; the period held pods to read.
      expect(new Set(sent).size, `${queryPlan} plan`).toBe(sent.length);
      expect(answers.rangeQueries, `${queryPlan} plan`).toBe(sent.length);
      expect(sent.length * 5, `${queryPlan} plan`).toBeLessThan(instantQueries);
      expect(podsRead, `${queryPlan} plan`).toBeGreaterThan(0);
    }
    // Four plans over every second since the fleet started: 5–17 s in CI for three, 30 s and more on a loaded machine.
  }, 120_000);

  it("turns every role into queryFailed while Prometheus is down, and recovers", async () => {
    await prometheus.pause();
    const down = await source.sample(mainScalers, Date.now());
    for (const roles of down.scalers.values()) {
      for (const r of roles.values()) {
        expect(r.pods).toEqual([]);
        expect(r.queryFailed?.reason).toMatch(/cannot reach prometheus/);
      }
    }
    await prometheus.resume();
    // The first query after a resume can land before the missed scrapes are taken again, when a pod's
    // newest sample is still too old to count; recovery is both pods back within a deadline.
    let decode = role(await source.sample(mainScalers, Date.now()), "pd-sglang", "decode");
    expect(decode.queryFailed).toBeUndefined();
    for (let i = 0; i < 40 && decode.pods.length < 2; i++) {
      await sleep(250);
      decode = role(await source.sample(mainScalers, Date.now()), "pd-sglang", "decode");
      expect(decode.queryFailed).toBeUndefined();
    }
    expect(decode.pods).toHaveLength(2);
  });
});
