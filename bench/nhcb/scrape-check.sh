#!/usr/bin/env bash
# What Prometheus 3 stores from a real engine capture when a scrape sets
# convert_classic_histograms_to_nhcb: four servers scrape the same SGLang
# exposition (three classic histograms), with the option and
#   1. without --enable-feature=native-histograms, with and without
#      always_scrape_classic_histograms,
#   2. with it,
#   3. with it and always_scrape_classic_histograms,
# and the script prints, per server, the series stored under the TTFT
# histogram's names and how many series the scrape stored in all.
#
#   bench/nhcb/scrape-check.sh [prometheus binary]   (default: the one tools/prom-bin/build.sh cached)
#
# Never run by CI; docs/prometheus-signals.md, "Native histograms (NHCB), measured", quotes its output.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
prometheus=${1:-$(bash "$here/../../tools/prom-bin/build.sh" --print-dir)/prometheus}
capture=$here/../../../shared/fixtures/engine-expositions/sglang-docs-production-metrics.prom
[[ -x $prometheus ]] || { echo "scrape-check: no Prometheus binary at '$prometheus'" >&2; exit 1; }
[[ -f $capture ]] || { echo "scrape-check: no capture at '$capture'" >&2; exit 1; }

work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

cp "$capture" "$work/metrics"
target_port=$(free_port)
python3 -m http.server "$target_port" --bind 127.0.0.1 --directory "$work" >"$work/http.log" 2>&1 &
pids+=($!)

declare -A ports
# start <name> <always_scrape_classic_histograms> [prometheus flag]: a server whose port goes in ports[name].
# Not called in a subshell, so that its process id reaches the cleanup.
start() {
  local name=$1 always=$2 flag=${3:-} port
  port=$(free_port)
  mkdir -p "$work/$name"
  cat >"$work/$name.yml" <<YML
global: {scrape_interval: 1s, scrape_timeout: 1s}
scrape_configs:
  - job_name: engine
    fallback_scrape_protocol: PrometheusText0.0.4
    convert_classic_histograms_to_nhcb: true
    always_scrape_classic_histograms: $always
    static_configs: [{targets: ["127.0.0.1:$target_port"]}]
YML
  # shellcheck disable=SC2086 # the flag is one word or none
  "$prometheus" --config.file="$work/$name.yml" --storage.tsdb.path="$work/$name" \
    --web.listen-address="127.0.0.1:$port" $flag >"$work/$name.log" 2>&1 &
  pids+=($!)
  ports[$name]=$port
}

query() { curl -sf --data-urlencode "query=$2" "http://127.0.0.1:$1/api/v1/query"; }

# Waits until the server has scraped the target at least twice, for 60 s at most.
wait_scraped() {
  local deadline=$((SECONDS + 60))
  until query "$1" 'count_over_time(up{job="engine"}[1m]) >= 2' 2>/dev/null | grep -q '"value"'; do
    ((SECONDS < deadline)) || { echo "scrape-check: the server on port $1 scraped nothing in 60 s" >&2; exit 1; }
    sleep 0.5
  done
}

start without-feature false
start without-feature+classic true
start native-histograms false --enable-feature=native-histograms
start native-histograms+classic true --enable-feature=native-histograms

echo "$("$prometheus" --version | head -n 1); capture $(basename "$capture"); convert_classic_histograms_to_nhcb: true"
for name in without-feature without-feature+classic native-histograms native-histograms+classic; do
  port=${ports[$name]}
  wait_scraped "$port"
  names=$(query "$port" 'count by (__name__) ({__name__=~"sglang:time_to_first_token_seconds.*"})' |
    python3 -c 'import json, sys; print(", ".join(sorted(r["metric"]["__name__"] + " (" + r["value"][1] + ")" for r in json.load(sys.stdin)["data"]["result"])) or "none")')
  total=$(query "$port" 'count({job="engine"})' |
    python3 -c 'import json, sys; r = json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else 0)')
  echo "$name: TTFT series: $names; series of the scrape: $total"
done
