#!/usr/bin/env bash
# What the dashboard shows under the AppHost, measured as the bench measures: the product list and the catalog,
# naive then optimized, 40 requests one at a time after 10 s of warm-up, through the Gateway at http://localhost:5100,
# with the CPU each service spent per request (from /proc). Run it right after the bench, on a quiet machine:
#   dotnet run -c Release --project Bench -- bench --scenario products,catalog --output /tmp/bench
#   docs/results/apphost/measure.sh [Release|Debug] > docs/results/apphost/report.md
set -euo pipefail
cd "$(dirname "$0")/../../.."
config="${1:-Release}"
requests=${REQUESTS:-40}
warmup_seconds=10

dotnet build -c Release LoadGen -v quiet -nologo >/dev/null
dotnet run -c "$config" --project AppHost >/tmp/apphost-measure.log 2>&1 &
apphost=$!
trap 'kill -TERM $apphost 2>/dev/null; wait $apphost 2>/dev/null || true' EXIT
for _ in $(seq 1 90); do
  curl -sf -o /dev/null http://localhost:5100/health && break
  sleep 2
done

ticks=$(getconf CLK_TCK)
declare -A pid
for service in Catalog.Api Frontend.Api Uploads.Api Gateway; do
  pid[$service]=$(pgrep -f "/bin/$config/net10.0/$service\$" | head -n 1)
done
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }

echo "# Under the AppHost ($config), $(date -u +%Y-%m-%d), load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| scenario | mode | requests | p50 ms | p99 ms | Gateway CPU ms/req | Frontend.Api CPU ms/req | Catalog.Api CPU ms/req |"
echo "|---|---|---:|---:|---:|---:|---:|---:|"
for scenario in products catalog; do
  for mode in naive optimized; do
    # Warm up as the bench does, for 10 s: long enough for the hot methods to leave tier-0 code.
    warm_until=$((SECONDS + warmup_seconds))
    while [ "$SECONDS" -lt "$warm_until" ]; do
      dotnet LoadGen/bin/Release/net10.0/LoadGen.dll run --url http://localhost:5100 --scenario "$scenario" --mode "$mode" \
        --requests 5 --concurrency 1 >/dev/null
    done
    declare -A before
    for service in "${!pid[@]}"; do before[$service]=$(cpu "${pid[$service]}"); done
    # The client warms up too (10 requests, not recorded): a fresh LoadGen reads the body with tier-0 code. The
    # services are warm by then, so those requests cost them what the measured ones do, and count in the CPU.
    table=$(dotnet LoadGen/bin/Release/net10.0/LoadGen.dll run --url http://localhost:5100 --scenario "$scenario" --mode "$mode" \
      --requests "$requests" --warmup 10 --concurrency 1)
    row=$(grep -E "^\| $scenario/$mode " <<<"$table" | head -n 1)
    p50=$(awk -F'|' '{gsub(/ /, "", $7); print $7}' <<<"$row")
    p99=$(awk -F'|' '{gsub(/ /, "", $9); print $9}' <<<"$row")
    per() { echo "scale=1; ($(cpu "${pid[$1]}") - ${before[$1]}) * 1000 / $ticks / ($requests + 10)" | bc; }
    echo "| $scenario | $mode | $requests | $p50 | $p99 | $(per Gateway) | $(per Frontend.Api) | $(per Catalog.Api) |"
  done
done
