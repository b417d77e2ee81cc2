#!/usr/bin/env bash
# Builds nhcb-twin (main.go: a TSDB's classic histograms rewritten as native
# histograms with custom buckets) from the Go module proxy only, and caches it
# under a directory named after a hash of its source, go.mod, go.sum and the Go
# version. Used by bench/nhcb-tsdb.ts, never by CI.
#
#   bench/nhcb/build.sh                   build if the cache is empty; print the directory
#   bench/nhcb/build.sh --print-dir       print the directory, build nothing
#   bench/nhcb/build.sh --update-modules  regenerate go.mod + go.sum from the imports (needs the network; commit the result)
#
# Progress goes to stderr; the last line on stdout is the binary's directory.
# The Prometheus module is the one tools/prom-bin builds (v0.305.0 is Prometheus 3.5.0).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../../tools/go-build-common.sh
source "$here/../../tools/go-build-common.sh"

log() { echo "nhcb-twin: $*" >&2; }

need_go
stamp=$(cat "$here/main.go" "$here/go.mod" "$here/go.sum" <("$GO" env GOVERSION) | sha256sum | cut -c1-16)
cache_root=${XDG_CACHE_HOME:-$HOME/.cache}/mds-scaler/nhcb-twin
bin_dir=$cache_root/$stamp

is_built() {
  [[ -x $bin_dir/nhcb-twin && -f $bin_dir/VERSIONS ]] && [[ $(cat "$bin_dir/VERSIONS") == "$stamp" ]]
}

update_modules() {
  log "regenerating go.mod and go.sum from main.go's imports"
  (cd "$here" && GOFLAGS="-mod=mod $build_flags" "$GO" mod tidy)
  log "done; review and commit bench/nhcb/go.{mod,sum}"
}

build() {
  claim_build || return 0
  build_program "$here" nhcb-twin . "-s -w"
}

build_script_main "$@"
