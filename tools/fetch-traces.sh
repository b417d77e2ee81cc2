#!/usr/bin/env bash
# Makes the public request traces available to the demo and the trace-replay tests in
# $MDS_TRACES_DIR (default: ../shared/traces beside the project). Every file listed in
# tools/traces/SHA256SUMS is checked against its recorded checksum; a file that is missing
# is taken from its upstream repository at the pinned commit (tools/traces/sources.tsv),
# checked, and only then put in place. A local copy that is complete and intact means no
# download at all. Nothing is ever kept that does not match its checksum.
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

# The upstream URL of a local path, from the first matching row of sources.tsv.
upstream_url() {
  local path="$1" prefix repo commit upstream
  while IFS=$'\t' read -r prefix repo commit upstream; do
    [[ -z "$prefix" || "$prefix" == \#* ]] && continue
    if [[ "$path" == "$prefix"* ]]; then
      echo "$base/$repo/$commit/$upstream${path#"$prefix"}"
      return 0
    fi
  done <"$sources"
  return 1
}

mkdir -p "$dir" 2>/dev/null || true
present=0
fetched=0
failed=()
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

while read -r sum path; do
  [[ -z "$path" || "$path" != "$only"* ]] && continue
  target="$dir/$path"
  if [[ -f "$target" ]]; then
    actual="$(sha256sum "$target" | cut -d' ' -f1)"
    if [[ "$actual" == "$sum" ]]; then
      present=$((present + 1))
      continue
    fi
    failed+=("$path: the local copy has sha256 $actual, recorded $sum (remove it to fetch it again)")
    continue
  fi
  if ! url="$(upstream_url "$path")"; then
    failed+=("$path: no upstream source in $sources")
    continue
  fi
  download="$tmp/download"
  if ! curl --fail --silent --show-error --location --retry 2 --connect-timeout 20 --output "$download" "$url" 2>"$tmp/err"; then
    failed+=("$path: download from $url failed: $(tr -d '\n' <"$tmp/err")")
    continue
  fi
  actual="$(sha256sum "$download" | cut -d' ' -f1)"
  if [[ "$actual" != "$sum" ]]; then
    failed+=("$path: $url has sha256 $actual, recorded $sum; not kept")
    continue
  fi
  if ! mkdir -p "$(dirname "$target")" || ! mv "$download" "$target"; then
    failed+=("$path: cannot write $target (set MDS_TRACES_DIR to a writable directory)")
    continue
  fi
  fetched=$((fetched + 1))
done <"$sums"

if ((${#failed[@]} > 0)); then
  echo "fetch-traces: ${#failed[@]} of $((present + fetched + ${#failed[@]})) trace files are not available in $dir:" >&2
  printf '  %s\n' "${failed[@]}" >&2
  exit 1
fi
echo "fetch-traces: $((present + fetched)) trace files in $dir checked against tools/traces/SHA256SUMS ($present present, $fetched fetched)"
