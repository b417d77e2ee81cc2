/**
 * One pass, one schedule: the controller alone decides which scalers are due, and the PromQL port samples
 * every scaler it is asked for. A second "is it due?" in the source, judged on a later clock read, used to
 * leave a scaler the controller planned without samples, so every one of its roles read Missing.
 */
import { describe, expect, it } from "vitest";
import { defaultPrometheusSignalConfig } from "../../src/adapters/prometheus/config.js";
import { PrometheusSignalSource } from "../../src/adapters/prometheus/source.js";
import type { SampleRequest } from "../../src/app/controller.js";
import { PromqlSignals } from "../../src/adapters/prometheus/signal-port.js";

const request: SampleRequest = {
  key: "llm/chat",
  namespace: "llm",
  deployment: "chat",
  roles: ["server"],
  stableWindowSeconds: 180,
  panicWindowSeconds: 60,
  intervalSeconds: 15,
};

describe("the PromQL signal port", () => {
  it("samples every scaler the controller asks for, however soon after its last pass", async () => {
    let queries = 0;
    const client = {
      instantQuery: () => {
        queries++;
        return Promise.resolve({ samples: [], warnings: [] });
      },
    };
    let nowMs = 1_000_000;
    const source = new PrometheusSignalSource(client, defaultPrometheusSignalConfig);
    const port = new PromqlSignals(source, () => nowMs);
    const first = await port.sample([request]);
    nowMs += 1; // a later clock read, well inside the 15 s interval
    const second = await port.sample([request]);
    expect(first.get("llm/chat")?.has("server")).toBe(true);
    expect(second.get("llm/chat")?.has("server")).toBe(true);
    // Two whole passes: every query of the plan, twice.
    expect(queries).toBe(2 * source.issuedFor([request]).length);
  });
});
