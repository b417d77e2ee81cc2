/**
 * One engine replica advanced to each arrival's time (`advanceTo`) admits the
 * request when it arrives, and keeps the tokens it owes as its requests move
 * through prefill and decode (what a token-aware router balances).
 */
import { describe, expect, it } from "vitest";
import {
  defaultCapacity,
  EngineReplica,
  type FinishedRequest,
  type ReplicaSpec,
  type ServingKind,
  type SimRequest,
} from "../../../src/sim/engines/model.js";

function replica(serving: ServingKind = "unified"): EngineReplica {
  const spec: ReplicaSpec = {
    engine: "vllm",
    serving,
    modelName: "m",
    dataParallelSize: 1,
    tensorParallelSize: 1,
    capacity: defaultCapacity,
    kvTransferSeconds: 0,
  };
  return new EngineReplica("pod-0", spec);
}

function request(id: number, arrivalSeconds: number, promptTokens: number, outputTokens: number): SimRequest {
  return { id, arrivalSeconds, promptTokens, outputTokens, streaming: true };
}

describe("engine replica clock", () => {
  it("admits a request arriving between 0.25 s steps at its arrival: a lone request's TTFT is its prefill time", () => {
    const r = replica();
    const finished: FinishedRequest[] = [];
    r.onFinish((f) => finished.push(f));
    r.advanceTo(0);
    r.advanceTo(0.25);
    // 0.13 s into the next step; 400 tokens at 8000 tokens/s prefill in 50 ms.
    r.advanceTo(0.38);
    r.enqueue(request(0, 0.38, 400, 2));
    r.advanceTo(0.5);
    r.advanceTo(0.75);
    expect(finished).toHaveLength(1);
    const ttft = (finished[0]?.firstTokenSeconds as number) - 0.38;
    expect(ttft).toBeGreaterThanOrEqual(0.05 - 1e-9);
    expect(ttft).toBeLessThanOrEqual(0.05 + 0.01);
  });

  it("never runs backwards: an instant before the clock admits at the clock", () => {
    const r = replica();
    r.advanceTo(1);
    expect(r.advanceTo(0.5).fromSeconds).toBe(1);
    expect(r.clockSeconds).toBe(1);
  });

  it("owes a request's prompt and output tokens, less what it has prefilled and emitted", () => {
    const r = replica();
    r.advanceTo(0);
    r.enqueue(request(0, 0, 4000, 100));
    expect(r.outstandingTokens()).toBe(4100);
    // 0.25 s of prefill at 8000 tokens/s: 2000 of 4000 prompt tokens.
    r.advanceTo(0.25);
    expect(r.outstandingTokens()).toBeCloseTo(2100, 6);
    // Prefill done at 0.5 s: the prompt and the first token are paid, then decode at 50 tokens/s.
    r.advanceTo(0.5);
    const afterPrefill = r.outstandingTokens();
    expect(afterPrefill).toBeLessThanOrEqual(99);
    r.advanceTo(1);
    expect(afterPrefill - r.outstandingTokens()).toBeCloseTo(25, 6);
    r.advanceTo(10);
    expect(r.outstanding()).toBe(0);
    expect(r.outstandingTokens()).toBe(0);
  });

  it("a prefill replica owes only the prompt and the first token; a decode replica the rest", () => {
    const p = replica("prefill");
    p.advanceTo(0);
    p.enqueue(request(0, 0, 800, 50));
    expect(p.outstandingTokens()).toBe(801);
    const out = p.advanceTo(0.25);
    expect(out.handoffs).toHaveLength(1);
    expect(p.outstandingTokens()).toBe(0);
    const d = replica("decode");
    d.advanceTo(0.25);
    d.acceptHandoff(out.handoffs[0] as NonNullable<(typeof out.handoffs)[0]>);
    expect(d.outstandingTokens()).toBe(49);
  });
});
