#!/usr/bin/env bash
# Where the Gateway's CPU goes while it relays the optimized catalog (docs/deploy.md): under the AppHost in process
# mode, then in container mode (Podman), the same load (40 requests one at a time through http://localhost:5100, in the
# windows below), sampled by perf (Debian's linux-perf) on the Gateway's process only, with call stacks. Each sample
# is counted in every area its stack passes through (inclusive), so the areas overlap. Prints, per window, the
# catalog's p50, the Gateway's CPU per request, JIT time and GCs (its /runtime counters), and each area's share of its
# samples. Root; needs eng/containers/setup.sh once. Arguments go to both AppHosts (e.g. --Parameters:replicas=1).
#   docs/results/containers/gateway-profile.sh > /tmp/gateway-profile.md
set -euo pipefail
cd "$(dirname "$0")/../../.."
source docs/results/containers/common.sh
requests=${REQUESTS:-40}
out=${PROFILE_DIR:-/tmp/gateway-profile}
mkdir -p "$out"
dotnet build -c Release AppHost -v quiet -nologo >/dev/null
loadgen=LoadGen/bin/Release/net10.0/LoadGen.dll
load() { dotnet "$loadgen" run --url http://localhost:5100 --scenario catalog --mode optimized --concurrency 1 "$@"; }
jit() { curl -sf http://localhost:5100/runtime | python3 -c 'import json,sys; print(json.load(sys.stdin)["jitSeconds"])'; }

# Inclusive share of the samples per area, by the kernel's and the runtime's symbols on each stack (managed frames
# have no names here: they are what is left, "managed code").
areas() {
  perf script -i "$1" -F comm,ip,sym,dso 2>/dev/null | python3 -c '
import re, sys
areas = [
    ("send: sendmsg/write syscalls", r"tcp_sendmsg"),
    ("receive: recvmsg/read syscalls", r"tcp_recvmsg"),
    ("copies to and from user space", r"copy_user|_copy_to_iter|_copy_from_iter|copy_page_to_iter|skb_copy_datagram|rep_movs"),
    ("softirq: packets delivered (IP, TCP receive)", r"net_rx_action|process_backlog|__netif_receive_skb"),
    ("veth and bridge", r"^(veth|br)_"),
    ("netfilter (iptables, conntrack)", r"nf_hook_slow|nf_conntrack|ipt_do_table|nft_do_chain"),
    ("epoll and other syscalls", r"do_epoll_wait|__x64_sys_(?!sendmsg|sendto|recvmsg|recvfrom|read|write)"),
    ("the JIT compiling (libclrjit)", r"libclrjit"),
    ("scheduler: sched_yield, futex, wake-ups", r"^(__)?schedule |try_to_wake_up|futex|sched_yield"),
]
total = 0; counts = [0] * len(areas); kernel = 0; coreclr = 0; managed = 0
def flush(stack):
    global total, kernel, coreclr, managed
    if not stack: return
    total += 1
    for i, (_, pattern) in enumerate(areas):
        if any(re.search(pattern, "%s (%s)" % frame) for frame in stack): counts[i] += 1
    sym, dso = stack[0]
    if "kernel" in dso: kernel += 1
    elif "libcoreclr" in dso or "libclrjit" in dso: coreclr += 1
    elif "perf-" in dso or "unknown" in dso or "memfd" in dso or dso.endswith(".dll)") or "doublemapper" in dso: managed += 1
stack = []
for line in sys.stdin:
    line = line.rstrip()
    if not line: flush(stack); stack = []; continue
    if line[0] not in " \t": continue
    m = re.match(r"\s*[0-9a-f]+\s+(.*?)\s+\((.*)\)$", line)
    if m: stack.append((re.sub(r"\+0x[0-9a-f]+$", "", m.group(1)), m.group(2)))
flush(stack)
print("| samples | %d |" % total)
print("| self in the kernel | %.0f%% |" % (100 * kernel / total))
print("| self in the runtime (libcoreclr, JIT) | %.0f%% |" % (100 * coreclr / total))
print("| self in managed code (unnamed) | %.0f%% |" % (100 * managed / total))
for (name, _), count in zip(areas, counts): print("| %s | %.0f%% |" % (name, 100 * count / total))
'
}

for where in processes containers; do
  args=("$@")
  [ "$where" = containers ] && args=(--containers "$@")
  start_apphost "$out/apphost-$where.log" "${args[@]}"
  if [ "$where" = containers ]; then
    pid=$(podman inspect --format '{{.State.Pid}}' "$(podman ps --format '{{.Names}}' | grep '^gateway')")
  else
    pid=$(pgrep -f 'Gateway/bin/Release/net10.0/Gateway' | head -n 1)
  fi
  # First after 10 s of warm-up (a few dozen requests, as the table's run had), then once the JIT is done (a batch of
  # 10 requests costs it less than 50 ms), then, in container mode, with the session network's MTU at 65520 (loopback's
  # is 65536): set live on the bridge, its veths and every container's eth0; the Gateway's pooled connections are
  # retired after 10 s, so new ones take the new MSS.
  warm_until=$((SECONDS + 10))
  while [ "$SECONDS" -lt "$warm_until" ]; do load --requests 5 >/dev/null; done
  windows=("after 10 s of warm-up" "once the JIT is done")
  [ "$where" = containers ] && windows+=("MTU 65520")
  for window in "${windows[@]}"; do
    case "$window" in
      "once the JIT is done") warm_up load --requests 10;;
      "MTU 65520")
        bridge=$(podman network inspect --format '{{.NetworkInterface}}' "$(podman network ls --format '{{.Name}}' | grep '^aspire-session' | head -n 1)")
        ip link set "$bridge" mtu 65520
        for veth in $(ip -o link show master "$bridge" | awk -F': ' '{print $2}' | cut -d@ -f1); do ip link set "$veth" mtu 65520; done
        for container in $(podman ps --format '{{.Names}}'); do
          nsenter -t "$(podman inspect --format '{{.State.Pid}}' "$container")" -n ip link set eth0 mtu 65520
        done
        sleep 11
        load --requests 20 >/dev/null;;
    esac
    before=$(curl -sf http://localhost:5100/runtime)
    data="$out/$where-${window// /-}.data"
    perf record -q -F 999 -g -p "$pid" -o "$data" 2>/dev/null &
    perf_pid=$!
    table=$(load --requests "$requests")
    kill -INT $perf_pid; wait $perf_pid 2>/dev/null || true
    after=$(curl -sf http://localhost:5100/runtime)
    p50=$(grep -E '^\| catalog/optimized ' <<<"$table" | head -n 1 | awk -F'|' '{gsub(/ /, "", $7); print $7}')
    echo "## $where, $window: catalog optimized p50 $p50 ms; the Gateway's $(python3 -c '
import json, sys
b, a, n = json.loads(sys.argv[1]), json.loads(sys.argv[2]), int(sys.argv[3])
print("CPU %.1f ms/request, JIT %.2f s in the window, %d GCs, %.2f MB allocated/request" % (
    (a["cpuSeconds"] - b["cpuSeconds"]) * 1000 / n, a["jitSeconds"] - b["jitSeconds"],
    sum(a[g] - b[g] for g in ("gen0Collections", "gen1Collections", "gen2Collections")), (a["allocatedBytes"] - b["allocatedBytes"]) / n / 1e6))' "$before" "$after" "$requests")"
    echo
    echo "| area (inclusive, of the Gateway's samples) | share |"
    echo "|---|---:|"
    areas "$data"
    echo
  done
  stop_apphost
done
