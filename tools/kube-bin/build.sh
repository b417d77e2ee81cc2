#!/usr/bin/env bash
# Builds kube-apiserver, kube-controller-manager and etcd for the integration
# tests, from the Go module proxy only, and caches them under a directory named
# after their versions.
#
#   tools/kube-bin/build.sh                   build if the cache is empty; print the directory
#   tools/kube-bin/build.sh --print-dir       print the directory, build nothing
#   tools/kube-bin/build.sh --update-modules  regenerate apiserver/ and etcd/ go.mod + go.sum
#                                             from versions.env (needs the network; commit the result)
#
# Progress goes to stderr; the last line on stdout is the binaries' directory,
# so CI can do: export MDS_KUBE_BIN_DIR="$(tools/kube-bin/build.sh)".
# MDS_KUBE_BIN_DIR, when set, overrides the cache directory (the test harness
# honours the same variable).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../go-build-common.sh
source "$here/../go-build-common.sh"

K8S_VERSION=$(read_version K8S_VERSION)
ETCD_VERSION=$(read_version ETCD_VERSION)
# Staging modules (k8s.io/api, ...) are tagged v0.X.Y for Kubernetes v1.X.Y.
STAGING_VERSION=v0${K8S_VERSION#v1}

cache_root=${XDG_CACHE_HOME:-$HOME/.cache}/mds-scaler/kube-bin
bin_dir=${MDS_KUBE_BIN_DIR:-$cache_root/k8s-${K8S_VERSION}_etcd-${ETCD_VERSION}}
# The programs are part of the stamp: a cache built before one was added
# (kube-controller-manager) is rebuilt, not taken as complete.
programs="kube-apiserver kube-controller-manager etcd"
stamp="k8s=$K8S_VERSION etcd=$ETCD_VERSION programs=${programs// /,}"

log() { echo "kube-bin: $*" >&2; }

update_modules() {
  need_go
  log "regenerating wrapper modules for $stamp"
  local upstream_mod
  upstream_mod=$("$GO" mod download -json "k8s.io/kubernetes@$K8S_VERSION" |
    sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
  [[ -f $upstream_mod ]] || { log "no go.mod for k8s.io/kubernetes@$K8S_VERSION"; exit 1; }
  local go_line
  go_line=$(grep -E '^go [0-9]' "$upstream_mod" | head -n 1)

  # k8s.io/kubernetes requires its staging modules at v0.0.0 and replaces them
  # with paths inside its own repository; replace directives only apply in the
  # main module, so point each one at its published tag instead. The list is
  # read from upstream go.mod so it follows new and removed staging modules.
  (
    cd "$here/apiserver"
    rm -f go.mod go.sum
    printf 'module mds-scaler.invalid/kube-bin/apiserver\n\n%s\n' "$go_line" >go.mod
    # Keep upstream's GODEBUG defaults, which its release binaries are built with.
    grep -E '^godebug ' "$upstream_mod" >>go.mod || true
    {
      echo
      echo 'replace ('
      awk -v v="$STAGING_VERSION" '$1 ~ /^k8s\.io\// && $2 == "v0.0.0" { print "\t" $1 " => " $1 " " v }' "$upstream_mod"
      echo ')'
    } >>go.mod
    GOFLAGS="-mod=mod $build_flags" "$GO" get -tool "k8s.io/kubernetes/cmd/kube-apiserver@$K8S_VERSION" \
      "k8s.io/kubernetes/cmd/kube-controller-manager@$K8S_VERSION"
    GOFLAGS="-mod=mod $build_flags" "$GO" mod tidy
  )

  local etcd_mod
  etcd_mod=$("$GO" mod download -json "go.etcd.io/etcd/server/v3@$ETCD_VERSION" |
    sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
  (
    cd "$here/etcd"
    rm -f go.mod go.sum
    printf 'module mds-scaler.invalid/kube-bin/etcd\n\n%s\n' "$(grep -E '^go [0-9]' "$etcd_mod" | head -n 1)" >go.mod
    # The etcd server module's root package is etcd's main; a tool directive
    # keeps it required after tidy.
    GOFLAGS="-mod=mod $build_flags" "$GO" get -tool "go.etcd.io/etcd/server/v3@$ETCD_VERSION"
    GOFLAGS="-mod=mod $build_flags" "$GO" mod tidy
  )
  log "done; review and commit tools/kube-bin/{apiserver,etcd}/go.{mod,sum}"
}

is_built() {
  local program
  for program in $programs; do [[ -x $bin_dir/$program ]] || return 1; done
  [[ -f $bin_dir/VERSIONS && $(cat "$bin_dir/VERSIONS") == "$stamp" ]]
}

build() {
  claim_build || return 0

  need_go
  local started=$SECONDS
  work=$(mktemp -d "$bin_dir/.build.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  log "building $stamp into $bin_dir (cold on 2 cores: see tools/setup.sh; each program says when it is built)"

  # Same version stamping as upstream release builds, so /version is truthful
  # and the server's compatibility version matches its minor release.
  local minor
  minor=$(echo "$K8S_VERSION" | cut -d. -f2)
  local ldflags="-s -w" pkg
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags+=" -X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
    ldflags+=" -X $pkg.gitTreeState=clean"
  done

  (
    cd "$here/apiserver"
    GOFLAGS="-mod=readonly $build_flags" nice -n 10 "$GO" build -trimpath -tags=selinux,notest \
      -ldflags "$ldflags" -o "$work/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver
  )
  log "kube-apiserver built after $((SECONDS - started)) s"
  # The same wrapper module and build cache: only the controllers' own packages are new.
  (
    cd "$here/apiserver"
    GOFLAGS="-mod=readonly $build_flags" nice -n 10 "$GO" build -trimpath -tags=selinux,notest \
      -ldflags "$ldflags" -o "$work/kube-controller-manager" k8s.io/kubernetes/cmd/kube-controller-manager
  )
  log "kube-controller-manager built after $((SECONDS - started)) s"
  (
    cd "$here/etcd"
    GOFLAGS="-mod=readonly $build_flags" nice -n 10 "$GO" build -trimpath \
      -ldflags "-s -w" -o "$work/etcd" go.etcd.io/etcd/server/v3
  )
  log "etcd built after $((SECONDS - started)) s"

  # The stamp is removed first and written last: a build cut short is never
  # taken as complete.
  rm -f "$bin_dir/VERSIONS"
  mv -f "$work/kube-apiserver" "$work/kube-controller-manager" "$work/etcd" "$bin_dir/"
  echo "$stamp" >"$bin_dir/VERSIONS"
  log "built in $((SECONDS - started)) s: $bin_dir"
  echo "$bin_dir"
}

build_script_main "$@"
