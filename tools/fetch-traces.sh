#!/usr/bin/env bash
# Makes the public request traces available to the demo and the trace-replay tests in
# $MDS_TRACES_DIR (default: ../shared/traces beside the project). Every file listed in
# tools/traces/SHA256SUMS is checked against its recorded checksum; a file that is missing
# is taken from its upstream repository at the pinned commit (tools/traces/sources.tsv),
# checked, and only then put in place. A local copy that is complete and intact means no
# download at all. Nothing is ever kept that does not match its checksum.
#
# The files are checked with one sha256sum and fetched with one curl, whatever their number
# (434 today): a process per file cost a minute on a loaded machine.
#
#   MDS_TRACES_DIR        where the traces live (default ../shared/traces)
#   MDS_TRACES_BASE_URL   where upstream repositories are served as <owner>/<repo>/<commit>/<path>
#                         (default https://raw.githubusercontent.com; tests point it at a loopback mirror)
#   MDS_TRACES_ONLY       only the files whose path starts with this prefix, e.g. azure_llm_2023/
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
sums="$here/traces/SHA256SUMS"
sources="$here/traces/sources.tsv"
dir="$(realpath -m "${MDS_TRACES_DIR:-$root/../shared/traces}")"
base="${MDS_TRACES_BASE_URL:-https://raw.githubusercontent.com}"
base="${base%/}"
only="${MDS_TRACES_ONLY:-}"

for tool in curl sha256sum; do
  command -v "$tool" >/dev/null 2>&1 || {
    echo "fetch-traces: $tool is missing; run bash tools/setup.sh" >&2
    exit 1
  }
done

prefixes=()
upstreams=()
while IFS=$'\t' read -r prefix repo commit upstream; do
  [[ -z "$prefix" || "$prefix" == \#* ]] && continue
  prefixes+=("$prefix")
  upstreams+=("$base/$repo/$commit/$upstream")
done <"$sources"

# The upstream URL of a local path, from the first matching row of sources.tsv, in $url.
upstream_url() {
  local path="$1" i
  for i in "${!prefixes[@]}"; do
    if [[ "$path" == "${prefixes[i]}"* ]]; then
      url="${upstreams[i]}${path#"${prefixes[i]}"}"
      return 0
    fi
  done
  return 1
}

# The sha256 of each file given, into sum_of[file], one process for them all; a file
# sha256sum cannot read is left out (and reads as "-" below). -z keeps names unescaped.
declare -A sum_of=()
checksums() {
  (($# == 0)) && return 0
  local record
  while IFS= read -r -d '' record; do
    sum_of["${record#*  }"]="${record%%  *}"
  done < <(sha256sum -z -- "$@" 2>/dev/null || true)
}

mkdir -p "$dir" 2>/dev/null || true
present=0
fetched=0
failed=()
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

wanted_paths=()
wanted_sums=()
while read -r sum path; do
  [[ -z "$path" || "$path" != "$only"* ]] && continue
  wanted_paths+=("$path")
  wanted_sums+=("$sum")
done <"$sums"

# The local copies, checked together.
local_idx=()
local_files=()
for i in "${!wanted_paths[@]}"; do
  if [[ -f "$dir/${wanted_paths[i]}" ]]; then
    local_idx+=("$i")
    local_files+=("$dir/${wanted_paths[i]}")
  fi
done
checksums "${local_files[@]}"
declare -A is_local=()
for k in "${!local_idx[@]}"; do
  i="${local_idx[k]}"
  is_local[$i]=1
  actual="${sum_of[${local_files[k]}]:--}"
  if [[ "$actual" == "${wanted_sums[i]}" ]]; then
    present=$((present + 1))
  else
    failed+=("${wanted_paths[i]}: the local copy has sha256 $actual, recorded ${wanted_sums[i]} (remove it to fetch it again)")
  fi
done

# The missing ones, fetched by one curl (a few at a time) into numbered files, each
# transfer's outcome written on its own line.
fetch_idx=()
fetch_urls=()
: >"$tmp/curl.config"
for i in "${!wanted_paths[@]}"; do
  [[ -n "${is_local[$i]:-}" ]] && continue
  path="${wanted_paths[i]}"
  if ! upstream_url "$path"; then
    failed+=("$path: no upstream source in $sources")
    continue
  fi
  n="${#fetch_idx[@]}"
  fetch_idx+=("$i")
  fetch_urls+=("$url")
  # curl's config syntax: a quoted value with \ and " escaped.
  quoted="${url//\\/\\\\}"
  quoted="${quoted//\"/\\\"}"
  printf 'url = "%s"\noutput = "%s/download-%d"\n' "$quoted" "$tmp" "$n" >>"$tmp/curl.config"
done
if ((${#fetch_idx[@]} > 0)); then
  curl --parallel --parallel-max 8 --fail --silent --show-error --location --retry 2 --connect-timeout 20 \
    --write-out '%{urlnum}\t%{exitcode}\t%{errormsg}\n' --config "$tmp/curl.config" >"$tmp/outcomes" 2>"$tmp/err" || true
  declare -A error_of=()
  while IFS=$'\t' read -r n code message; do
    [[ "$code" == 0 ]] || error_of[$n]="${message:-curl exit $code}"
  done <"$tmp/outcomes"
  downloaded=()
  downloaded_n=()
  for n in "${!fetch_idx[@]}"; do
    path="${wanted_paths[${fetch_idx[n]}]}"
    if [[ -n "${error_of[$n]:-}" || ! -f "$tmp/download-$n" ]]; then
      failed+=("$path: download from ${fetch_urls[n]} failed: ${error_of[$n]:-no file written}")
      continue
    fi
    downloaded+=("$tmp/download-$n")
    downloaded_n+=("$n")
  done
  checksums "${downloaded[@]}"
  for k in "${!downloaded_n[@]}"; do
    n="${downloaded_n[k]}"
    i="${fetch_idx[n]}"
    path="${wanted_paths[i]}"
    actual="${sum_of[${downloaded[k]}]:--}"
    if [[ "$actual" != "${wanted_sums[i]}" ]]; then
      failed+=("$path: ${fetch_urls[n]} has sha256 $actual, recorded ${wanted_sums[i]}; not kept")
      continue
    fi
    target="$dir/$path"
    if ! { [[ -d "${target%/*}" ]] || mkdir -p "${target%/*}"; } || ! mv "$tmp/download-$n" "$target"; then
      failed+=("$path: cannot write $target (set MDS_TRACES_DIR to a writable directory)")
      continue
    fi
    fetched=$((fetched + 1))
  done
fi

if ((${#failed[@]} > 0)); then
  echo "fetch-traces: ${#failed[@]} of $((present + fetched + ${#failed[@]})) trace files are not available in $dir:" >&2
  printf '  %s\n' "${failed[@]}" >&2
  exit 1
fi
echo "fetch-traces: $((present + fetched)) trace files in $dir checked against tools/traces/SHA256SUMS ($present present, $fetched fetched)"
