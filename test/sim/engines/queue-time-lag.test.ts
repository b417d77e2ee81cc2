/**
 * The lag vLLM's queue-time histogram adds (docs/prometheus-signals.md, "Queue time"):
 * vLLM observes a request's queue time when the request finishes, SGLang when it
 * is scheduled. The same requests go to one replica of each engine; from a light
 * load the arrival rate steps above the replica's prefill capacity, and each
 * engine's p95 queue time over a 60 s window (the panic window the guard reads)
 * is followed second by second until the guard counts it (above 250 ms, half
 * the default TTFT target, as `ttftReading` decides). vLLM's counts later: the
 * first requests that queued must finish (prefill and decode) before their queue
 * time is observed. Measured: SGLang at 123 s, vLLM at 128 s, a 5 s lag (the
 * 4 s decode of 200 tokens at 50 tokens/s, plus prefill), against 17.8 s mean
 * arrival-to-last-token over the run.
 */
import { describe, expect, it } from "vitest";
import { ttftReading } from "../../../src/core/algorithms/ttft-reading.js";
import { mergeHistograms, p95Bracket, p95Milliseconds } from "../../../src/core/signals/histogram.js";
import type { HistogramWindow } from "../../../src/core/signals/types.js";
import { defaultCapacity, EngineReplica, type SimEngineKind, type SimRequest } from "../../../src/sim/engines/model.js";

const stepSeconds = 0.05;
const overloadAtSeconds = 120;
const endSeconds = 300;
const windowSeconds = 60;
const ttftTargetMs = 500;

/** 2 requests/s (a quarter of prefill capacity), then 9 requests/s (1.125 ×) from 120 s; 1,000-token prompts, 200 output tokens. */
function arrivals(): SimRequest[] {
  const out: SimRequest[] = [];
  let t = 0;
  for (let id = 0; t < endSeconds; id++) {
    t += t < overloadAtSeconds ? 0.5 : 1 / 9;
    out.push({ id, arrivalSeconds: t, promptTokens: 1000, outputTokens: 200 });
  }
  return out;
}

function snapshot(replica: EngineReplica): HistogramWindow {
  const t = replica.totals();
  return { buckets: t.queueTimeCumulative, count: t.queueTimeCount, sum: t.queueTimeSumSeconds };
}

function delta(a: HistogramWindow, b: HistogramWindow): HistogramWindow {
  return {
    buckets: b.buckets.map((x, i) => ({ upperBound: x.upperBound, count: x.count - (a.buckets[i]?.count ?? 0) })),
    count: b.count - a.count,
    sum: (b.sum ?? NaN) - (a.sum ?? NaN),
  };
}

/** Whether the guard would count a TTFT breach on this window's queue time. */
function counts(window: HistogramWindow): boolean {
  const merged = mergeHistograms([window]);
  const ms = p95Milliseconds(merged);
  if (ms === undefined) return false;
  const bracket = p95Bracket(merged);
  return ttftReading(
    {
      readyReplicas: 1,
      sampledReplicas: 1,
      signalState: "Fresh",
      queueTimeMilliseconds: ms,
      ...(bracket === undefined ? {} : { queueTimeBracket: bracket }),
      queueTimeExport: { pods: 1, of: 1 },
    },
    ttftTargetMs,
    "queueing",
  ).counts;
}

/** The first second after the step at which the guard counts the window's queue time, and the mean time from arrival to last token. */
function crossing(engine: SimEngineKind): { atSeconds: number | undefined; e2eSeconds: number } {
  const replica = new EngineReplica(`${engine}-0`, {
    engine,
    serving: "unified",
    modelName: "m",
    dataParallelSize: 1,
    tensorParallelSize: 1,
    capacity: defaultCapacity,
    kvTransferSeconds: 0,
  });
  let service = 0;
  let finished = 0;
  replica.onFinish((f) => {
    service += f.endSeconds - f.firstTokenSeconds + (f.firstTokenSeconds - f.request.arrivalSeconds);
    finished++;
  });
  const pending = arrivals();
  const history: { atSeconds: number; h: HistogramWindow }[] = [];
  let next = 0;
  let atSeconds: number | undefined;
  for (let tick = 0; tick * stepSeconds < endSeconds; tick++) {
    const now = tick * stepSeconds;
    while (next < pending.length && (pending[next]?.arrivalSeconds ?? Infinity) < now)
      replica.enqueue(pending[next++] as SimRequest);
    replica.step(now, stepSeconds);
    if (tick % Math.round(1 / stepSeconds) !== 0) continue;
    history.push({ atSeconds: now, h: snapshot(replica) });
    const from = history.find((s) => s.atSeconds >= now - windowSeconds);
    const last = history.at(-1);
    if (atSeconds !== undefined || from === undefined || last === undefined) continue;
    if (now > overloadAtSeconds && counts(delta(from.h, last.h))) atSeconds = now;
  }
  return { atSeconds, e2eSeconds: service / Math.max(1, finished) };
}

describe("queue time: when each engine observes it", () => {
  it("vLLM's queue time counts later than SGLang's, by less than twice a request's time from arrival to last token", () => {
    const sglang = crossing("sglang");
    const vllm = crossing("vllm");
    if (process.env["MDS_TEST_VERBOSE"]) console.info({ sglang, vllm });
    expect(sglang.atSeconds).toBeDefined();
    expect(vllm.atSeconds).toBeDefined();
    const lag = (vllm.atSeconds ?? NaN) - (sglang.atSeconds ?? NaN);
    expect(lag).toBeGreaterThan(0);
    expect(lag).toBeLessThanOrEqual(2 * vllm.e2eSeconds);
  });
});
