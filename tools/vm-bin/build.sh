#!/usr/bin/env bash
# Builds VictoriaMetrics single-node (app/victoria-metrics) for the backend
# tests, from the Go module proxy only, and caches it under a directory named
# after its version.
#
#   tools/vm-bin/build.sh                   build if the cache is empty; print the directory
#   tools/vm-bin/build.sh --print-dir       print the directory, build nothing
#   tools/vm-bin/build.sh --update-modules  regenerate victoria-metrics/go.mod + go.sum from
#                                           versions.env (needs the network; commit the result)
#
# Progress goes to stderr; the last line on stdout is the binary's directory.
# MDS_VM_BIN_DIR, when set, overrides the cache directory (the test harness
# honours the same variable).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../go-build-common.sh
source "$here/../go-build-common.sh"

VICTORIA_METRICS_VERSION=$(read_version VICTORIA_METRICS_VERSION)
module=github.com/VictoriaMetrics/VictoriaMetrics
cache_root=${XDG_CACHE_HOME:-$HOME/.cache}/mds-scaler/vm-bin
bin_dir=${MDS_VM_BIN_DIR:-$cache_root/victoria-metrics-${VICTORIA_METRICS_VERSION}}
stamp="victoria-metrics=$VICTORIA_METRICS_VERSION"

log() { echo "vm-bin: $*" >&2; }

# A wrapper module that requires the release as a tool: upstream's go.mod has
# no replace lines, so its requirements carry over unchanged.
update_modules() {
  need_go
  log "regenerating the wrapper module for $stamp"
  local upstream_mod
  upstream_mod=$("$GO" mod download -json "$module@$VICTORIA_METRICS_VERSION" |
    sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
  [[ -f $upstream_mod ]] || { log "no go.mod for $module at $VICTORIA_METRICS_VERSION"; exit 1; }
  if grep -q '^replace' "$upstream_mod"; then
    log "$module $VICTORIA_METRICS_VERSION has replace lines: copy them into victoria-metrics/go.mod by hand"
    exit 1
  fi
  (
    cd "$here/victoria-metrics"
    rm -f go.mod go.sum
    printf 'module mds-scaler.invalid/vm-bin/victoria-metrics\n\n%s\n' "$(grep -E '^go [0-9]' "$upstream_mod" | head -n 1)" >go.mod
    GOFLAGS="-mod=mod $build_flags" "$GO" get -tool "$module/app/victoria-metrics@$VICTORIA_METRICS_VERSION"
    GOFLAGS="-mod=mod $build_flags" "$GO" mod tidy
  )
  log "done; review and commit tools/vm-bin/victoria-metrics/go.{mod,sum}"
}

is_built() {
  [[ -x $bin_dir/victoria-metrics && -f $bin_dir/VERSIONS ]] && [[ $(cat "$bin_dir/VERSIONS") == "$stamp" ]]
}

build() {
  claim_build || return 0
  # The version stamp upstream's release builds set, so `-version` and vm_app_version are truthful.
  build_program "$here/victoria-metrics" victoria-metrics "$module/app/victoria-metrics" \
    "-s -w -X github.com/VictoriaMetrics/VictoriaMetrics/lib/buildinfo.Version=victoria-metrics-${VICTORIA_METRICS_VERSION}"
}

build_script_main "$@"
