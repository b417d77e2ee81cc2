/**
 * The reconciler's notion of time. Simulated delays (cold start, drain, ...)
 * run on a `Clock`, so a test can drive them by hand; API retries and watch
 * restarts always use real timers, since they wait for a real server.
 */

export interface Clock {
  nowMs(): number;
  /** Calls `callback` once, `delayMs` from now; the returned function cancels it. */
  schedule(delayMs: number, callback: () => void): () => void;
}

/** Wall-clock time and Node timers. */
export const systemClock: Clock = {
  nowMs: () => Date.now(),
  schedule(delayMs, callback) {
    const timer = setTimeout(callback, Math.max(0, delayMs));
    return () => clearTimeout(timer);
  },
};

interface ManualTimer {
  readonly id: number;
  readonly dueMs: number;
  readonly callback: () => void;
}

/** Time that moves only when `advance` is called; due timers fire in order. */
export class ManualClock implements Clock {
  private currentMs: number;
  private timers: ManualTimer[] = [];
  private nextId = 1;

  constructor(startMs = 0) {
    this.currentMs = startMs;
  }

  nowMs(): number {
    return this.currentMs;
  }

  schedule(delayMs: number, callback: () => void): () => void {
    const timer: ManualTimer = { id: this.nextId++, dueMs: this.currentMs + Math.max(0, delayMs), callback };
    this.timers.push(timer);
    return () => {
      this.timers = this.timers.filter((t) => t.id !== timer.id);
    };
  }

  /** Timers not yet fired. */
  get pendingTimers(): number {
    return this.timers.length;
  }

  /** Moves time forward by `deltaMs`, firing every timer that falls due, earliest first. */
  advance(deltaMs: number): void {
    if (!(deltaMs >= 0)) throw new RangeError(`cannot move time by ${deltaMs} ms`);
    const targetMs = this.currentMs + deltaMs;
    for (;;) {
      let next: ManualTimer | undefined;
      for (const t of this.timers)
        if (
          t.dueMs <= targetMs &&
          (next === undefined || t.dueMs < next.dueMs || (t.dueMs === next.dueMs && t.id < next.id))
        )
          next = t;
      if (next === undefined) break;
      const fired = next;
      this.timers = this.timers.filter((t) => t.id !== fired.id);
      this.currentMs = Math.max(this.currentMs, fired.dueMs);
      fired.callback();
    }
    this.currentMs = targetMs;
  }
}
