#!/usr/bin/env bash
# The container network's own floor, with no .NET in it: iperf3 (Debian's, apt-get install iperf3) for 10 s, one TCP
# stream, over loopback, container to container on a bridge of the engine's, and from this machine to a container
# through a published port. The containers run the services' base image with this machine's iperf3 mounted in (both
# Debian bookworm). Prints each path's Gbit/s and the sender's and receiver's CPU. Root; engine: podman (default) or
# docker. Run: docs/results/containers/bridge-floor.sh [podman|docker]
set -euo pipefail
ENGINE="${1:-podman}"
IMAGE="${HTTPPERF_FLOOR_IMAGE:-localhost:5043/dotnet/aspnet:10.0}"
NETWORK=httpperf-bridge-floor
MOUNTS=()
for file in /usr/bin/iperf3 /lib/x86_64-linux-gnu/libiperf.so.0 /lib/x86_64-linux-gnu/libsctp.so.1; do
  MOUNTS+=(-v "$file:$file:ro")
done

summary() {
  python3 -c 'import json, sys
end = json.load(sys.stdin)["end"]
print("| %s | %.1f | %.0f%% | %.0f%% |" % (sys.argv[1], end["sum_received"]["bits_per_second"] / 1e9,
      end["cpu_utilization_percent"]["host_total"], end["cpu_utilization_percent"]["remote_total"]))' "$1"
}

"$ENGINE" pull -q "$IMAGE" >/dev/null 2>&1 || true
"$ENGINE" network create "$NETWORK" >/dev/null
trap '"$ENGINE" rm -f floor-server >/dev/null 2>&1 || true; "$ENGINE" network rm "$NETWORK" >/dev/null 2>&1 || true' EXIT
echo "| path ($ENGINE) | Gbit/s | sender CPU | receiver CPU |"
echo "|---|---:|---:|---:|"
for run in 1 2; do
  iperf3 -s -1 -B 127.0.0.1 -p 5301 >/dev/null 2>&1 &
  sleep 0.5
  iperf3 -c 127.0.0.1 -p 5301 -t 10 -J | summary "loopback, run $run"
  "$ENGINE" run -d --rm --name floor-server --network "$NETWORK" -p 127.0.0.1:5302:5201 "${MOUNTS[@]}" --entrypoint iperf3 "$IMAGE" -s >/dev/null
  sleep 1
  "$ENGINE" run --rm --network "$NETWORK" "${MOUNTS[@]}" --entrypoint iperf3 "$IMAGE" -c floor-server -t 10 -J 2>/dev/null | summary "container to container, run $run"
  iperf3 -c 127.0.0.1 -p 5302 -t 10 -J | summary "this machine to a published port, run $run"
  "$ENGINE" rm -f floor-server >/dev/null
done
