/**
 * What has started, in order. Each component registers its stop the moment it starts; stopping
 * unwinds them in reverse, so a failure halfway through start-up stops exactly what started, and a
 * shutdown drains in the same order. Each stop has a bound: one that hangs is abandoned (and said so)
 * rather than keeping the process alive, so the exit comes within the sum of the bounds.
 */

export interface StopReport {
  readonly name: string;
  readonly outcome: "stopped" | "failed" | "timed out";
  readonly error?: unknown;
  readonly elapsedMs: number;
}

interface Registered {
  readonly name: string;
  readonly stop: () => void | Promise<void>;
}

/** The bound of one component's stop when none is given: a server closing its keep-alive sockets fits. */
export const defaultStopBoundMs = 10_000;

export class Lifecycle {
  private readonly started: Registered[] = [];
  private unwinding: Promise<readonly StopReport[]> | undefined;

  constructor(
    private readonly stopBoundMs = defaultStopBoundMs,
    private readonly nowMs: () => number = () => performance.now(),
  ) {}

  /** Registers the stop of a component that has just started. */
  onStop(name: string, stop: () => void | Promise<void>): void {
    if (this.unwinding !== undefined) throw new Error(`${name} started while the lifecycle is stopping`);
    this.started.push({ name, stop });
  }

  /** The names of what is running, in start order. */
  running(): readonly string[] {
    return this.started.map((r) => r.name);
  }

  /** Stops everything that started, last first; every stop runs whatever the ones before it did. Idempotent. */
  unwind(): Promise<readonly StopReport[]> {
    this.unwinding ??= this.stopAll();
    return this.unwinding;
  }

  private async stopAll(): Promise<readonly StopReport[]> {
    const reports: StopReport[] = [];
    for (const component of [...this.started].reverse()) reports.push(await this.stopOne(component));
    this.started.length = 0;
    return reports;
  }

  private async stopOne(component: Registered): Promise<StopReport> {
    const startMs = this.nowMs();
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<"timed out">((resolve) => {
      timer = setTimeout(() => resolve("timed out"), this.stopBoundMs);
      timer.unref();
    });
    try {
      const outcome = await Promise.race([
        Promise.resolve()
          .then(component.stop)
          .then(() => "stopped" as const),
        bound,
      ]);
      return { name: component.name, outcome, elapsedMs: this.nowMs() - startMs };
    } catch (error) {
      return { name: component.name, outcome: "failed", error, elapsedMs: this.nowMs() - startMs };
    } finally {
      clearTimeout(timer);
    }
  }
}
