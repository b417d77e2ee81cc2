#!/usr/bin/env bash
# Prepares a fresh Debian machine for the test suite and the demo: system packages
# the tests run for real (Prometheus, promtool, openssl; Chromium for the demo's page
# and the quality report; umoci and skopeo for the image), the npm dependencies (which
# bring Node 24), kube-apiserver, kube-controller-manager and etcd built from the Go
# module proxy, Prometheus 3, its promtool and the Prometheus Operator for the
# end-to-end stack test, VictoriaMetrics single-node and Thanos for the backend
# tests, built the same way (all cached, so a warm machine skips the builds), and the
# public traces (tools/fetch-traces.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

# Runs one step, saying first what it took on a cold run of this machine's kind (2 cores, nothing cached,
# measured on 2026-12-02 with nothing else running, load average 2.5 to 3.3, and on 2026-12-06 with little else
# running during the builds) and then what it took here.
# A warm cache (~/.cache/mds-scaler) skips the builds: each then takes seconds.
kube_cold="6.5–12.5 min for the three"
prom_cold="6–10 min for the three"
# After the builds above, which leave the modules and packages it shares in the Go caches.
vm_cold="20–35 s"
# With the release's build tags (netgo, slicelabels) and the Go 1.27.3 toolchain to fetch; peak memory 1.3 GB.
# Alone with empty caches, beside other work at load average 6.5 to 11.9, it took 24 min.
thanos_cold="3.5–6.5 min: the Go 1.27.3 toolchain, the modules and the build"
traces_cold="seconds when ../shared/traces holds them (a checksum check); a download of the missing files otherwise, not measured cold"
step() {
  local name=$1 cold=$2
  shift 2
  echo "setup: $name (cold on 2 cores: $cold)"
  local started=$SECONDS
  "$@"
  echo "setup: $name took $((SECONDS - started)) s"
}

missing=()
command -v prometheus >/dev/null 2>&1 || missing+=(prometheus)
command -v promtool >/dev/null 2>&1 || missing+=(prometheus)
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
command -v unzip >/dev/null 2>&1 || missing+=(unzip)
command -v curl >/dev/null 2>&1 || missing+=(curl)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v umoci >/dev/null 2>&1 || missing+=(umoci)
command -v skopeo >/dev/null 2>&1 || missing+=(skopeo)
install_packages() {
  apt-get update -qq
  # policy-rc.d keeps Debian from starting a system Prometheus: tests run their own.
  printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  rm -f /usr/sbin/policy-rc.d
}
if ((${#missing[@]} > 0)); then
  step "installing ${missing[*]}" "about 30 s" install_packages
fi

step "npm ci" "about 35 s" npm ci --no-audit --no-fund

if [[ -x tools/kube-bin/build.sh ]]; then
  step "kube-apiserver, kube-controller-manager and etcd from the Go module proxy" "$kube_cold" \
    bash tools/kube-bin/build.sh
fi
if [[ -x tools/prom-bin/build.sh ]]; then
  step "Prometheus 3, promtool and the Prometheus Operator from the Go module proxy" "$prom_cold" \
    bash tools/prom-bin/build.sh
fi
if [[ -x tools/vm-bin/build.sh ]]; then
  step "VictoriaMetrics single-node from the Go module proxy" "$vm_cold" bash tools/vm-bin/build.sh
fi
if [[ -x tools/thanos-bin/build.sh ]]; then
  step "Thanos from the Go module proxy" "$thanos_cold" bash tools/thanos-bin/build.sh
fi
step "the public traces" "$traces_cold" bash tools/fetch-traces.sh
echo "setup: done in $SECONDS s (node $(node_modules/.bin/node --version))"
