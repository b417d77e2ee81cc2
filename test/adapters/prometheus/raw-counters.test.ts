import { describe, expect, it } from "vitest";
import type { RawSeries } from "../../../src/adapters/prometheus/client.js";
import { defaultLabelNames } from "../../../src/adapters/prometheus/config.js";
import { counterRows } from "../../../src/adapters/prometheus/raw-counters.js";

const l = defaultLabelNames;
const endMs = 1_000_000;

/** A series of one pod of `md` whose counter grows by `perScrape` every 15 s over the last 180 s. */
function series(
  name: string,
  labels: Readonly<Record<string, string>>,
  perScrape = 15,
  md = "md",
  scrapes = 12,
): RawSeries {
  return {
    name,
    labels: {
      namespace: "ns",
      pod: "p-0",
      [l.deployment]: md,
      [l.role]: "server",
      instance: "10.0.0.1:30000",
      ...labels,
    },
    samples: Array.from({ length: scrapes }, (_, i) => ({
      tMs: endMs - (scrapes - 1 - i) * 15_000,
      value: 1000 + i * perScrape,
    })),
  };
}

const windows = [{ windowSeconds: 180, selection: { namespaces: ["ns"], deployments: ["md"], roles: ["server"] } }];

const rowsOf = (s: readonly RawSeries[], w = windows) =>
  counterRows("sglang", s, w, l, ":", endMs).map((r) => ({ ...r, timestampUnixSeconds: 0 }));

describe("the counters parts computed from raw samples", () => {
  it("reads SGLang's effective prefill as sglangScheduler selects its ranks: the input mode, one value per DP rank", () => {
    const effective = "sglang:prefill_effective_tokens_total";
    const rows = rowsOf([
      series(effective, { mode: "input", tp_rank: "0", dp_rank: "0" }, 15),
      // Another TP rank of DP rank 0 repeats it; a TP rank naming DP rank 1 is that rank.
      series(effective, { mode: "input", tp_rank: "1", dp_rank: "0" }, 15),
      series(effective, { mode: "input", tp_rank: "1", dp_rank: "1" }, 30),
      // Not read: a TP rank other than 0 without a DP rank, pipeline rank 1, a priority, another mode.
      series(effective, { mode: "input", tp_rank: "1" }, 1500),
      series(effective, { mode: "input", tp_rank: "0", pp_rank: "1" }, 1500),
      series(effective, { mode: "input", tp_rank: "0", priority: "high" }, 1500),
      series(effective, { mode: "hit", tp_rank: "0" }, 1500),
    ]).filter((r) => r.labels["mds_signal"] === "sglang/effective");
    // 1 + 2 tokens per second: DP rank 0 once (max of its duplicates), DP rank 1.
    expect(rows).toHaveLength(1);
    expect(rows[0]?.labels).toEqual({
      namespace: "ns",
      pod: "p-0",
      [l.deployment]: "md",
      [l.role]: "server",
      mode: "input",
      mds_signal: "sglang/effective",
      mds_window_seconds: "180",
    });
    expect(rows[0]?.value).toBeCloseTo(3, 12);
  });

  it("counts resets over every series of a counter, and scrapes per target, the fewest kept", () => {
    const restarted: RawSeries = {
      ...series("sglang:prompt_tokens_total", {}),
      samples: [
        { tMs: endMs - 30_000, value: 50 },
        { tMs: endMs - 15_000, value: 2 },
        { tMs: endMs, value: 9 },
      ],
    };
    const rows = rowsOf([
      restarted,
      series("sglang:num_running_reqs", {}, 0, "md", 12),
      series("sglang:num_running_reqs", { dp_rank: "1" }, 0, "md", 5),
      series("sglang:num_running_reqs", { instance: "10.0.0.2:30000" }, 0, "md", 3),
    ]);
    const find = (signal: string) => rows.filter((r) => r.labels["mds_signal"] === signal);
    expect(find("sglang/resets/prompt_tokens_total").map((r) => r.value)).toEqual([1]);
    expect(find("sglang/samples").map((r) => [r.labels["instance"], r.value])).toEqual([
      ["10.0.0.1:30000", 5],
      ["10.0.0.2:30000", 3],
    ]);
    // A counter with one sample in the window: a reset count (0), no rate.
    const lone = rowsOf([series("sglang:generation_tokens_total", {}, 15, "md", 1)]);
    expect(lone.map((r) => [r.labels["mds_signal"], r.value])).toEqual([["sglang/resets/generation_tokens_total", 0]]);
  });

  it("reads each window for its own scalers: a deployment outside a window's selection is left out of it", () => {
    const two = [
      ...windows,
      { windowSeconds: 60, selection: { namespaces: ["ns"], deployments: ["other"], roles: ["server"] } },
    ];
    const rows = rowsOf(
      [
        series("sglang:cached_tokens_total", { cache_source: "device" }),
        series("sglang:cached_tokens_total", {}, 15, "other"),
      ],
      two,
    ).filter((r) => r.labels["mds_signal"] === "sglang/cached");
    expect(rows.map((r) => [r.labels["mds_window_seconds"], r.labels[l.deployment], r.labels["cache_source"]])).toEqual(
      [
        ["180", "md", "device"],
        ["60", "other", undefined],
      ],
    );
  });
});
