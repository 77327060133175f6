# Sourced by measure.sh and gateway-profile.sh: the AppHost in the background, in process mode or, with
# --containers, in container mode, until the Gateway answers at http://localhost:5100; stopped the same way; and the
# warm-up both measure after.
#   start_apphost LOG [AppHost arguments...]
#   stop_apphost
#   warm_up COMMAND...
start_apphost() {
  local log=$1
  shift
  dotnet run -c Release --no-build --project AppHost -- "$@" >"$log" 2>&1 &
  apphost=$!
  trap stop_apphost EXIT
  for _ in $(seq 1 150); do
    curl -sf -o /dev/null http://localhost:5100/health && break
    sleep 2
  done
  sleep 5
}

stop_apphost() {
  kill -TERM "$apphost" 2>/dev/null || true
  wait "$apphost" 2>/dev/null || true
  trap - EXIT
  # The next AppHost takes port 5100 only once this one's containers and processes are gone.
  for _ in $(seq 1 60); do curl -sf -o /dev/null http://localhost:5100/health || break; sleep 1; done
}

# Runs COMMAND (a batch of requests) until a batch costs the JIT less than 50 ms, at most 40 times; the caller's `jit`
# prints the seconds the JIT has spent so far. The JIT compiles each hot method again, optimized, after some 30 to 60
# calls, so a path's first hundred or more requests cost more CPU than the rest.
warm_up() {
  local before
  for _ in $(seq 1 40); do
    before=$(jit)
    "$@" >/dev/null
    [ "$(echo "$(jit) - $before < 0.05" | bc -l)" = 1 ] && break
  done
}
