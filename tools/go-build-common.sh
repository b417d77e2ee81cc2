# Sourced by tools/kube-bin/build.sh, tools/prom-bin/build.sh and tools/vm-bin/build.sh: what they
# build from the Go module proxy share. The caller sets `here` (its own folder,
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

# Whether the caller must build: returns 0 holding the build lock (fd 9) when its
# cache is incomplete; prints the directory and returns 1 when it is complete,
# at once or after another process's build. Two builds at once (two test runs on
# one machine) would only slow each other. The caller defines is_built, log,
# bin_dir and stamp.
claim_build() {
  if is_built; then
    log "cached: $bin_dir ($stamp)"
    echo "$bin_dir"
    return 1
  fi
  mkdir -p "$bin_dir"
  exec 9>"$bin_dir/.lock"
  if ! flock -n 9; then
    log "another build is running; waiting for it"
    flock 9
  fi
  if is_built; then
    log "built by another process: $bin_dir"
    echo "$bin_dir"
    return 1
  fi
}

# Builds one program of a wrapper module into the cache, as the last step of a
# caller that holds claim_build's lock: build_program <wrapper dir> <program> <package> <ldflags> [<tags>].
# The stamp is removed first and written last: a build cut short is never taken as complete.
build_program() {
  local module_dir=$1 program=$2 package=$3 ldflags=$4 tags=${5:-}
  need_go
  local started=$SECONDS work
  work=$(mktemp -d "$bin_dir/.build.XXXXXX")
  # shellcheck disable=SC2064 # expand now: the trap runs after this function's locals are gone.
  trap "rm -rf '$work'" EXIT
  log "building $stamp into $bin_dir with $("$GO" env GOVERSION) (cold on 2 cores: see tools/setup.sh)"
  (
    cd "$module_dir"
    GOFLAGS="-mod=readonly $build_flags" nice -n 10 "$GO" build -trimpath -tags "$tags" -ldflags "$ldflags" \
      -o "$work/$program" "$package"
  )
  rm -f "$bin_dir/VERSIONS"
  mv -f "$work/$program" "$bin_dir/"
  echo "$stamp" >"$bin_dir/VERSIONS"
  log "built in $((SECONDS - started)) s: $bin_dir"
  echo "$bin_dir"
}

# The command line every build script takes: build (the default), --print-dir or --update-modules.
# The script defines build and update_modules and sets bin_dir before calling it.
build_script_main() {
  case "${1:-}" in
    "") build ;;
    --print-dir) echo "$bin_dir" ;;
    --update-modules) update_modules ;;
    *)
      echo "usage: $0 [--print-dir | --update-modules]" >&2
      exit 2
      ;;
  esac
}
