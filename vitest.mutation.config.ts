import { defineConfig } from "vitest/config";

// Mutation testing (`npm run test:mutation`) runs the pure core's unit tests only: they need no
// servers. Stryker's Vitest runner runs them in process, only the tests that cover each mutant.
export default defineConfig({
  test: {
    include: [process.env.MUTATION_TESTS ?? "test/core/**/*.test.ts"],
    testTimeout: 30_000,
    maxWorkers: 1,
    reporters: ["default"],
  },
});
