/**
 * The load model of one simulated engine replica (one pod). It is a
 * deterministic step function of simulated time: no clock, no I/O.
 *
 * Per data-parallel rank, requests wait in a queue, are admitted into a running
 * batch (bounded by a request limit and KV capacity), prefill their uncached
 * prompt tokens against a shared prefill budget, then decode against a shared
 * decode budget. Prefix-cache hits skip prefill work. Counters follow each
 * engine's own accounting so the exposition reads like the real engine's.
 */
import {
  Histogram,
  sglangE2eBucketsSeconds,
  sglangItlBucketsSeconds,
  sglangQueueTimeBucketsSeconds,
  sglangTtftBucketsSeconds,
  vllmE2eBucketsSeconds,
  vllmItlBucketsSeconds,
  vllmQueueTimeBucketsSeconds,
  vllmTtftBucketsSeconds,
} from "./buckets.js";

export type SimEngineKind = "vllm" | "sglang";

/** How the replica serves: a whole request, only its prefill, or only its decode. */
export type ServingKind = "unified" | "prefill" | "decode";

/** Capacities of one data-parallel rank. */
export interface EngineCapacity {
  /** Uncached prompt tokens computed per second, shared by the batch. */
  readonly prefillTokensPerSecond: number;
  /** Output tokens per second, shared by the decoding batch. */
  readonly decodeTokensPerSecond: number;
  /** Single-stream decode speed: the floor of the inter-token latency. */
  readonly maxTokensPerSecondPerRequest: number;
  readonly maxRunningRequests: number;
  readonly kvCacheTokens: number;
  /** Prefix blocks the rank keeps for reuse (LRU). */
  readonly prefixCacheBlocks: number;
  /**
   * Speculative decoding: output tokens one engine step emits per request
   * (accepted drafts plus one); 1 without it. A step of k tokens takes k token
   * times. vLLM records one ITL observation of the step's duration; SGLang
   * spreads the interval over its tokens (k observations of one token time),
   * so the same latency target is k times stricter on vLLM.
   */
  readonly acceptedTokensPerStep: number;
}

/** SGLang `--decode-log-interval` default: decode steps between stats logs. */
export const decodeLogInterval = 40;

export const defaultCapacity: EngineCapacity = {
  prefillTokensPerSecond: 8000,
  decodeTokensPerSecond: 1500,
  maxTokensPerSecondPerRequest: 50,
  maxRunningRequests: 64,
  kvCacheTokens: 200_000,
  prefixCacheBlocks: 4096,
  acceptedTokensPerStep: 1,
};

export interface SimRequest {
  readonly id: number;
  readonly arrivalSeconds: number;
  readonly promptTokens: number;
  readonly outputTokens: number;
  /** Prefix block hashes in prompt order; equal leading blocks can be served from cache. */
  readonly prefixBlocks?: readonly number[];
  readonly blockTokens?: number;
  readonly streaming?: boolean;
}

/** A prefilled request handed from a prefill replica to a decode replica. */
export interface Handoff {
  readonly request: SimRequest;
  /** Name of the prefill pod that holds the KV until the transfer completes. */
  readonly fromPod: string;
  readonly firstTokenSeconds: number;
}

export interface ReplicaSpec {
  readonly engine: SimEngineKind;
  readonly serving: ServingKind;
  readonly modelName: string;
  readonly dataParallelSize: number;
  /**
   * SGLang tensor-parallel width. By default only tensor rank 0 writes
   * scheduler stats; the others expose just the counters SGLang seeds at 0
   * (`prefill_effective_tokens_total`), as the real engine does.
   */
  readonly tensorParallelSize: number;
  /**
   * SGLang `--enable-metrics-for-all-schedulers`: tensor ranks other than 0
   * repeat rank 0's scheduler series, so a reader that does not filter ranks double-counts.
   */
  readonly metricsForAllSchedulers?: boolean;
  readonly capacity: EngineCapacity;
  /** KV transfer time of a prefill/decode handoff. */
  readonly kvTransferSeconds: number;
}

/** Counters of one rank; request-level ones split by streaming flag (SGLang `is_streaming`). */
export interface StreamCounters {
  promptTokens: number;
  generationTokens: number;
  requests: number;
  cachedTokens: number;
  readonly ttft: Histogram;
  readonly e2e: Histogram;
}

export interface RankCounters {
  readonly byStreaming: { readonly streaming: StreamCounters; readonly nonStreaming: StreamCounters };
  readonly itl: Histogram;
  /**
   * Time from the request's arrival to the start of its prefill (its scheduling):
   * vLLM observes it when the request finishes, SGLang when it is scheduled.
   */
  readonly queueTime: Histogram;
  prefixCacheQueries: number;
  prefixCacheHits: number;
  externalPrefixCacheQueries: number;
  externalPrefixCacheHits: number;
  effectiveInputTokens: number;
  effectiveDeviceHitTokens: number;
  finishedStop: number;
  finishedLength: number;
}

export interface RankGauges {
  readonly running: number;
  readonly waiting: number;
  readonly kvUsage: number;
  readonly prefillInflight: number;
  readonly decodePrealloc: number;
  readonly decodeTransfer: number;
}

interface ActiveRequest {
  readonly request: SimRequest;
  readonly cachedTokens: number;
  prefillRemaining: number;
  generated: number;
  decodeCredit: number;
  kvTokens: number;
  /** Tokens of the current (speculative) engine step not yet recorded in ITL. */
  stepTokens?: number;
  firstTokenSeconds?: number;
  transferDoneSeconds?: number;
  fromPod?: string;
  /** Sum of the inter-token gaps this request was served at (for per-request ITL). */
  itlSumSeconds?: number;
  /** When its prefill started: the end of its queue time. */
  scheduledSeconds?: number;
}

/** A finished request as the quality simulator records it (per-request TTFT and ITL). */
export interface FinishedRequest {
  readonly request: SimRequest;
  readonly firstTokenSeconds: number;
  readonly endSeconds: number;
  /** Mean inter-token latency over the tokens after the first; undefined for one-token requests. */
  readonly meanItlSeconds: number | undefined;
}

function streamCounters(engine: SimEngineKind): StreamCounters {
  return {
    promptTokens: 0,
    generationTokens: 0,
    requests: 0,
    cachedTokens: 0,
    ttft: new Histogram(engine === "vllm" ? vllmTtftBucketsSeconds : sglangTtftBucketsSeconds),
    e2e: new Histogram(engine === "vllm" ? vllmE2eBucketsSeconds : sglangE2eBucketsSeconds),
  };
}

function rankCounters(engine: SimEngineKind): RankCounters {
  return {
    byStreaming: { streaming: streamCounters(engine), nonStreaming: streamCounters(engine) },
    itl: new Histogram(engine === "vllm" ? vllmItlBucketsSeconds : sglangItlBucketsSeconds),
    queueTime: new Histogram(engine === "vllm" ? vllmQueueTimeBucketsSeconds : sglangQueueTimeBucketsSeconds),
    prefixCacheQueries: 0,
    prefixCacheHits: 0,
    externalPrefixCacheQueries: 0,
    externalPrefixCacheHits: 0,
    effectiveInputTokens: 0,
    effectiveDeviceHitTokens: 0,
    finishedStop: 0,
    finishedLength: 0,
  };
}

/** An LRU set of prefix block hashes. */
class PrefixCache {
  private readonly blocks = new Map<number, true>();
  constructor(private readonly capacityBlocks: number) {}

  /** Leading blocks already cached. */
  matchLeading(blocks: readonly number[]): number {
    let n = 0;
    for (const b of blocks) {
      if (!this.blocks.has(b)) break;
      this.blocks.delete(b);
      this.blocks.set(b, true);
      n++;
    }
    return n;
  }

  insert(blocks: readonly number[]): void {
    for (const b of blocks) {
      this.blocks.delete(b);
      this.blocks.set(b, true);
      if (this.blocks.size > this.capacityBlocks) {
        const oldest = this.blocks.keys().next();
        if (!oldest.done) this.blocks.delete(oldest.value);
      }
    }
  }
}

/** An arrival inside a step is admitted at the step's start: its queue time is then zero, not negative. */
function queueSeconds(r: ActiveRequest, scheduledSeconds: number): number {
  return Math.max(0, scheduledSeconds - r.request.arrivalSeconds);
}

/** One data-parallel rank: its own scheduler, batch and KV pool. */
export class EngineRank {
  readonly counters: RankCounters;
  private readonly waiting: ActiveRequest[] = [];
  private readonly running: ActiveRequest[] = [];
  /**
   * Requests of `running` whose prefill has not started (no prefill budget reached them yet). vLLM's scheduler keeps
   * such a request in its waiting queue until a step's token budget gives it its first prompt tokens, and SGLang's
   * until a prefill batch takes it; here it joins the batch at admission, so the gauges report these as waiting.
   * A count kept where a request is admitted and where its first prefill budget reaches it, rather than `running`
   * filtered when read: the gauges are read every simulated second (the backlog figure) and at each of SGLang's stats
   * logs, and the batch can hold hundreds.
   */
  private unstarted = 0;
  /** Decode side: waiting for a KV slot (SGLang prealloc queue). */
  private readonly prealloc: ActiveRequest[] = [];
  /** Decode side: KV arriving. */
  private readonly transferring: ActiveRequest[] = [];
  /** Prefill side: prefill done, KV held until the decode side has it. */
  private readonly inflight = new Map<number, ActiveRequest>();
  private readonly prefixCache: PrefixCache;
  private kvUsedTokens = 0;
  /** See `outstandingTokens()`; kept as requests move so routing reads it in constant time. */
  private owedTokens = 0;
  /** Called once per finished request; the quality simulator reads per-request latency from it. */
  onFinish: ((finished: FinishedRequest) => void) | undefined;

  constructor(private readonly spec: ReplicaSpec) {
    this.counters = rankCounters(spec.engine);
    this.prefixCache = new PrefixCache(spec.capacity.prefixCacheBlocks);
  }

  outstanding(): number {
    return this.waiting.length + this.running.length + this.prealloc.length + this.transferring.length;
  }

  /**
   * Tokens this rank still owes its requests: prompt tokens not yet prefilled
   * (a waiting request's whole prompt, before its prefix-cache lookup) plus
   * output tokens this rank has still to emit (a prefill replica emits only the
   * first; a decode replica every one after it). A request handed off or
   * finished owes nothing. What a token-aware router balances.
   */
  outstandingTokens(): number {
    // Fractional prefill steps leave rounding residue; an empty rank owes exactly nothing.
    if (this.outstanding() === 0) this.owedTokens = 0;
    return this.owedTokens;
  }

  /** Output tokens this rank emits for a request it prefills. */
  private emittedHere(request: SimRequest): number {
    return this.spec.serving === "prefill" ? 1 : request.outputTokens;
  }

  /**
   * The gauges as the engine reports them. vLLM writes them on every engine
   * step, so they are current. SGLang's scheduler writes them only when it logs
   * stats: after a prefill batch, every `decodeLogInterval` decode steps, and on
   * its idle check; in between they hold the last logged values.
   */
  gauges(): RankGauges {
    if (this.spec.engine === "sglang") return (this.logged ??= this.liveGauges());
    return this.liveGauges();
  }

  private logged: RankGauges | undefined;
  private decodeStepsSinceLog = 0;

  private logStats(): void {
    this.logged = this.liveGauges();
    this.decodeStepsSinceLog = 0;
  }

  private liveGauges(): RankGauges {
    // vLLM counts requests waiting for remote KV among its waiting requests.
    const waiting =
      this.spec.engine === "vllm"
        ? this.waiting.length + this.prealloc.length + this.transferring.length
        : this.waiting.length;
    return {
      running: this.running.length - this.unstarted,
      waiting: waiting + this.unstarted,
      kvUsage: this.kvUsedTokens / this.spec.capacity.kvCacheTokens,
      prefillInflight: this.inflight.size,
      decodePrealloc: this.prealloc.length,
      decodeTransfer: this.transferring.length,
    };
  }

  enqueue(request: SimRequest): void {
    this.owedTokens += request.promptTokens + this.emittedHere(request);
    this.waiting.push({ request, cachedTokens: 0, prefillRemaining: 0, generated: 0, decodeCredit: 0, kvTokens: 0 });
  }

  acceptHandoff(handoff: Handoff): void {
    this.owedTokens += Math.max(0, handoff.request.outputTokens - 1);
    this.prealloc.push({
      request: handoff.request,
      cachedTokens: 0,
      prefillRemaining: 0,
      generated: 1,
      decodeCredit: 0,
      kvTokens: 0,
      firstTokenSeconds: handoff.firstTokenSeconds,
      fromPod: handoff.fromPod,
    });
  }

  /** Prefill side: the decode side holds the KV now. */
  releaseTransferred(requestId: number): void {
    const active = this.inflight.get(requestId);
    if (!active) return;
    this.inflight.delete(requestId);
    this.kvUsedTokens -= active.kvTokens;
    this.finishRequest(active, active.firstTokenSeconds ?? active.request.arrivalSeconds, "length");
  }

  /**
   * Advances the rank by `dtSeconds` ending at `nowSeconds + dtSeconds`.
   * Returns prefilled requests to hand off and ids of requests whose KV arrived.
   */
  step(
    nowSeconds: number,
    dtSeconds: number,
    fromPod: string,
  ): { handoffs: Handoff[]; transferred: { id: number; fromPod: string }[] } {
    const endSeconds = nowSeconds + dtSeconds;
    const handoffs: Handoff[] = [];
    const transferred: { id: number; fromPod: string }[] = [];
    // An idle rank has nothing to advance; large fleets are mostly idle ranks.
    if (this.outstanding() === 0) {
      // SGLang's idle self-check logs stats once the scheduler is idle.
      if (this.logged !== undefined && this.logged.running + this.logged.waiting > 0) this.logStats();
      return { handoffs, transferred };
    }
    this.admit(nowSeconds);
    const prefilled = this.prefill(nowSeconds, dtSeconds, fromPod, handoffs);
    // KV transfers complete before decoding so a request can decode in the step its KV lands.
    for (let i = 0; i < this.transferring.length;) {
      const t = this.transferring[i];
      if (t && (t.transferDoneSeconds ?? Infinity) <= endSeconds) {
        this.transferring.splice(i, 1);
        transferred.push({ id: t.request.id, fromPod: t.fromPod ?? "" });
        this.countDecodeSidePrompt(t);
        if (t.generated >= t.request.outputTokens) {
          this.kvUsedTokens -= t.kvTokens;
          this.finishRequest(t, endSeconds, "length");
        } else this.running.push(t);
      } else i++;
    }
    this.decode(endSeconds, dtSeconds);
    if (prefilled || this.decodeStepsSinceLog >= decodeLogInterval) this.logStats();
    return { handoffs, transferred };
  }

  private admit(nowSeconds: number): void {
    const cap = this.spec.capacity;
    const busy = (): number => this.running.length + this.transferring.length;
    // Decode side first: requests already prefilled elsewhere.
    while (this.prealloc.length > 0 && busy() < cap.maxRunningRequests) {
      const next = this.prealloc[0];
      if (!next) break;
      const need = next.request.promptTokens + 1;
      if (this.kvUsedTokens + need > cap.kvCacheTokens) break;
      this.prealloc.shift();
      next.kvTokens = need;
      this.kvUsedTokens += need;
      next.transferDoneSeconds = nowSeconds + this.spec.kvTransferSeconds;
      this.transferring.push(next);
    }
    while (this.waiting.length > 0 && busy() < cap.maxRunningRequests) {
      const next = this.waiting[0];
      if (!next) break;
      const need = next.request.promptTokens;
      if (this.kvUsedTokens + need > cap.kvCacheTokens) break;
      this.waiting.shift();
      const blocks = next.request.prefixBlocks ?? [];
      const blockTokens = next.request.blockTokens ?? 16;
      const leading = this.prefixCache.matchLeading(blocks);
      // The last prompt token is always computed, as in both engines.
      const cached = Math.max(0, Math.min(leading * blockTokens, next.request.promptTokens - 1));
      const admitted: ActiveRequest = {
        ...next,
        cachedTokens: cached,
        prefillRemaining: next.request.promptTokens - cached,
        kvTokens: need,
      };
      this.kvUsedTokens += need;
      this.owedTokens -= cached;
      this.counters.prefixCacheQueries += next.request.promptTokens;
      this.counters.prefixCacheHits += cached;
      this.running.push(admitted);
      this.unstarted++;
    }
  }

  /** Runs this step's prefill budget; true when a prefill batch ran. */
  private prefill(nowSeconds: number, dtSeconds: number, fromPod: string, handoffs: Handoff[]): boolean {
    const rate = this.spec.capacity.prefillTokensPerSecond;
    let budget = rate * dtSeconds;
    let spent = 0;
    for (let i = 0; i < this.running.length && budget > 0;) {
      const r = this.running[i];
      if (!r || r.prefillRemaining <= 0) {
        i++;
        continue;
      }
      if (r.scheduledSeconds === undefined) this.onScheduled(r, nowSeconds + spent / rate);
      const take = Math.min(budget, r.prefillRemaining);
      r.prefillRemaining -= take;
      this.owedTokens -= take;
      budget -= take;
      spent += take;
      if (r.prefillRemaining > 1e-9) {
        i++;
        continue;
      }
      this.owedTokens -= r.prefillRemaining;
      r.prefillRemaining = 0;
      const doneSeconds = nowSeconds + spent / rate;
      this.onPrefillDone(r, doneSeconds);
      if (this.spec.serving === "prefill") {
        this.running.splice(i, 1);
        this.inflight.set(r.request.id, r);
        handoffs.push({ request: r.request, fromPod, firstTokenSeconds: doneSeconds });
        continue;
      }
      if (r.generated >= r.request.outputTokens) {
        this.running.splice(i, 1);
        this.kvUsedTokens -= r.kvTokens;
        this.finishRequest(r, doneSeconds, "length");
        continue;
      }
      i++;
    }
    return spent > 0;
  }

  /**
   * The request's prefill starts: its queue time ends. Measured from its arrival
   * (at the gateway, which is its arrival at the replica unless no replica was
   * ready). SGLang observes it now, vLLM when the request finishes.
   */
  private onScheduled(r: ActiveRequest, atSeconds: number): void {
    r.scheduledSeconds = atSeconds;
    this.unstarted--;
    if (this.spec.engine === "sglang") this.counters.queueTime.observe(queueSeconds(r, atSeconds));
  }

  private onPrefillDone(r: ActiveRequest, doneSeconds: number): void {
    const c = this.counters;
    const stream = r.request.streaming === true ? c.byStreaming.streaming : c.byStreaming.nonStreaming;
    r.firstTokenSeconds = doneSeconds;
    r.generated = 1;
    this.owedTokens -= 1;
    this.prefixCache.insert(r.request.prefixBlocks ?? []);
    c.effectiveInputTokens += r.request.promptTokens - r.cachedTokens;
    c.effectiveDeviceHitTokens += r.cachedTokens;
    stream.ttft.observe(doneSeconds - r.request.arrivalSeconds);
    if (this.spec.engine === "vllm") {
      // vLLM counts the full prompt (cached tokens included) at its first token.
      stream.promptTokens += r.request.promptTokens;
      stream.generationTokens += 1;
    }
  }

  /** vLLM on a decode replica counts the transferred prompt as externally cached. */
  private countDecodeSidePrompt(r: ActiveRequest): void {
    if (this.spec.engine !== "vllm") return;
    const c = this.counters;
    const stream = r.request.streaming === true ? c.byStreaming.streaming : c.byStreaming.nonStreaming;
    stream.promptTokens += r.request.promptTokens;
    stream.generationTokens += 1;
    c.prefixCacheQueries += r.request.promptTokens;
    c.externalPrefixCacheQueries += r.request.promptTokens;
    c.externalPrefixCacheHits += r.request.promptTokens - 1;
  }

  private decode(endSeconds: number, dtSeconds: number): void {
    const cap = this.spec.capacity;
    const decoding = this.running.filter(
      (r) => r.prefillRemaining <= 0 && r.generated >= 1 && r.generated < r.request.outputTokens,
    );
    if (decoding.length === 0) return;
    const perRequestTokensPerSecond = Math.min(
      cap.maxTokensPerSecondPerRequest,
      cap.decodeTokensPerSecond / decoding.length,
    );
    const tokenSeconds = 1 / perRequestTokensPerSecond;
    // One decode step per token time of the batch.
    this.decodeStepsSinceLog += dtSeconds * perRequestTokensPerSecond;
    const tokensPerStep = Math.max(1, Math.round(cap.acceptedTokensPerStep));
    const c = this.counters;
    for (const r of decoding) {
      r.decodeCredit += perRequestTokensPerSecond * dtSeconds;
      const stream = r.request.streaming === true ? c.byStreaming.streaming : c.byStreaming.nonStreaming;
      while (r.decodeCredit >= 1 && r.generated < r.request.outputTokens) {
        r.decodeCredit -= 1;
        r.generated += 1;
        this.owedTokens -= 1;
        r.kvTokens += 1;
        this.kvUsedTokens += 1;
        r.stepTokens = (r.stepTokens ?? 0) + 1;
        if (r.stepTokens >= tokensPerStep || r.generated >= r.request.outputTokens) {
          this.observeStep(r.stepTokens, tokenSeconds);
          r.stepTokens = 0;
        }
        // A request's mean inter-token latency as its user sees it, one gap per token.
        r.itlSumSeconds = (r.itlSumSeconds ?? 0) + tokenSeconds;
        if (this.spec.engine === "vllm") stream.generationTokens += 1;
      }
      if (r.generated >= r.request.outputTokens) {
        const idx = this.running.indexOf(r);
        if (idx >= 0) this.running.splice(idx, 1);
        this.kvUsedTokens -= r.kvTokens;
        this.finishRequest(r, endSeconds, "length");
      }
    }
  }

  /** One engine step of `tokens` tokens for one request, as each engine records ITL. */
  private observeStep(tokens: number, tokenSeconds: number): void {
    if (this.spec.engine === "vllm") this.counters.itl.observe(tokens * tokenSeconds);
    else this.counters.itl.observe(tokenSeconds, tokens);
  }

  private finishRequest(r: ActiveRequest, endSeconds: number, reason: "stop" | "length"): void {
    const c = this.counters;
    const stream = r.request.streaming === true ? c.byStreaming.streaming : c.byStreaming.nonStreaming;
    const generated = this.spec.serving === "prefill" ? 1 : r.request.outputTokens;
    if (this.spec.engine === "sglang") {
      // SGLang's tokenizer counts tokens of finished requests.
      stream.promptTokens += r.request.promptTokens;
      stream.generationTokens += generated;
      stream.cachedTokens += r.cachedTokens;
    }
    stream.requests += 1;
    stream.e2e.observe(endSeconds - r.request.arrivalSeconds);
    if (this.spec.engine === "vllm" && r.scheduledSeconds !== undefined) {
      c.queueTime.observe(queueSeconds(r, r.scheduledSeconds));
    }
    if (reason === "stop") c.finishedStop += 1;
    else c.finishedLength += 1;
    if (this.onFinish !== undefined && this.spec.serving !== "prefill") {
      const gaps = r.request.outputTokens - 1;
      this.onFinish({
        request: r.request,
        firstTokenSeconds: r.firstTokenSeconds ?? endSeconds,
        endSeconds,
        meanItlSeconds: gaps > 0 ? (r.itlSumSeconds ?? 0) / gaps : undefined,
      });
    }
  }
}

/** Totals of one replica summed over ranks: the ground truth tests compare against. */
export interface ReplicaTotals {
  readonly promptTokens: number;
  readonly generationTokens: number;
  readonly prefixCacheQueries: number;
  readonly prefixCacheHits: number;
  readonly effectiveInputTokens: number;
  readonly effectiveDeviceHitTokens: number;
  readonly finishedRequests: number;
  readonly running: number;
  readonly waiting: number;
  readonly decodeTransfer: number;
  /** Mean over data-parallel ranks. */
  readonly kvUsage: number;
  readonly ttftCumulative: readonly { upperBound: number; count: number }[];
  readonly itlCumulative: readonly { upperBound: number; count: number }[];
  readonly ttftCount: number;
  readonly ttftSumSeconds: number;
  readonly itlCount: number;
  readonly itlSumSeconds: number;
  readonly queueTimeCumulative: readonly { upperBound: number; count: number }[];
  readonly queueTimeCount: number;
  readonly queueTimeSumSeconds: number;
}

/** One simulated engine pod: its data-parallel ranks behind one metrics endpoint. */
export class EngineReplica {
  readonly ranks: EngineRank[];
  private nextRank = 0;

  constructor(
    readonly name: string,
    readonly spec: ReplicaSpec,
  ) {
    this.ranks = Array.from({ length: spec.dataParallelSize }, () => new EngineRank(spec));
  }

  outstanding(): number {
    return this.ranks.reduce((n, r) => n + r.outstanding(), 0);
  }

  /** Tokens owed over every rank (`EngineRank.outstandingTokens`). */
  outstandingTokens(): number {
    let n = 0;
    for (const r of this.ranks) n += r.outstandingTokens();
    return n;
  }

  /** Where `advanceTo` has brought the replica; undefined before its first call. */
  get clockSeconds(): number | undefined {
    return this.clock;
  }

  private clock: number | undefined;

  /**
   * Advances the replica from its own clock to `atSeconds` in one step of
   * that length (the first call only sets the clock). A caller that advances
   * each replica to an arrival's time before enqueuing it admits the request
   * when it arrives, not at the next step boundary.
   */
  advanceTo(atSeconds: number): {
    fromSeconds: number;
    handoffs: Handoff[];
    transferred: { id: number; fromPod: string }[];
  } {
    const fromSeconds = this.clock ?? atSeconds;
    if (atSeconds <= fromSeconds) {
      this.clock = fromSeconds;
      return { fromSeconds, handoffs: [], transferred: [] };
    }
    this.clock = atSeconds;
    return { fromSeconds, ...this.step(fromSeconds, atSeconds - fromSeconds) };
  }

  private pickRank(): EngineRank {
    // Least outstanding, ties in rotation, like a DP load balancer.
    let best: EngineRank | undefined;
    for (let k = 0; k < this.ranks.length; k++) {
      const r = this.ranks[(this.nextRank + k) % this.ranks.length];
      if (r && (!best || r.outstanding() < best.outstanding())) best = r;
    }
    this.nextRank = (this.nextRank + 1) % this.ranks.length;
    if (!best) throw new Error("replica has no ranks");
    return best;
  }

  enqueue(request: SimRequest): void {
    this.pickRank().enqueue(request);
  }

  acceptHandoff(handoff: Handoff): void {
    this.pickRank().acceptHandoff(handoff);
  }

  releaseTransferred(requestId: number): void {
    for (const r of this.ranks) r.releaseTransferred(requestId);
  }

  /** Sets the per-request completion listener of every rank. */
  onFinish(listener: (finished: FinishedRequest) => void): void {
    for (const r of this.ranks) r.onFinish = listener;
  }

  step(nowSeconds: number, dtSeconds: number): { handoffs: Handoff[]; transferred: { id: number; fromPod: string }[] } {
    const handoffs: Handoff[] = [];
    const transferred: { id: number; fromPod: string }[] = [];
    for (const r of this.ranks) {
      const out = r.step(nowSeconds, dtSeconds, this.name);
      handoffs.push(...out.handoffs);
      transferred.push(...out.transferred);
    }
    return { handoffs, transferred };
  }

  totals(): ReplicaTotals {
    let promptTokens = 0;
    let generationTokens = 0;
    let prefixCacheQueries = 0;
    let prefixCacheHits = 0;
    let effectiveInputTokens = 0;
    let effectiveDeviceHitTokens = 0;
    let finishedRequests = 0;
    let running = 0;
    let waiting = 0;
    let decodeTransfer = 0;
    let kvUsage = 0;
    const ttft = new Map<number, number>();
    const itl = new Map<number, number>();
    let ttftCount = 0;
    let ttftSumSeconds = 0;
    let itlCount = 0;
    let itlSumSeconds = 0;
    const queueTime = new Map<number, number>();
    let queueTimeCount = 0;
    let queueTimeSumSeconds = 0;
    const addCumulative = (into: Map<number, number>, h: Histogram): void => {
      for (const b of h.cumulative()) into.set(b.upperBound, (into.get(b.upperBound) ?? 0) + b.count);
    };
    for (const rank of this.ranks) {
      const c = rank.counters;
      for (const s of [c.byStreaming.streaming, c.byStreaming.nonStreaming]) {
        promptTokens += s.promptTokens;
        generationTokens += s.generationTokens;
        finishedRequests += s.requests;
        addCumulative(ttft, s.ttft);
        ttftCount += s.ttft.count;
        ttftSumSeconds += s.ttft.sum;
      }
      addCumulative(itl, c.itl);
      itlCount += c.itl.count;
      itlSumSeconds += c.itl.sum;
      addCumulative(queueTime, c.queueTime);
      queueTimeCount += c.queueTime.count;
      queueTimeSumSeconds += c.queueTime.sum;
      prefixCacheQueries += c.prefixCacheQueries;
      prefixCacheHits += c.prefixCacheHits;
      effectiveInputTokens += c.effectiveInputTokens;
      effectiveDeviceHitTokens += c.effectiveDeviceHitTokens;
      const g = rank.gauges();
      running += g.running;
      waiting += g.waiting;
      decodeTransfer += g.decodeTransfer;
      kvUsage += g.kvUsage;
    }
    const toList = (m: Map<number, number>): { upperBound: number; count: number }[] =>
      [...m.entries()].sort((a, b) => a[0] - b[0]).map(([upperBound, count]) => ({ upperBound, count }));
    return {
      promptTokens,
      generationTokens,
      prefixCacheQueries,
      prefixCacheHits,
      effectiveInputTokens,
      effectiveDeviceHitTokens,
      finishedRequests,
      running,
      waiting,
      decodeTransfer,
      kvUsage: kvUsage / this.ranks.length,
      ttftCumulative: toList(ttft),
      itlCumulative: toList(itl),
      ttftCount,
      ttftSumSeconds,
      itlCount,
      itlSumSeconds,
      queueTimeCumulative: toList(queueTime),
      queueTimeCount,
      queueTimeSumSeconds,
    };
  }
}
