import { describe, expect, it } from "vitest";
import type { RequestRecord } from "../../../src/sim/quality/cluster.js";
import { errorBudget, twelfthRunBudget } from "../../../src/sim/quality/policies/error-budget.js";
import { defaultSlo } from "../../../src/sim/quality/run.js";

const options = { ...twelfthRunBudget, slo: defaultSlo, prefillTokensPerSecond: 8000, goal: 0.99 };

/** A request of 800 prompt tokens (TTFT target 1.1 s) that ended, on time or late. */
function ended(id: number, late: boolean): RequestRecord {
  return {
    id,
    arrivalSeconds: id,
    promptTokens: 800,
    outputTokens: 10,
    firstTokenSeconds: id + (late ? 5 : 0.5),
    endSeconds: id + 6,
    meanItlSeconds: 0.02,
  };
}

describe("errorBudget (the twelfth run's measurement)", () => {
  it("holds the factor at 1 until enough requests have ended, then grows it to the cap while little is spent", () => {
    const budget = errorBudget(options);
    const records: RequestRecord[] = [];
    for (let i = 0; i < options.minSettledRequests - 1; i++) records.push(ended(i, false));
    expect(budget.factorAt(records)).toBe(1);
    records.push(ended(records.length, false));
    expect(budget.factorAt(records)).toBeCloseTo(options.stepFactor, 10);
    let factor = 1;
    for (let pass = 0; pass < 100; pass++) factor = budget.factorAt(records);
    expect(factor).toBe(options.maxFactor);
  });

  it("returns to 1 once half the budget is spent, and waits for requests that have not ended", () => {
    const budget = errorBudget(options);
    const records: RequestRecord[] = [];
    for (let i = 0; i < 2000; i++) records.push(ended(i, false));
    for (let pass = 0; pass < 20; pass++) budget.factorAt(records);
    // An unfinished request is not yet a miss.
    records.push({ id: 2000, arrivalSeconds: 2000, promptTokens: 800, outputTokens: 10 });
    expect(budget.factorAt(records)).toBeGreaterThan(1);
    // 11 late of 2,011 ended: 0.55 % missed, over half the 1 % budget.
    for (let i = 2001; i < 2012; i++) records.push(ended(i, true));
    expect(budget.factorAt(records)).toBe(1);
    expect(budget.notes()).toMatch(/1 resets/);
  });

  it("holds the factor between a quarter and half of the budget spent", () => {
    const budget = errorBudget(options);
    const records: RequestRecord[] = [];
    for (let i = 0; i < 1000; i++) records.push(ended(i, i % 300 === 0));
    // 4 late of 1,000: 0.4 % missed, 40 % of the budget.
    expect(budget.factorAt(records)).toBe(1);
    expect(budget.factorAt(records)).toBe(1);
  });
});
