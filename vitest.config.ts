import { defineConfig } from "vitest/config";

/**
 * Three projects, every test file in exactly one (unit is "everything else"):
 * - integration: files that start a real server or tool — kube-apiserver and etcd,
 *   Prometheus, promtool, helm/kubectl, Chromium, the image build;
 * - e2e: test/e2e, the controller and the demo against all of them at once;
 * - unit: the rest, which needs none of them (core, adapters, app, cli, sim, ...).
 * `npm run test:unit|test:integration|test:e2e` runs one; `npm test` runs all three.
 */
export const integrationTests = [
  "test/integration/**/*.test.ts",
  "test/chart/**/*.test.ts",
  "test/observability/**/*.test.ts",
  "test/image/**/*.test.ts",
  // The controller's start-up against a real API server.
  "test/app/startup.test.ts",
  // The controller's builders failing one by one, and SIGTERM, against a real API server.
  "test/app/start/controller.test.ts",
  // Bench TSDB blocks built by promtool and served by Prometheus 3.
  "test/tools/bench-tsdb.test.ts",
  // The prepared TSDB served as scrapes into a Prometheus 3 head, beside blocks built by promtool.
  "test/tools/prepared-scrapes.test.ts",
  // `mds-scaler observe` against a real Prometheus.
  "test/cli/observe.test.ts",
  // `mds-scaler simulate --report` rendered by headless Chromium.
  "test/cli/simulate.test.ts",
];
export const e2eTests = ["test/e2e/**/*.test.ts"];

// Integration tests start real servers (Prometheus, kube-apiserver, etcd); keep
// files parallel but bounded so a 2-core machine is not oversubscribed.
export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 180_000,
    maxWorkers: 2,
    reporters: ["default"],
    projects: [
      {
        extends: true,
        test: { name: "unit", include: ["test/**/*.test.ts"], exclude: [...integrationTests, ...e2eTests] },
      },
      { extends: true, test: { name: "integration", include: integrationTests } },
      { extends: true, test: { name: "e2e", include: e2eTests } },
    ],
  },
});
