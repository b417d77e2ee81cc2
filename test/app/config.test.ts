/**
 * Configuration first: every problem a setting can have is found by `loadConfig`, which reads flags
 * and variables only, so the controller stops with it (exit 2) before any network call. Each problem
 * names the flag, its variable and the value.
 */
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

describe("controller configuration", () => {
  it.each([
    [["--label-pod", "__name__"], '--label-pod (MDS_LABEL_POD) = "__name__": names starting with __'],
    [["--label-role=__meta_kubernetes_pod_label_role"], "--label-role (MDS_LABEL_ROLE) = "],
    [
      ["--label-deployment=mds_owner"],
      '--label-deployment (MDS_LABEL_DEPLOYMENT) = "mds_owner": names starting with mds_',
    ],
    [
      ["--label-namespace=kube-namespace"],
      '--label-namespace (MDS_LABEL_NAMESPACE) = "kube-namespace": must be a Prometheus label name',
    ],
    [["--metric-separator=."], "--metric-separator (MDS_METRIC_SEPARATOR) = \".\": must be ':' or '_'"],
    [["--prometheus-timeout-ms=5s"], '--prometheus-timeout-ms (MDS_PROMETHEUS_TIMEOUT_MS) = "5s"'],
    [["--lease-duration-seconds=0"], '--lease-duration-seconds (MDS_LEASE_DURATION_SECONDS) = "0"'],
    [["--metrics-address=8080"], '--metrics-address (MDS_METRICS_ADDRESS) = "8080": must be host:port'],
    [["--prometheus-url=prometheus:9090"], '--prometheus-url (MDS_PROMETHEUS_URL) = "prometheus:9090"'],
  ])("refuses %j naming the flag, the variable and the value", (argv, want) => {
    const found = problems(argv);
    expect(found).toEqual([expect.stringContaining(want)]);
  });

  it("finds a label problem given by variable as well", () => {
    expect(problems([], { MDS_LABEL_POD: "__name__" })).toEqual([
      expect.stringContaining('--label-pod (MDS_LABEL_POD) = "__name__"'),
    ]);
  });

  it("refuses two settings of the label mapping on one label", () => {
    expect(problems(["--label-role=pod"])).toEqual([
      expect.stringMatching(
        /^--label-role \(MDS_LABEL_ROLE\) = pod is also --label-pod \(MDS_LABEL_POD\) = pod \(default\)/,
      ),
    ]);
  });

  it("refuses a malformed --prometheus-matchers, and a matcher on a label of the mapping", () => {
    expect(problems(["--prometheus-matchers=cluster=prod"])).toEqual([
      expect.stringContaining(
        '--prometheus-matchers (MDS_PROMETHEUS_MATCHERS) = "cluster=prod": cluster=prod: the value must be double-quoted',
      ),
    ]);
    expect(problems([], { MDS_PROMETHEUS_MATCHERS: 'cluster="a",app_kubernetes_io_component="decode"' })).toEqual([
      expect.stringContaining(
        '--prometheus-matchers (MDS_PROMETHEUS_MATCHERS) = cluster="a",app_kubernetes_io_component="decode": app_kubernetes_io_component is the role label',
      ),
    ]);
    expect(problems(['--prometheus-matchers=cluster="prod-eu"'])).toEqual([]);
  });

  it("refuses an HTTPS server without a certificate source or host", () => {
    expect(problems(["--webhook-address=:8443"])).toEqual([
      expect.stringContaining("neither --webhook-tls-secret (MDS_WEBHOOK_TLS_SECRET) nor --webhook-cert-dir"),
    ]);
    expect(problems(["--external-metrics-address=:6443", "--webhook-tls-secret=tls"])).toEqual([
      expect.stringContaining("--webhook-service (MDS_WEBHOOK_SERVICE) or --webhook-cert-hosts"),
    ]);
    expect(problems(["--webhook-address=:8443", "--webhook-cert-dir=/certs"])).toEqual([]);
  });

  it("refuses unknown flags and flags without a value, naming them", () => {
    expect(problems(["--metric-name-separator=_"])).toEqual([expect.stringContaining("--metric-name-separator")]);
    expect(problems(["--label-pod"])).toEqual([expect.stringContaining("--label-pod")]);
  });

  it("collects every problem of one start at once", () => {
    expect(problems(["--label-pod=__name__", "--tick-ms=0", "--log-level=loud"])).toHaveLength(3);
  });

  it("flags win over variables; variables over defaults", () => {
    const config = loadConfig([...base, "--label-pod=pod_name"], {
      MDS_LABEL_POD: "kubernetes_pod",
      MDS_LABEL_ROLE: "component",
    });
    expect(config.podLabel).toBe("pod_name");
    expect(config.roleLabel).toBe("component");
    expect(config.namespaceLabel).toBe("namespace");
    expect(config.prometheusTimeoutMs).toBe(5_000);
  });
});

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
