# Sourced by tools/kube-bin/build.sh and tools/prom-bin/build.sh: what both
# builds from the Go module proxy share. The caller sets `here` (its own folder,
# holding versions.env) before sourcing this file, and defines `log` before calling need_go.

# versions.env is shared with the TypeScript harness, so read plain KEY=VALUE
# lines rather than sourcing it as shell.
read_version() {
  local value
  value=$(sed -n "s/^$1=\\([^[:space:]#]*\\).*/\\1/p" "$here/versions.env" | tail -n 1)
  if [[ -z $value ]]; then
    echo "build.sh: $1 missing from $here/versions.env" >&2
    exit 1
  fi
  printf '%s' "$value"
}

if command -v go >/dev/null 2>&1; then
  GO=${GO:-go}
else
  GO=${GO:-/usr/local/go/bin/go}
fi

need_go() {
  if ! "$GO" version >/dev/null 2>&1; then
    log "no Go toolchain at '$GO' (the build needs Go 1.26 and the Go module proxy); set GO=/path/to/go"
    exit 1
  fi
}

# Never let go switch toolchains or pick up a workspace; no cgo so the binaries
# do not depend on the machine's libc. Two compile jobs at most, at low
# priority: the machine has two cores and is shared.
export GOTOOLCHAIN=local GOWORK=off CGO_ENABLED=0
build_flags="-p=2 -buildvcs=false"
