import { describe, expect, it } from "vitest";
import type { ModelDeployment } from "../../../src/core/api/model-deployment.js";
import {
  chooseDonation,
  donorReleased,
  seekingDonor,
  stepViolation,
  transactionInFlight,
  type DonationInput,
  type RebalanceRole,
} from "../../../src/core/planner/rebalance.js";

const roles: RebalanceRole[] = [
  { name: "prefill", instanceType: "h100", currentReplicas: 2, recommendedReplicas: 4 },
  { name: "decode", instanceType: "h100", currentReplicas: 4, recommendedReplicas: 3 },
  { name: "encode", instanceType: "l4", currentReplicas: 2, recommendedReplicas: 1 },
];
const bounds = new Map([
  ["prefill", { min: 1, max: 8 }],
  ["decode", { min: 1, max: 8 }],
  ["encode", { min: 1, max: 8 }],
]);
const base: DonationInput = {
  policy: "Opposing",
  priority: undefined,
  receiver: "prefill",
  roles,
  bounds,
  bands: [],
  current: { prefill: 2, decode: 4, encode: 2 },
  donationAttempted: false,
};
const withRole = (name: string, patch: Partial<RebalanceRole>): RebalanceRole[] =>
  roles.map((r) => (r.name === name ? { ...r, ...patch } : r));

describe("chooseDonation", () => {
  it.each([
    {
      why: "Opposing: a shrinking role on the same pool donates",
      input: {},
      want: { kind: "Donate", donor: "decode" },
    },
    {
      why: "Opposing: a holding role does not",
      input: { roles: withRole("decode", { recommendedReplicas: 4 }) },
      want: { kind: "NotApplicable" },
    },
    {
      why: "pools differ",
      input: { roles: withRole("decode", { instanceType: "a100" }) },
      want: { kind: "NotApplicable" },
    },
    {
      why: "an empty instanceType never matches",
      input: { roles: withRole("prefill", { instanceType: "" }) },
      want: { kind: "NotApplicable" },
    },
    {
      why: "the donor must stay above its minimum",
      input: { bounds: new Map([...bounds, ["decode", { min: 4, max: 8 }]]) },
      want: { kind: "NotApplicable" },
    },
    {
      why: "the receiver must fit its maximum",
      input: { bounds: new Map([...bounds, ["prefill", { min: 1, max: 2 }]]) },
      want: { kind: "Blocked", rebalanceReason: "RebalanceBlocked" },
    },
    {
      why: "an intermediate vector breaking a ratio blocks",
      input: { bands: [{ numerator: "prefill", denominator: "decode", min: 0.5 }] },
      // decode 3 with prefill 2 is fine, prefill 3 / decode 3 fine: allowed
      want: { kind: "Donate", donor: "decode" },
    },
    {
      why: "a ratio the donor step breaks blocks",
      input: { bands: [{ numerator: "decode", denominator: "encode", min: 2 }] },
      want: { kind: "Blocked", rebalanceReason: "RebalanceBlocked" },
    },
    {
      why: "Priority: a lower role donates even when holding",
      input: {
        policy: "Priority" as const,
        priority: ["prefill", "decode"],
        roles: withRole("decode", { recommendedReplicas: 4 }),
      },
      want: { kind: "Donate", donor: "decode" },
    },
    {
      why: "Priority: a higher role never donates",
      input: { policy: "Priority" as const, priority: ["decode", "prefill"] },
      want: { kind: "NotApplicable" },
    },
    {
      why: "Priority: unlisted receivers take nothing",
      input: { policy: "Priority" as const, priority: ["decode"] },
      want: { kind: "NotApplicable" },
    },
    {
      why: "Priority: one donation per episode",
      input: { policy: "Priority" as const, priority: ["prefill", "decode"], donationAttempted: true },
      want: { kind: "Blocked", rebalanceReason: "DonationAttempted" },
    },
    { why: "Disabled", input: { policy: "Disabled" as const }, want: { kind: "NotApplicable" } },
  ])("$why", ({ input, want }) => {
    expect(chooseDonation({ ...base, ...input })).toMatchObject(want);
  });

  it("returns both transaction vectors", () => {
    expect(chooseDonation(base)).toEqual({
      kind: "Donate",
      donor: "decode",
      donorVector: { prefill: 2, decode: 3, encode: 2 },
      receiverVector: { prefill: 3, decode: 3, encode: 2 },
    });
  });
});

describe("chooseDonation messages", () => {
  it.each([
    { input: { policy: "Disabled" as const }, message: "rebalance.policy is Disabled" },
    {
      input: { roles: withRole("prefill", { instanceType: undefined }) },
      message: "receiver prefill has no instanceType",
    },
    { input: { receiver: "nobody" }, message: "receiver nobody has no instanceType" },
    {
      input: { policy: "Priority" as const, priority: ["decode"] },
      message: "receiver prefill is not listed in rebalance.priority",
    },
    {
      input: { policy: "Priority" as const, priority: undefined },
      message: "receiver prefill is not listed in rebalance.priority",
    },
    {
      input: { roles: withRole("decode", { recommendedReplicas: 4 }) },
      message: "no role on instance type h100 can donate to prefill",
    },
    {
      input: { bounds: new Map([...bounds, ["prefill", { min: 1, max: 2 }]]) },
      message: "donor decode: prefill would have 3 replicas, outside [1, 2]",
    },
    {
      input: { bounds: new Map([...bounds, ["decode", { min: 4, max: 8 }]]) },
      message: "no role on instance type h100 can donate to prefill",
    },
    {
      input: { bands: [{ numerator: "decode", denominator: "encode", min: 2 }] },
      message: "donor decode: ratio decode/encode >= 2 would break",
    },
  ])("$message", ({ input, message }) => {
    expect(chooseDonation({ ...base, ...input })).toMatchObject({ message });
  });

  it("the first blocked donor names the block; a later acceptable donor still donates", () => {
    const three: RebalanceRole[] = [
      ...roles,
      { name: "spare", instanceType: "h100", currentReplicas: 3, recommendedReplicas: 1 },
    ];
    const choice = chooseDonation({
      ...base,
      roles: three,
      current: { ...base.current, spare: 3 },
      bounds: new Map([...bounds, ["decode", { min: 1, max: 8 }], ["spare", { min: 1, max: 8 }]]),
      bands: [{ numerator: "decode", denominator: "encode", min: 2 }],
    });
    expect(choice).toMatchObject({ kind: "Donate", donor: "spare" });
    const bothBlocked = chooseDonation({
      ...base,
      roles: three,
      current: { ...base.current, spare: 3 },
      bounds: new Map([...bounds, ["spare", { min: 1, max: 8 }], ["prefill", { min: 1, max: 2 }]]),
    });
    expect(bothBlocked).toStrictEqual({
      kind: "Blocked",
      rebalanceReason: "RebalanceBlocked",
      message: "donor decode: prefill would have 3 replicas, outside [1, 2]",
    });
  });

  it("a role without bounds never donates; Priority lets a donor without a recommendation give", () => {
    const noBounds = new Map([...bounds].filter(([name]) => name !== "decode"));
    expect(chooseDonation({ ...base, bounds: noBounds })).toMatchObject({ kind: "NotApplicable" });
    expect(
      chooseDonation({
        ...base,
        policy: "Priority",
        priority: ["prefill", "decode"],
        roles: withRole("decode", { recommendedReplicas: undefined }),
      }),
    ).toMatchObject({ kind: "Donate", donor: "decode" });
    expect(chooseDonation({ ...base, roles: withRole("decode", { recommendedReplicas: undefined }) })).toMatchObject({
      kind: "NotApplicable",
    });
    expect(
      chooseDonation({
        ...base,
        policy: "Priority",
        priority: ["prefill", "decode"],
        roles: withRole("decode", { recommendedReplicas: 5 }),
      }),
    ).toMatchObject({ kind: "NotApplicable" });
  });
});

describe("donation attempts", () => {
  it("only Priority keeps to one donation per episode; Opposing donates again", () => {
    expect(chooseDonation({ ...base, donationAttempted: true })).toMatchObject({ kind: "Donate", donor: "decode" });
  });
});

describe("stepViolation", () => {
  it("names a count below the minimum, above the maximum, or a broken band; accepts the rest", () => {
    expect(stepViolation({ prefill: 0, decode: 4, encode: 2 }, bounds, [])).toBe(
      "prefill would have 0 replicas, outside [1, 8]",
    );
    expect(stepViolation({ prefill: 9, decode: 4, encode: 2 }, bounds, [])).toBe(
      "prefill would have 9 replicas, outside [1, 8]",
    );
    expect(stepViolation({ prefill: 1, decode: 8, encode: 2 }, bounds, [])).toBeUndefined();
    expect(stepViolation({ prefill: 2, encode: 2 }, bounds, [])).toBe("decode would have 0 replicas, outside [1, 8]");
  });
});

describe("donorReleased", () => {
  const tx = { donorRole: "decode", donorTargetReplicas: 3 };
  const target = (retirement?: { state: string }) =>
    ({
      status: retirement === undefined ? {} : { retirement: { roleName: "decode", replicaOrdinal: 3, ...retirement } },
    }) as unknown as ModelDeployment;
  const statuses = (ready: number, quotaReserved: number) =>
    new Map([["decode", { name: "decode", desired: 3, ready, quotaReserved }]]);

  it.each([
    { why: "gone", retirement: undefined, ready: 3, reserved: 3, released: true },
    { why: "retirement completed", retirement: { state: "Completed" }, ready: 3, reserved: 3, released: true },
    { why: "retirement aborted", retirement: { state: "Aborted" }, ready: 3, reserved: 3, released: true },
    { why: "retirement draining", retirement: { state: "Draining" }, ready: 3, reserved: 3, released: false },
    { why: "still ready", retirement: undefined, ready: 4, reserved: 3, released: false },
    { why: "still reserved", retirement: undefined, ready: 3, reserved: 4, released: false },
  ])("$why: $released", ({ retirement, ready, reserved, released }) => {
    expect(donorReleased(tx, target(retirement), statuses(ready, reserved))).toBe(released);
  });

  it("a record without its donor or target, or a target without status, decides accordingly", () => {
    expect(donorReleased({ donorTargetReplicas: 3 }, target(), statuses(3, 3))).toBe(false);
    expect(donorReleased({ donorRole: "decode" }, target(), statuses(3, 3))).toBe(false);
    expect(donorReleased(tx, {} as ModelDeployment, new Map())).toBe(true);
    const cleared = { status: { retirement: null } } as unknown as ModelDeployment;
    expect(donorReleased(tx, cleared, statuses(3, 3))).toBe(true);
  });
});

describe("transaction phases", () => {
  it.each([
    { reason: "DonorRelease", inFlight: true, seeking: false },
    { reason: "ReceiverAcquire", inFlight: false, seeking: false },
    { reason: "ResourceExhausted", inFlight: false, seeking: true },
    { reason: "RebalanceNotApplicable", inFlight: false, seeking: true },
    { reason: "RebalanceBlocked", inFlight: false, seeking: true },
    { reason: "DonationAttempted", inFlight: false, seeking: true },
    { reason: undefined, inFlight: false, seeking: false },
  ])("$reason", ({ reason, inFlight, seeking }) => {
    const record = reason === undefined ? {} : { reason };
    expect(transactionInFlight(record)).toBe(inFlight);
    expect(seekingDonor(record)).toBe(seeking);
  });

  it("no record is neither", () => {
    expect(transactionInFlight(undefined)).toBe(false);
    expect(seekingDonor(undefined)).toBe(false);
  });
});
