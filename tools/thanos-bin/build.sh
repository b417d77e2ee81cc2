#!/usr/bin/env bash
# Builds Thanos (one binary: sidecar, query, ...) for the backend test, from the
# Go module proxy only, and caches it under a directory named after its version.
#
#   tools/thanos-bin/build.sh                   build if the cache is empty; print the directory
#   tools/thanos-bin/build.sh --print-dir       print the directory, build nothing
#   tools/thanos-bin/build.sh --update-modules  regenerate thanos/go.mod + go.sum from
#                                               versions.env (needs the network; commit the result)
#
# Progress goes to stderr; the last line on stdout is the binary's directory.
# MDS_THANOS_BIN_DIR, when set, overrides the cache directory (the test harness
# honours the same variable).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../go-build-common.sh
source "$here/../go-build-common.sh"

THANOS_VERSION=$(read_version THANOS_VERSION)
# The release asks for a newer Go than the machine's: the go command fetches this one from the proxy.
GOTOOLCHAIN=$(read_version THANOS_GO_TOOLCHAIN)
export GOTOOLCHAIN
module=github.com/thanos-io/thanos
cache_root=${XDG_CACHE_HOME:-$HOME/.cache}/mds-scaler/thanos-bin
bin_dir=${MDS_THANOS_BIN_DIR:-$cache_root/thanos-${THANOS_VERSION}}
stamp="thanos=$THANOS_VERSION tags=netgo,slicelabels"

log() { echo "thanos-bin: $*" >&2; }

# A wrapper module that requires the release as a tool. Replace directives only
# apply in the main module, so upstream's are copied into the wrapper's go.mod.
update_modules() {
  need_go
  log "regenerating the wrapper module for $stamp"
  local upstream_mod
  upstream_mod=$("$GO" mod download -json "$module@$THANOS_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
  [[ -f $upstream_mod ]] || { log "no go.mod for $module at $THANOS_VERSION"; exit 1; }
  (
    cd "$here/thanos"
    rm -f go.mod go.sum
    {
      printf 'module mds-scaler.invalid/thanos-bin/thanos\n\n%s\n\n' "$(grep -E '^go [0-9]' "$upstream_mod" | head -n 1)"
      sed -n '/^replace (/,/^)/p' "$upstream_mod"
    } >go.mod
    GOFLAGS="-mod=mod $build_flags" "$GO" get -tool "$module/cmd/thanos@$THANOS_VERSION"
    GOFLAGS="-mod=mod $build_flags" "$GO" mod tidy
  )
  log "done; review and commit tools/thanos-bin/thanos/go.{mod,sum}"
}

is_built() {
  [[ -x $bin_dir/thanos && -f $bin_dir/VERSIONS ]] && [[ $(cat "$bin_dir/VERSIONS") == "$stamp" ]]
}

build() {
  claim_build || return 0
  # The version stamp and the build tags of upstream's release builds (.promu.yml): without
  # slicelabels the store API's zero-copy labels do not match Prometheus' and the sidecar panics.
  local v=github.com/prometheus/common/version
  build_program "$here/thanos" thanos "$module/cmd/thanos" \
    "-s -w -X $v.Version=${THANOS_VERSION#v} -X $v.Branch=release -X $v.Revision=$THANOS_VERSION" \
    netgo,slicelabels
}

build_script_main "$@"
