import { defineConfig } from "vitest/config";

// Mutation testing (`npm run test:mutation`) runs the pure core's unit tests only, one worker:
// they need no servers, and Stryker runs them once per mutant.
export default defineConfig({
  test: {
    include: [process.env.MUTATION_TESTS ?? "test/core/**/*.test.ts"],
    testTimeout: 30_000,
    maxWorkers: 1,
    reporters: ["default"],
  },
});
