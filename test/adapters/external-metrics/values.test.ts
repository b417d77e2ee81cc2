import { describe, expect, it } from "vitest";
import { findExternalMetric, externalMetrics } from "../../../src/adapters/external-metrics/catalogue.js";
import { parseLabelSelector } from "../../../src/adapters/external-metrics/selector.js";
import { readExternalMetric } from "../../../src/adapters/external-metrics/values.js";
import { FakeScalerReader, plannedScaler } from "../../fakes/external-metrics.js";

const metric = (name: string) => {
  const found = findExternalMetric(name);
  if (found === undefined) throw new Error(name);
  return found;
};

const reader = new FakeScalerReader([
  plannedScaler({
    namespace: "ns",
    name: "chat",
    constrained: 3,
    raw: 4,
    current: 2,
    prompt: "2000",
    generation: "500.5",
  }),
  plannedScaler({ namespace: "ns", name: "other", constrained: 5, raw: 5 }),
  plannedScaler({ namespace: "elsewhere", name: "chat", constrained: 7 }),
]);

async function read(name: string, selector = "", leaderRenewing = true) {
  return readExternalMetric({
    reader,
    namespace: "ns",
    metric: metric(name),
    selector: parseLabelSelector(selector),
    leaderRenewing,
  });
}

describe("external metric values from scaler status", () => {
  it("serves each role's constrained recommendation with the time of its last decision", async () => {
    const { list } = await read("mds_role_constrained_replicas", "scaler=chat,role=server");
    expect(list).toEqual({
      kind: "ExternalMetricValueList",
      apiVersion: "external.metrics.k8s.io/v1beta1",
      metadata: {},
      items: [
        {
          metricName: "mds_role_constrained_replicas",
          metricLabels: { scaler: "chat", target: "chat", role: "server" },
          timestamp: "2026-11-30T08:00:05Z",
          value: "3",
        },
      ],
    });
  });

  it("serves raw recommendation, demand in tokens per second and current replicas", async () => {
    expect((await read("mds_role_recommended_replicas", "scaler=chat")).list.items[0]?.value).toBe("4");
    const demand = (await read("mds_role_demand_tokens_per_second", "scaler=chat")).list.items[0];
    expect(demand?.value).toBe("2500500m");
    expect(demand?.metricLabels).toMatchObject({ window: "stable" });
    expect((await read("mds_role_current_replicas", "scaler=chat")).list.items[0]?.value).toBe("2");
  });

  it("lists every scaler of the namespace, and only that namespace, without a selector", async () => {
    const { list } = await read("mds_role_constrained_replicas");
    expect(list.items.map((i) => [i.metricLabels["scaler"], i.value])).toEqual([
      ["chat", "3"],
      ["other", "5"],
    ]);
  });

  it("answers an empty list, not an error, when the selector matches nothing", async () => {
    expect((await read("mds_role_constrained_replicas", "scaler=nobody")).list.items).toEqual([]);
    expect((await read("mds_role_constrained_replicas", "role in (decode)")).list.items).toEqual([]);
  });

  it("reports every value missing when no leader renews the Lease", async () => {
    const { list, omitted } = await read("mds_role_constrained_replicas", "", false);
    expect(list.items).toEqual([]);
    expect(omitted.map((o) => o.why)).toEqual(["NoLeader", "NoLeader"]);
  });

  it("reports a suspended, unbound or conflict-blocked scaler missing, and keeps the others", async () => {
    const mixed = new FakeScalerReader([
      plannedScaler({ namespace: "ns", name: "paused", constrained: 2, suspend: true }),
      plannedScaler({
        namespace: "ns",
        name: "second",
        constrained: 2,
        conditions: [{ type: "Bound", status: "False", reason: "AlreadyBound" }],
      }),
      plannedScaler({
        namespace: "ns",
        name: "conflict",
        constrained: 2,
        conditions: [
          { type: "Bound", status: "True", reason: "Bound" },
          { type: "Blocked", status: "True", reason: "BoundsConflict" },
        ],
      }),
      plannedScaler({ namespace: "ns", name: "fine", constrained: 6 }),
    ]);
    const { list, omitted } = await readExternalMetric({
      reader: mixed,
      namespace: "ns",
      metric: metric("mds_role_constrained_replicas"),
      selector: [],
      leaderRenewing: true,
    });
    expect(list.items.map((i) => i.metricLabels["scaler"])).toEqual(["fine"]);
    expect(omitted).toEqual([
      { scaler: "paused", why: "Suspended" },
      { scaler: "second", why: "Unbound" },
      { scaler: "conflict", why: "BlockedByConflict" },
    ]);
  });

  it("leaves out a figure the status does not hold: unknown is never zero", async () => {
    const unplanned = new FakeScalerReader([plannedScaler({ namespace: "ns", name: "new" })]);
    const answer = await readExternalMetric({
      reader: unplanned,
      namespace: "ns",
      metric: metric("mds_role_constrained_replicas"),
      selector: [],
      leaderRenewing: true,
    });
    expect(answer.list.items).toEqual([]);
  });

  it("has a non-empty catalogue with unique names", () => {
    expect(externalMetrics.length).toBeGreaterThan(0);
    expect(new Set(externalMetrics.map((m) => m.name)).size).toBe(externalMetrics.length);
  });
});
