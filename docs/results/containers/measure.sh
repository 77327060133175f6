#!/usr/bin/env bash
# What a container network costs (docs/deploy.md): the product list and the catalog, naive then optimized, 40 requests
# one at a time, through the Gateway at http://localhost:5100, under the AppHost in process mode (every hop on
# loopback) and then in container mode (every hop across Podman's bridge, 2 replicas of each service), in one run,
# each after a warm-up that lasts until the JIT is done (common.sh), with the CPU each hop spent per request: every
# instance's own /runtime counter (CpuSeconds), summed per service. Needs eng/containers/setup.sh once. Run it on a
# quiet machine:
#   docs/results/containers/measure.sh > docs/results/containers/report.md
set -euo pipefail
cd "$(dirname "$0")/../../.."
source docs/results/containers/common.sh
requests=${REQUESTS:-40}

dotnet build -c Release AppHost -v quiet -nologo >/dev/null
dotnet tool restore >/dev/null
loadgen=LoadGen/bin/Release/net10.0/LoadGen.dll

# Each instance's address, from the AppHost itself (`aspire describe`): "catalog-1 http://localhost:28923", ...
instances() {
  dotnet aspire describe --format Json 2>/dev/null | sed -n '/^[[{]/,$p' | python3 -c '
import json, sys
document = json.load(sys.stdin)
for resource in document if isinstance(document, list) else document.get("resources", []):
    http = [url["url"] for url in resource.get("urls") or [] if url.get("name") == "http"]
    if http and resource.get("state") == "Running":
        print(resource.get("displayName") or resource["name"], http[0])'
}
# A /runtime counter summed over every instance of a service (catalog: catalog, or catalog-1 + catalog-2).
counter() {
  local total=0
  while read -r name url; do
    case "$name" in "$1"|"$1"-[0-9]*) total=$(echo "$total + $(curl -sf "$url/runtime" | python3 -c "import json,sys; print(json.load(sys.stdin)['$2'])")" | bc -l);; esac
  done <<<"$addresses"
  echo "$total"
}
cpu() { counter "$1" cpuSeconds; }
# Seconds the JIT has spent in the Gateway and the services (common.sh's warm_up reads it).
jit() { echo "$(counter gateway jitSeconds) + $(counter frontend jitSeconds) + $(counter catalog jitSeconds)" | bc -l; }

echo "# Process mode against container mode, $(date -u +%Y-%m-%d), load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| scenario | mode | where | requests | p50 ms | p99 ms | Gateway CPU ms/req | Frontend.Api CPU ms/req | Catalog.Api CPU ms/req |"
echo "|---|---|---|---:|---:|---:|---:|---:|---:|"
for where in processes containers; do
  args=()
  [ "$where" = containers ] && args=(--containers)
  start_apphost "/tmp/apphost-$where.log" "${args[@]}"
  addresses=$(instances)
  for scenario in products catalog; do
    for mode in naive optimized; do
      warm_up dotnet "$loadgen" run --url http://localhost:5100 --scenario "$scenario" --mode "$mode" --requests 10 --concurrency 1
      declare -A before=()
      for service in gateway frontend catalog; do before[$service]=$(cpu $service); done
      table=$(dotnet "$loadgen" run --url http://localhost:5100 --scenario "$scenario" --mode "$mode" \
        --requests "$requests" --warmup 10 --concurrency 1)
      row=$(grep -E "^\| $scenario/$mode " <<<"$table" | head -n 1)
      p50=$(awk -F'|' '{gsub(/ /, "", $7); print $7}' <<<"$row")
      p99=$(awk -F'|' '{gsub(/ /, "", $9); print $9}' <<<"$row")
      per() { printf '%.1f' "$(echo "($(cpu "$1") - ${before[$1]}) * 1000 / ($requests + 10)" | bc -l)"; }
      echo "| $scenario | $mode | $where | $requests | $p50 | $p99 | $(per gateway) | $(per frontend) | $(per catalog) |"
    done
  done
  stop_apphost
done
