import { describe, expect, it } from "vitest";
import { absentCounterReading, type AbsentCounterEvidence } from "../../../src/core/signals/absent-counter.js";

const freshIdleSglang: AbsentCounterEvidence = {
  engine: "sglang",
  podFresh: true,
  windowEstablished: true,
  firstUseFamilySeen: false,
  startupCounterSeen: true,
};

describe("absentCounterReading", () => {
  it("an SGLang pod that has finished nothing, with its seeded counter present, reads a zero", () => {
    expect(absentCounterReading(freshIdleSglang)).toEqual({ kind: "zero" });
  });

  it.each([
    { name: "vLLM creates counters at start-up", change: { engine: "vllm" as const }, reason: /vLLM/ },
    { name: "stale pod", change: { podFresh: false }, reason: /stale/ },
    { name: "no baseline", change: { windowEstablished: false }, reason: /baseline/ },
    { name: "family partly present", change: { firstUseFamilySeen: true }, reason: /same first-use family/ },
    { name: "no start-up counter (older SGLang)", change: { startupCounterSeen: false }, reason: /start-up counter/ },
  ])("$name: unknown", ({ change, reason }) => {
    const reading = absentCounterReading({ ...freshIdleSglang, ...change });
    expect(reading.kind).toBe("unknown");
    expect(reading.kind === "unknown" ? reading.reason : "").toMatch(reason);
  });
});
