#!/usr/bin/env bash
# Builds Prometheus 3, its promtool and the Prometheus Operator for the
# end-to-end tests, from the Go module proxy only, and caches them under a
# directory named after their versions.
#
#   tools/prom-bin/build.sh                   build if the cache is empty; print the directory
#   tools/prom-bin/build.sh --print-dir       print the directory, build nothing
#   tools/prom-bin/build.sh --update-modules  regenerate prometheus/ and operator/ go.mod + go.sum from
#                                             versions.env (needs the network; commit the result)
#
# Progress goes to stderr; the last line on stdout is the binaries' directory.
# MDS_PROM_BIN_DIR, when set, overrides the cache directory (the test harness
# honours the same variable). Debian's Prometheus 2.42 stays installed for the
# tests that use it; these binaries live only in the cache directory.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../go-build-common.sh
source "$here/../go-build-common.sh"

PROMETHEUS_VERSION=$(read_version PROMETHEUS_VERSION)
OPERATOR_VERSION=$(read_version OPERATOR_VERSION)
# Prometheus 3.X.Y is published as the Go module version v0.3XX.Y.
prom_minor=$(echo "$PROMETHEUS_VERSION" | cut -d. -f2)
prom_patch=$(echo "$PROMETHEUS_VERSION" | cut -d. -f3)
PROMETHEUS_MODULE_VERSION=$(printf 'v0.3%02d.%s' "$prom_minor" "$prom_patch")

cache_root=${XDG_CACHE_HOME:-$HOME/.cache}/mds-scaler/prom-bin
bin_dir=${MDS_PROM_BIN_DIR:-$cache_root/prometheus-${PROMETHEUS_VERSION}_operator-${OPERATOR_VERSION}}
stamp="prometheus=$PROMETHEUS_VERSION operator=$OPERATOR_VERSION"

log() { echo "prom-bin: $*" >&2; }

# Two wrapper modules: Prometheus pins the client-go its Kubernetes discovery
# compiles against, and the operator needs a newer one (it imports only
# Prometheus's configuration packages), so one module cannot hold both.
update_modules() {
  need_go
  log "regenerating the wrapper modules for $stamp (Prometheus module $PROMETHEUS_MODULE_VERSION)"
  local prom_mod op_mod
  prom_mod=$("$GO" mod download -json "github.com/prometheus/prometheus@$PROMETHEUS_MODULE_VERSION" |
    sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
  op_mod=$("$GO" mod download -json "github.com/prometheus-operator/prometheus-operator@$OPERATOR_VERSION" |
    sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
  [[ -f $prom_mod && -f $op_mod ]] || { log "no go.mod for Prometheus or the operator at these versions"; exit 1; }
  (
    cd "$here/prometheus"
    rm -f go.mod go.sum
    printf 'module mds-scaler.invalid/prom-bin/prometheus\n\n%s\n' "$(grep -E '^go [0-9]' "$prom_mod" | head -n 1)" >go.mod
    GOFLAGS="-mod=mod $build_flags" "$GO" get -tool \
      "github.com/prometheus/prometheus/cmd/prometheus@$PROMETHEUS_MODULE_VERSION" \
      "github.com/prometheus/prometheus/cmd/promtool@$PROMETHEUS_MODULE_VERSION"
    GOFLAGS="-mod=mod $build_flags" "$GO" mod tidy
  )
  (
    cd "$here/operator"
    rm -f go.mod go.sum
    printf 'module mds-scaler.invalid/prom-bin/operator\n\n%s\n' "$(grep -E '^go [0-9]' "$op_mod" | head -n 1)" >go.mod
    # The operator's go.mod replaces its two API submodules with directories of
    # its own repository; replace directives only apply in the main module, so
    # require the published submodules at the operator's version instead.
    GOFLAGS="-mod=mod $build_flags" "$GO" get \
      "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring@$OPERATOR_VERSION" \
      "github.com/prometheus-operator/prometheus-operator/pkg/client@$OPERATOR_VERSION"
    GOFLAGS="-mod=mod $build_flags" "$GO" get -tool \
      "github.com/prometheus-operator/prometheus-operator/cmd/operator@$OPERATOR_VERSION"
    GOFLAGS="-mod=mod $build_flags" "$GO" mod tidy
  )
  log "done; review and commit tools/prom-bin/{prometheus,operator}/go.{mod,sum}"
}

is_built() {
  [[ -x $bin_dir/prometheus && -x $bin_dir/promtool && -x $bin_dir/operator && -f $bin_dir/VERSIONS ]] &&
    [[ $(cat "$bin_dir/VERSIONS") == "$stamp" ]]
}

# The operator's CustomResourceDefinitions, from the same module version as the
# binary, for the test API server. Cheap, so it also fills in a cache built
# before this step existed.
copy_crds() {
  [[ -f $bin_dir/crds/VERSIONS && $(cat "$bin_dir/crds/VERSIONS") == "$stamp" ]] && return
  need_go
  local src
  src=$(cd "$here/operator" && GOFLAGS=-mod=readonly "$GO" mod download -json \
    "github.com/prometheus-operator/prometheus-operator@$OPERATOR_VERSION" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
  [[ -d $src/example/prometheus-operator-crd ]] || { log "no CRDs in the operator module at '$src'"; exit 1; }
  mkdir -p "$bin_dir/crds"
  cp "$src"/example/prometheus-operator-crd/monitoring.coreos.com_*.yaml "$bin_dir/crds/"
  chmod u+w "$bin_dir"/crds/*.yaml
  echo "$stamp" >"$bin_dir/crds/VERSIONS"
}

build() {
  if ! claim_build; then
    copy_crds
    return 0
  fi

  need_go
  local started=$SECONDS
  work=$(mktemp -d "$bin_dir/.build.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  log "building $stamp into $bin_dir (cold on 2 cores: see tools/setup.sh; each program says when it is built)"

  # Version stamps as upstream release builds set them, so `--version` and the
  # build_info metrics are truthful.
  local v=github.com/prometheus/common/version
  local prom_ldflags="-s -w -X $v.Version=${PROMETHEUS_VERSION#v} -X $v.Branch=release -X $v.Revision=$PROMETHEUS_MODULE_VERSION"
  local op_ldflags="-s -w -X $v.Version=${OPERATOR_VERSION#v} -X $v.Branch=release -X $v.Revision=$OPERATOR_VERSION"
  (
    cd "$here/prometheus"
    # No builtinassets tag: the web UI is not needed, the HTTP API is.
    GOFLAGS="-mod=readonly $build_flags" nice -n 10 "$GO" build -trimpath -ldflags "$prom_ldflags" \
      -o "$work/prometheus" github.com/prometheus/prometheus/cmd/prometheus
    log "prometheus built after $((SECONDS - started)) s"
    GOFLAGS="-mod=readonly $build_flags" nice -n 10 "$GO" build -trimpath -ldflags "$prom_ldflags" \
      -o "$work/promtool" github.com/prometheus/prometheus/cmd/promtool
    log "promtool built after $((SECONDS - started)) s"
  )
  (
    cd "$here/operator"
    GOFLAGS="-mod=readonly $build_flags" nice -n 10 "$GO" build -trimpath -ldflags "$op_ldflags" \
      -o "$work/operator" github.com/prometheus-operator/prometheus-operator/cmd/operator
  )
  log "operator built after $((SECONDS - started)) s"

  # The stamp is removed first and written last: a build cut short is never
  # taken as complete.
  rm -f "$bin_dir/VERSIONS"
  mv -f "$work/prometheus" "$work/promtool" "$work/operator" "$bin_dir/"
  echo "$stamp" >"$bin_dir/VERSIONS"
  copy_crds
  log "built in $((SECONDS - started)) s: $bin_dir"
  echo "$bin_dir"
}

build_script_main "$@"
