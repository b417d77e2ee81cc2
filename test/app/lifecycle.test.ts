import { describe, expect, it } from "vitest";
import { Lifecycle } from "../../src/app/lifecycle.js";

describe("Lifecycle", () => {
  it("stops what started in reverse order", async () => {
    const stopped: string[] = [];
    const lifecycle = new Lifecycle();
    for (const name of ["store", "servers", "loop"]) lifecycle.onStop(name, () => void stopped.push(name));
    const reports = await lifecycle.unwind();
    expect(stopped).toEqual(["loop", "servers", "store"]);
    expect(reports.map((r) => [r.name, r.outcome])).toEqual([
      ["loop", "stopped"],
      ["servers", "stopped"],
      ["store", "stopped"],
    ]);
    expect(lifecycle.running()).toEqual([]);
  });

  it("runs every stop when one before it fails, and reports the failure", async () => {
    const stopped: string[] = [];
    const lifecycle = new Lifecycle();
    lifecycle.onStop("first", () => void stopped.push("first"));
    lifecycle.onStop("broken", async () => {
      throw new Error("close failed");
    });
    const reports = await lifecycle.unwind();
    expect(stopped).toEqual(["first"]);
    expect(reports[0]).toMatchObject({ name: "broken", outcome: "failed" });
    expect(String(reports[0]?.error)).toContain("close failed");
  });

  it("abandons a stop that outlasts its bound and goes on with the others", async () => {
    const stopped: string[] = [];
    const lifecycle = new Lifecycle(50);
    lifecycle.onStop("first", () => void stopped.push("first"));
    lifecycle.onStop("hangs", () => new Promise<void>(() => undefined));
    const startMs = performance.now();
    const reports = await lifecycle.unwind();
    expect(performance.now() - startMs).toBeLessThan(2_000);
    expect(reports.map((r) => r.outcome)).toEqual(["timed out", "stopped"]);
    expect(stopped).toEqual(["first"]);
  });

  it("unwinds once however often it is asked, and refuses a start while stopping", async () => {
    let count = 0;
    const lifecycle = new Lifecycle();
    lifecycle.onStop("once", () => void count++);
    const [a, b] = await Promise.all([lifecycle.unwind(), lifecycle.unwind()]);
    expect(a).toBe(b);
    expect(count).toBe(1);
    expect(() => lifecycle.onStop("late", () => undefined)).toThrow(/late started while the lifecycle is stopping/);
  });
});
