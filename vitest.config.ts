import { defineConfig } from "vitest/config";

// Integration tests start real servers (Prometheus, kube-apiserver, etcd); keep
// files parallel but bounded so a 2-core machine is not oversubscribed.
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 180_000,
    maxWorkers: 2,
    reporters: ["default"],
  },
});
