/**
 * Pieces of the recovery and commit phases that status depends on directly:
 * what a cancelled rebalance transaction leaves behind, and vector equality.
 */
import { describe, expect, it } from "vitest";
import { sameVector } from "../../../src/core/planner/commit.js";
import { withoutTransaction } from "../../../src/core/planner/recovery.js";

describe("withoutTransaction", () => {
  it("drops the donor, the targets and the start; keeps the receiver and the episode; marks the attempt", () => {
    const inFlight = {
      receiverRole: "d",
      donorRole: "p",
      donorTargetReplicas: 3,
      receiverTargetReplicas: 5,
      startedAt: "2026-11-30T10:00:00Z",
      exhaustionEpisodeGeneration: 4,
      donationAttempted: false,
      reason: "DonorRelease",
    };
    expect(withoutTransaction(inFlight, "RebalanceBlocked")).toStrictEqual({
      receiverRole: "d",
      exhaustionEpisodeGeneration: 4,
      donationAttempted: true,
      reason: "RebalanceBlocked",
    });
  });

  it("writes no receiver or episode fields the record did not have", () => {
    expect(withoutTransaction({ donorRole: "p" }, "DonationAttempted")).toStrictEqual({
      donationAttempted: true,
      reason: "DonationAttempted",
    });
  });
});

describe("sameVector", () => {
  it.each([
    { a: { p: 1, d: 2 }, b: { d: 2, p: 1 }, same: true },
    { a: { p: 1, d: 2 }, b: { p: 1, d: 3 }, same: false },
    { a: { p: 1 }, b: { p: 1, d: 0 }, same: false },
    { a: { p: 1, d: 0 }, b: { p: 1 }, same: false },
    { a: {}, b: {}, same: true },
  ])("$a and $b: $same", ({ a, b, same }) => {
    expect(sameVector(a, b)).toBe(same);
  });
});
