/** The loop's rhythm with an injected sleep: steps and waits alternate, a failing step does not end it, stop cuts the wait. */
import { describe, expect, it } from "vitest";
import { TickLoop, timerSleep } from "../../src/app/tick-loop.js";
import { createLogger } from "../../src/adapters/telemetry/logger.js";
import { settle } from "../fakes/controller.js";

describe("the tick loop", () => {
  it("alternates steps and waits of one period, and goes on after a step that throws", async () => {
    const events: string[] = [];
    const wakes: (() => void)[] = [];
    const logs: string[] = [];
    let steps = 0;
    const loop = new TickLoop({
      periodMs: 1_000,
      logger: createLogger({ level: "error", write: (line) => logs.push(line) }),
      step: async () => {
        steps += 1;
        events.push(`step ${steps}`);
        if (steps === 2) throw new Error("the API server is away");
      },
      sleep: (ms) => {
        events.push(`wait ${ms}`);
        return new Promise((resolve) => wakes.push(resolve));
      },
    });
    loop.start();
    await settle();
    wakes.shift()?.();
    await settle();
    wakes.shift()?.();
    await settle();
    expect(events).toEqual(["step 1", "wait 1000", "step 2", "wait 1000", "step 3", "wait 1000"]);
    expect(logs.some((l) => l.includes("the API server is away"))).toBe(true);
    const stopped = loop.stop();
    wakes.shift()?.();
    await stopped;
    expect(steps).toBe(3);
  });

  it("a stop during a real wait returns without waiting out the period", async () => {
    let steps = 0;
    const loop = new TickLoop({ periodMs: 60_000, sleep: timerSleep, step: async () => void (steps += 1) });
    loop.start();
    await settle();
    const startedMs = performance.now();
    await loop.stop();
    expect(performance.now() - startedMs).toBeLessThan(5_000);
    expect(steps).toBe(1);
  });
});
