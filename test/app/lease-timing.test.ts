import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/app/config.js";

const base = ["--prometheus-url=http://127.0.0.1:9090"];

function problems(argv: readonly string[], env: Record<string, string> = {}): string[] {
  try {
    loadConfig([...base, ...argv], env);
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return [...error.problems];
    throw error;
  }
}

describe("lease timing (at most one writer)", () => {
  it("the defaults fit: renew deadline plus call timeout within the lease", () => {
    const config = loadConfig([...base, "--lease-name=mds"], {});
    expect(config.leaseRenewDeadlineMs + config.kubeTimeoutMs).toBeLessThan(config.leaseDurationSeconds * 1000);
    expect(config.leaseRetryMs).toBeLessThan(config.leaseRenewDeadlineMs);
  });

  it("refuses a deadline that leaves a write no time to land, naming each flag and value", () => {
    const found = problems(["--lease-name=mds", "--lease-duration-seconds=15", "--lease-renew-deadline-ms=10000"]);
    expect(found).toHaveLength(1);
    expect(found[0]).toContain("--lease-renew-deadline-ms (MDS_LEASE_RENEW_DEADLINE_MS) = 10000");
    expect(found[0]).toContain("--kube-timeout-ms (MDS_KUBE_TIMEOUT_MS) = 10000 (default)");
    expect(found[0]).toContain("--lease-duration-seconds (MDS_LEASE_DURATION_SECONDS) = 15");
  });

  it("the boundary is strict: deadline + timeout equal to the lease is refused", () => {
    const at = ["--lease-name=mds", "--lease-duration-seconds=3", "--kube-timeout-ms=1000"];
    expect(problems([...at, "--lease-renew-deadline-ms=2000", "--lease-retry-ms=300"])).toHaveLength(1);
    expect(problems([...at, "--lease-renew-deadline-ms=1999", "--lease-retry-ms=300"])).toEqual([]);
  });

  it("refuses a retry period that cannot renew before the deadline, from variables too", () => {
    const found = problems([], {
      MDS_LEASE_NAME: "mds",
      MDS_LEASE_RETRY_MS: "8000",
      MDS_LEASE_RENEW_DEADLINE_MS: "8000",
    });
    expect(found).toEqual([expect.stringContaining("--lease-retry-ms (MDS_LEASE_RETRY_MS) = 8000 must be less than")]);
  });

  it("without a Lease there is one writer by construction, and no timing to check", () => {
    expect(problems(["--lease-duration-seconds=1", "--lease-renew-deadline-ms=5000"])).toEqual([]);
  });
});
