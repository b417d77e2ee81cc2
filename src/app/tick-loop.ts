/**
 * The rhythm of the control loop: run a step, wait the tick period, again,
 * until stopped. The wait is injected (a test moves time itself) and can be
 * cut short, so a stop does not wait out the period. A step that throws is
 * logged and the loop goes on: one bad pass never ends the controller.
 */
import type { Logger } from "../adapters/telemetry/logger.js";

/** Waits `ms`, or less when `signal` aborts. */
export type InterruptibleSleep = (ms: number, signal: AbortSignal) => Promise<void>;

export interface TickLoopOptions {
  readonly step: () => Promise<void>;
  readonly periodMs: number;
  readonly sleep?: InterruptibleSleep;
  readonly logger?: Logger;
}

export function timerSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

export class TickLoop {
  private readonly stopping = new AbortController();
  private running: Promise<void> | undefined;

  constructor(private readonly opts: TickLoopOptions) {}

  start(): void {
    this.running ??= this.run();
  }

  /** Ends the wait in progress, lets the step in progress finish, and returns once the loop ended. */
  async stop(): Promise<void> {
    this.stopping.abort();
    await this.running;
  }

  private async run(): Promise<void> {
    const sleep = this.opts.sleep ?? timerSleep;
    while (!this.stopping.signal.aborted) {
      try {
        await this.opts.step();
      } catch (error) {
        this.opts.logger?.error("tick failed", { error });
      }
      if (this.stopping.signal.aborted) return;
      await sleep(this.opts.periodMs, this.stopping.signal);
    }
  }
}
