import { describe, expect, it } from "vitest";
import { chooseDonation, type DonationInput, type RebalanceRole } from "../../../src/core/planner/rebalance.js";

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
