#!/usr/bin/env bash
# Prepares a fresh Debian machine for the test suite and the demo: system packages
# the tests run for real (Prometheus, promtool, openssl; Chromium for the demo's page
# and the quality report; umoci and skopeo for the image), the npm dependencies (which
# bring Node 24), kube-apiserver, kube-controller-manager and etcd built from the Go
# module proxy, Prometheus 3, its promtool and the Prometheus Operator for the
# end-to-end stack test, built the same way (all cached, so a warm machine skips the
# builds), and the public traces (tools/fetch-traces.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
command -v prometheus >/dev/null 2>&1 || missing+=(prometheus)
command -v promtool >/dev/null 2>&1 || missing+=(prometheus)
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
command -v unzip >/dev/null 2>&1 || missing+=(unzip)
command -v curl >/dev/null 2>&1 || missing+=(curl)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v umoci >/dev/null 2>&1 || missing+=(umoci)
command -v skopeo >/dev/null 2>&1 || missing+=(skopeo)
if ((${#missing[@]} > 0)); then
  echo "setup: installing ${missing[*]}"
  apt-get update -qq
  # policy-rc.d keeps Debian from starting a system Prometheus: tests run their own.
  printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  rm -f /usr/sbin/policy-rc.d
fi

echo "setup: npm ci"
npm ci --no-audit --no-fund

if [[ -x tools/kube-bin/build.sh ]]; then
  bash tools/kube-bin/build.sh
fi
if [[ -x tools/prom-bin/build.sh ]]; then
  bash tools/prom-bin/build.sh
fi
bash tools/fetch-traces.sh
echo "setup: done (node $(node_modules/.bin/node --version))"
