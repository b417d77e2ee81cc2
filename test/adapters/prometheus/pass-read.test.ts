/**
 * Filing a pass's series under their pods (pass-read.ts): the gauges name each pod with its deployment and
 * role; every other per-pod series carries its namespace and pod name alone and is filed under the pod the
 * gauges named (docs/prometheus-signals.md, "A pod's role read from its gauges").
 */
import { describe, expect, it } from "vitest";
import type { VectorSample } from "../../../src/adapters/prometheus/client.js";
import { defaultPrometheusSignalConfig } from "../../../src/adapters/prometheus/config.js";
import { roleKey, type PassAcc } from "../../../src/adapters/prometheus/pass-acc.js";
import { readSample, type IssuedQuery, type UsableAnswer } from "../../../src/adapters/prometheus/pass-read.js";

const labels = defaultPrometheusSignalConfig.labels;

function emptyPass(): PassAcc {
  return { pods: [], podsByName: new Map(), roles: new Map(), summed: new Map(), native: true, classic: new Map() };
}

function answer(query: IssuedQuery): UsableAnswer {
  return { query, result: { samples: [], warnings: [], infos: [] }, use: "all" };
}

const timestamps = answer({ family: "gauges", signal: "vllm/timestamp", text: "" });
const prompt = answer({ family: "counters", signal: "vllm/prompt", windowSeconds: 60, text: "" });

function sample(pod: string, value: number, extra: Record<string, string> = {}): VectorSample {
  return { labels: { [labels.namespace]: "ns", [labels.pod]: pod, ...extra }, value, timestampUnixSeconds: 1 };
}

function named(pass: PassAcc, pod: string, deployment: string, role: string): void {
  const gauge = sample(pod, 100, { [labels.deployment]: deployment, [labels.role]: role, instance: "10.0.0.1:8000" });
  readSample(pass, labels, timestamps, gauge, { engine: "vllm", signal: "timestamp", counter: undefined });
}

function readPrompt(pass: PassAcc, s: VectorSample): void {
  readSample(pass, labels, prompt, s, { engine: "vllm", signal: "prompt", counter: undefined });
}

describe("a pass's per-pod series filed under the pods the gauges named", () => {
  it("files a series by namespace and pod under the role the gauges named it in", () => {
    const pass = emptyPass();
    named(pass, "a-0", "a", "decode");
    readPrompt(pass, sample("a-0", 12.5));
    expect(pass.pods).toHaveLength(1);
    expect(pass.pods[0]?.windows.get(60)?.rates.get("vllm/prompt")).toBe(12.5);
  });

  it("files nothing under a pod the gauges did not name, and names no pod from it", () => {
    const pass = emptyPass();
    named(pass, "a-0", "a", "decode");
    readPrompt(pass, sample("a-1", 12.5));
    // The same pod name in another namespace is another pod.
    readPrompt(pass, { ...sample("a-0", 3), labels: { [labels.namespace]: "other", [labels.pod]: "a-0" } });
    expect(pass.pods.map((p) => p.pod)).toEqual(["a-0"]);
    expect(pass.pods[0]?.windows.size).toBe(0);
  });

  it("files a pod's series under neither role where the gauges named its name under two", () => {
    const pass = emptyPass();
    named(pass, "a-0", "a", "decode");
    named(pass, "a-0", "a", "prefill");
    readPrompt(pass, sample("a-0", 12.5));
    expect(pass.pods.map((p) => p.role)).toEqual(["decode", "prefill"]);
    for (const pod of pass.pods) expect(pod.windows.size, pod.role).toBe(0);
    // Its gauges are read under both, as before.
    for (const pod of pass.pods) expect(pod.targets.get("10.0.0.1:8000")?.timestamp, pod.role).toBe(100);
  });

  it("keeps only the roles and windows `only` accepts, by the role the gauges named", () => {
    const pass = emptyPass();
    named(pass, "a-0", "a", "decode");
    named(pass, "b-0", "b", "decode");
    const only = (key: string, w: number): boolean => key === roleKey("ns", "b", "decode") && w === 60;
    for (const pod of ["a-0", "b-0"])
      readSample(pass, labels, prompt, sample(pod, 7), { engine: "vllm", signal: "prompt", counter: undefined }, only);
    expect(pass.pods.map((p) => [p.pod, p.windows.get(60)?.rates.get("vllm/prompt")])).toEqual([
      ["a-0", undefined],
      ["b-0", 7],
    ]);
  });
});
