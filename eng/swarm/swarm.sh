#!/usr/bin/env bash
# The system on a Docker swarm of several nodes on this one machine, each node a Docker-in-Docker container with its
# own dockerd (docs/deploy.md, "On a swarm"). Run as root, after nothing or after eng/containers/setup.sh:
#   eng/swarm/swarm.sh up [--nodes N]   N nodes (default 3, every one a manager), the images, the stack; prints the addresses
#   eng/swarm/swarm.sh prepare          only the node image (CI makes it before the tests)
#   eng/swarm/swarm.sh deploy           the images and the stack again (after an edit: `aspire publish -o deploy/swarm` first);
#                                       REPLICAS=3, FRONTEND_MEMORY=2G and the like, set, are the stack's (its header lists them)
#   eng/swarm/swarm.sh status           the services, their tasks and the nodes
#   eng/swarm/swarm.sh kill-node I      a node lost: its container killed (start-node I brings it back)
#   eng/swarm/swarm.sh cut-node I       a node cut off from the others (rejoin-node I connects it again)
#   eng/swarm/swarm.sh update SERVICE   a rolling update of one service (catalog, frontend, ...), one task at a time
#   eng/swarm/swarm.sh down             everything removed: the stack, the nodes, their volumes, the network, the registry
#   eng/swarm/swarm.sh at-rest [S]      what every node and every task cost over S seconds (default 60), in % of a core
#   eng/swarm/swarm.sh per-list URL [N] the machine's CPU per request to URL, N one at a time (default 30), less the 20 s before
# The stack is deploy/swarm/stack.yml, written from the AppHost's model; on a real swarm it deploys with
# `docker stack deploy` and the variables its header lists.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT="$PWD"

STACK=httpperf
NETWORK=httpperf-swarm
SUBNET="${HTTPPERF_SWARM_SUBNET:-172.29.231}"   # the nodes' network, /24: node I at .(10+I), so a node cut off comes back at its address
NODE_IMAGE=httpperf/swarm-node:bookworm
WORK="${HTTPPERF_CONTAINERS_WORK:-/var/lib/httpperf-containers}"
STATE="$WORK/swarm"
SHARED="$STATE/shared"
PORT="${HTTPPERF_REGISTRY_PORT:-5043}"        # eng/containers/setup.sh's registry, on loopback
NODE_PORT="${HTTPPERF_SWARM_REGISTRY_PORT:-5044}" # the same registry's storage, served to the nodes on their network
BASE="localhost:$PORT/dotnet/aspnet:10.0"
REDIS="localhost/httpperf/redis:7"
TAG="${HTTPPERF_TAG:-latest}"

die() { echo "swarm.sh: $*" >&2; exit 1; }
node() { echo "$STACK-node-$1"; }
nodes() { docker ps -a --filter "label=org.httpperf.swarm-node" --format '{{.Names}}' | sort; }
running_nodes() { docker ps --filter "label=org.httpperf.swarm-node" --format '{{.Names}}' | sort; }
# A manager that answers: every node is one, so any that is up and in the swarm will do.
manager() {
  for n in $(running_nodes); do
    if docker exec "$n" docker node ls >/dev/null 2>&1; then echo "$n"; return; fi
  done
  die "no node of the swarm answers as a manager"
}
in_swarm() { docker exec "$(manager)" docker "$@"; }
gateway_ip() { echo "$SUBNET.1"; }   # this machine, on the nodes' network
node_ip() { docker inspect "$1" --format "{{(index .NetworkSettings.Networks \"$NETWORK\").IPAddress}}"; }

# A minimal Debian with Docker Engine, from Debian's packages (as the base images are: eng/containers/setup.sh), and curl,
# which reaches a replica from inside one of its tasks' network (nsenter), as the tests do.
node_image() {
  docker image inspect "$NODE_IMAGE" >/dev/null 2>&1 && return
  local mirror
  mirror="$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n 1)"
  mirror="${mirror:-http://deb.debian.org/debian}"
  echo "building the node image $NODE_IMAGE (Debian bookworm, docker.io)"
  mmdebstrap --quiet --variant=minbase --mode=root --include=docker.io,iproute2,iptables,ca-certificates,procps,curl \
    bookworm - "deb $mirror bookworm main" | docker import --change 'ENTRYPOINT ["dockerd"]' - "$NODE_IMAGE" >/dev/null
}

# The loopback registry's storage, served on the nodes' network too, so every node pulls the images as a real swarm does.
node_registry() {
  local address="$(gateway_ip):$NODE_PORT"
  curl -fsS "http://$address/v2/" >/dev/null 2>&1 && return
  sed -e "s/127.0.0.1:$PORT/$address/" "$WORK/registry.yml" >"$STATE/registry.yml"
  nohup docker-registry serve "$STATE/registry.yml" >"$STATE/registry.log" 2>&1 &
  echo $! >"$STATE/registry.pid"
  for _ in $(seq 50); do curl -fsS "http://$address/v2/" >/dev/null 2>&1 && return; sleep 0.2; done
  die "the nodes' registry did not start: $STATE/registry.log"
}

# One node: its own dockerd and /var/lib/docker, its containers' cgroups under /<node> (cgroup v1, shared with this
# machine). --privileged fails on these VMs (CAP_SYS_RESOURCE is not in the bounding set): every other capability.
# GOMAXPROCS=1: three nodes' dockerd share this machine's cores. Idle (Raft, gossip, heartbeats), the nodes' own
# processes cost 2.7 to 3.5% of a core with a Go thread per core, a third of it switching threads, and 2.1 to 2.7%
# with one (docs/deploy.md, "The swarm at rest").
start_node() {
  local name; name="$(node "$1")"
  docker run -d --name "$name" --hostname "node-$1" --network "$NETWORK" --ip "$SUBNET.$((10 + $1))" --label org.httpperf.swarm-node="$1" \
    --cap-add ALL --cap-drop SYS_RESOURCE \
    --security-opt seccomp=unconfined --security-opt apparmor=unconfined --security-opt systempaths=unconfined \
    --device-cgroup-rule 'a *:* rwm' -v /sys/fs/cgroup:/sys/fs/cgroup:rw \
    -v "$name:/var/lib/docker" -v "$SHARED:$SHARED" --tmpfs /run --tmpfs /tmp -e GOMAXPROCS=1 \
    "$NODE_IMAGE" --cgroup-parent="/$name" --insecure-registry="$(gateway_ip):$NODE_PORT" --userland-proxy=false >/dev/null
  for _ in $(seq 100); do docker exec "$name" docker info >/dev/null 2>&1 && return; sleep 0.3; done
  docker logs --tail 20 "$name" >&2
  die "the dockerd of $name did not start"
}

up() {
  local count=3
  [ "${1:-}" = --nodes ] && count="$2"
  [ "$count" -ge 1 ] || die "--nodes must be at least 1"
  [ -z "$(nodes)" ] || die "a swarm is up already (eng/swarm/swarm.sh down first)"
  bash eng/containers/setup.sh >/dev/null
  mkdir -p "$SHARED"
  node_image
  docker network inspect "$NETWORK" >/dev/null 2>&1 || docker network create --subnet "$SUBNET.0/24" --gateway "$SUBNET.1" "$NETWORK" >/dev/null
  node_registry
  for i in $(seq "$count"); do start_node "$i"; done
  local first; first="$(node 1)"
  # Overlay networks from a range of their own (the default, 10.0.0.0/8, may be this machine's own network).
  docker exec "$first" docker swarm init --advertise-addr "$(node_ip "$first")" --default-addr-pool 10.231.0.0/16 >/dev/null
  local token; token="$(docker exec "$first" docker swarm join-token -q manager)"
  for i in $(seq 2 "$count"); do
    docker exec "$(node "$i")" docker swarm join --token "$token" "$(node_ip "$first"):2377" >/dev/null
  done
  echo "swarm of $count nodes: $(docker exec "$first" docker node ls --format '{{.Hostname}}' | sort | tr '\n' ' ')"
  deploy
}

# Each service's image, built by the .NET SDK (no Dockerfile) and pushed to the registry the nodes pull from.
images() {
  local projects
  projects="$(sed -n 's/^ *org\.httpperf\.project: *//p' deploy/swarm/stack.yml)"
  for project in $projects; do
    local name; name="$(awk -v p="$project" '/^  [a-z0-9-]+:$/ {s=$1} $0 ~ "org.httpperf.project: " p "$" {sub(":", "", s); print s}' deploy/swarm/stack.yml)"
    echo "image httpperf/$name:$TAG from $project"
    # ReadyToRun: a task that starts in a rolling update or on another node runs its code compiled ahead of time
    # instead of compiling it while it takes its share of the load.
    dotnet publish "$project" -c Release --os linux -t:PublishContainer --nologo -v:q -p:PublishReadyToRun=true \
      -p:ContainerRegistry="localhost:$PORT" -p:ContainerRepository="httpperf/$name" -p:ContainerImageTag="$TAG" \
      -p:ContainerBaseImage="$BASE" >/dev/null
  done
  docker tag "$REDIS" "localhost:$PORT/httpperf/redis:7" && docker push -q "localhost:$PORT/httpperf/redis:7" >/dev/null
  # The dashboard from the package the AppHost restores, at the version it restores.
  local packages version
  packages="$(dotnet nuget locals global-packages -l | sed 's/^global-packages: *//')"
  version="$(sed -n 's/.*Include="Aspire.Hosting.AppHost" Version="\([^"]*\)".*/\1/p' Directory.Packages.props)"
  [ -d "$packages/aspire.dashboard.sdk.linux-x64/$version/tools" ] || dotnet restore AppHost >/dev/null
  # Docker 20.10's own builder: it warns that it is deprecated, which says nothing here unless the build fails.
  docker build -q -f eng/swarm/dashboard.Dockerfile --build-arg BASE="$BASE" -t "localhost:$PORT/httpperf/dashboard:$version" \
    "$packages/aspire.dashboard.sdk.linux-x64/$version/tools" >/dev/null 2>"$STATE/dashboard-build.log" \
    || { cat "$STATE/dashboard-build.log" >&2; die "the dashboard image did not build"; }
  docker push -q "localhost:$PORT/httpperf/dashboard:$version" >/dev/null
  echo "dashboard image $version"
  DASHBOARD_VERSION="$version"
}

# The secrets deploy/swarm/secrets.env lists, each made once; the AppHost's secret parameters generated once and kept here.
secrets() {
  local parameters="$STATE/parameters.env"
  touch "$parameters" && chmod 600 "$parameters"
  local name value variable
  while IFS='=' read -r name value; do
    case "$name" in ''|'#'*) continue ;; esac
    for variable in $(grep -o '\${[A-Z0-9_]*}' <<<"$value" | tr -d '${}' | sort -u); do
      grep -q "^$variable=" "$parameters" || echo "$variable=$(tr -dc 'A-Za-z0-9' </dev/urandom | head -c 32)" >>"$parameters"
      value="${value//\$\{$variable\}/$(sed -n "s/^$variable=//p" "$parameters")}"
    done
    in_swarm secret inspect "$name" >/dev/null 2>&1 || printf '%s' "$value" | docker exec -i "$(manager)" docker secret create "$name" - >/dev/null
  done <deploy/swarm/secrets.env
}

deploy() {
  [ -f deploy/swarm/stack.yml ] || die "no deploy/swarm/stack.yml: aspire publish -o deploy/swarm"
  images
  secrets
  local registry; registry="$(gateway_ip):$NODE_PORT"
  mkdir -p "$SHARED/uploads-data" "$SHARED/flags-data"
  chown 1654:1654 "$SHARED/uploads-data" # the images' "app" user
  docker exec -i "$(manager)" sh -c 'cat >/tmp/stack.yml' <deploy/swarm/stack.yml
  # The stack's variables that have a default (REPLICAS, CATALOG_MEMORY, ...), where this shell sets them.
  local passed=() name
  for name in $(grep -o '\${[A-Z0-9_]*:-' deploy/swarm/stack.yml | tr -d '${:-' | sort -u); do
    [ -z "${!name:-}" ] || passed+=("$name=${!name}")
  done
  docker exec "$(manager)" env "${passed[@]}" \
    HTTPPERF_REGISTRY="$registry" HTTPPERF_TAG="$TAG" FLAGS_IMAGE="$registry/httpperf/redis:7" \
    DASHBOARD_IMAGE="$registry/httpperf/dashboard:$DASHBOARD_VERSION" \
    UPLOADS_DATA_DEVICE="$SHARED/uploads-data" FLAGS_DATA_DEVICE="$SHARED/flags-data" \
    docker stack deploy --prune -c /tmp/stack.yml "$STACK" >/dev/null
  wait_running 300
  wait_answering 120
  addresses
}

# Every node's Gateway answers through each of its services: a product (Frontend, then Catalog) and an upload that is
# not there (Uploads, a 404). A task runs once its process starts, not once it listens: the stack has no health checks
# (docs/deploy.md, "On a swarm": "no `healthcheck:`").
wait_answering() {
  local deadline=$(( $(date +%s) + $1 )) n address
  for n in $(running_nodes); do
    address="http://$(node_ip "$n"):5100"
    until [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$address/api/products/1")" = 200 ] \
      && [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$address/api/uploads/none")" = 404 ]; do
      [ "$(date +%s)" -lt "$deadline" ] || die "the Gateway on $n did not answer within $1 s"
      sleep 1
    done
  done
}

# Every service at its replicas (global: one a node) and none still in a rolling update (a redeploy starts one per
# changed image), or the time is up. An update the swarm rolled back fails.
wait_running() {
  local deadline=$(( $(date +%s) + $1 )) services updates
  services="$(in_swarm service ls --filter "label=com.docker.stack.namespace=$STACK" --format '{{.Name}}')"
  while [ "$(date +%s)" -lt "$deadline" ]; do
    updates="$(in_swarm service inspect --format '{{.Spec.Name}} {{if .UpdateStatus}}{{.UpdateStatus.State}}{{end}}' $services)"
    if grep -q ' rollback' <<<"$updates"; then
      in_swarm service ps --no-trunc $services | grep -v ' Running ' | head -n 20 >&2
      die "an update was rolled back: $(grep ' rollback' <<<"$updates" | tr '\n' ' ')"
    fi
    if grep -q ' updating' <<<"$updates" \
      || ! in_swarm service ls --filter "label=com.docker.stack.namespace=$STACK" --format '{{.Replicas}}' | grep -v '^0/0' | awk -F'[/ ]' '$1 != $2 {bad=1} END {exit bad}'; then
      sleep 2
      continue
    fi
    return 0
  done
  in_swarm service ls >&2
  die "the services did not all start within $1 s"
}

addresses() {
  local n
  for n in $(running_nodes); do
    echo "gateway on $n: http://$(node_ip "$n"):5100"
  done
  local dashboard; dashboard="$(in_swarm service ps "${STACK}_dashboard" --filter desired-state=running --format '{{.Node}}' | head -n 1)"
  local login; login="$(in_swarm service logs "${STACK}_dashboard" 2>/dev/null | grep -o 'login?t=[0-9a-f]*' | tail -n 1 || true)"
  echo "dashboard on $dashboard: http://$(node_ip "$STACK-${dashboard}"):18888/${login}"
  echo "admin key: ADMIN_KEY in $STATE/parameters.env"
}

status() {
  in_swarm node ls
  in_swarm service ls
  for service in $(in_swarm service ls --format '{{.Name}}'); do
    in_swarm service ps "$service" --filter desired-state=running --format "$service {{.Node}} {{.CurrentState}}"
  done
}

down() {
  for n in $(nodes); do docker rm -f -v "$n" >/dev/null; docker volume rm -f "$n" >/dev/null; done
  docker network rm "$NETWORK" >/dev/null 2>&1 || true
  if [ -f "$STATE/registry.pid" ]; then kill "$(cat "$STATE/registry.pid")" 2>/dev/null || true; fi
  rm -rf "$STATE"
  echo "swarm removed"
}

# % of one core each node's own processes (its cgroup: dockerd, containerd, shims, the health checks' runc) and each
# task (its cgroup under the node's) spent over $1 seconds: cpuacct.usage, read before and after.
at_rest() {
  local seconds="${1:-60}" n id task name path rows=() paths=() before=()
  for n in $(running_nodes); do
    id="$(docker inspect -f '{{.Id}}' "$n")"
    paths+=("/sys/fs/cgroup/cpuacct/docker/$id"); rows+=("$n own")
    while read -r task name; do
      path="/sys/fs/cgroup/cpuacct/$n/$task"
      [ -d "$path" ] && { paths+=("$path"); rows+=("$n ${name%%.*}.$(cut -d. -f2 <<<"$name")"); }
    done < <(docker exec "$n" docker ps --no-trunc --format '{{.ID}} {{.Names}}')
  done
  for path in "${paths[@]}"; do before+=("$(cat "$path/cpuacct.usage")"); done
  sleep "$seconds"
  local i total=0 spent
  for i in "${!paths[@]}"; do
    spent=$(( $(cat "${paths[$i]}/cpuacct.usage") - before[i] )); total=$(( total + spent ))
    printf '%-40s %6.2f%%\n' "${rows[$i]}" "$(bc -l <<<"$spent / ($seconds * 10000000)")"
  done
  printf '%-40s %6.2f%%\n' "the whole swarm" "$(bc -l <<<"$total / ($seconds * 10000000)")"
}

# The machine's CPU (/proc/stat: user, nice, system, irq, softirq, steal) per request to $1, $2 of them one at a time,
# less what the machine spent at the rate of the 20 s before; a status other than 200 is reported.
per_list() {
  local url="$1" count="${2:-30}" hz; hz="$(getconf CLK_TCK)"
  busy() { awk '/^cpu /{print $2+$3+$4+$7+$8+$9}' /proc/stat; }
  local t0 b0 t1 b1 t2 b2 codes=""
  t0=$(date +%s%N); b0=$(busy); sleep 20; t1=$(date +%s%N); b1=$(busy)
  for _ in $(seq "$count"); do codes+="$(curl -s -o /dev/null -w '%{http_code}' "$url") "; done
  t2=$(date +%s%N); b2=$(busy)
  grep -qv '^\(200 \)*$' <<<"$codes" && echo "not all 200: $codes" >&2
  bc -l <<<"idle = ($b1 - $b0) / $hz / (($t1 - $t0) / 10^9); spent = ($b2 - $b1) / $hz - idle * ($t2 - $t1) / 10^9
    scale = 0; print \"per request \", spent * 1000 / $count / 1, \" ms of CPU, \", ($t2 - $t1) / 10^6 / $count, \" ms each; before, \", idle * 100 / 1, \"% of a core\n\""
}

case "${1:-}" in
  up) shift; up "$@" ;;
  prepare) node_image ;;
  deploy) DASHBOARD_VERSION=; deploy ;;
  status) status ;;
  kill-node) docker kill "$(node "$2")" >/dev/null && echo "$(node "$2") killed" ;;
  start-node) docker start "$(node "$2")" >/dev/null && echo "$(node "$2") started" ;;
  cut-node) docker network disconnect "$NETWORK" "$(node "$2")" && echo "$(node "$2") cut off" ;;
  rejoin-node) docker network connect --ip "$SUBNET.$((10 + $2))" "$NETWORK" "$(node "$2")" && echo "$(node "$2") connected" ;;
  update) in_swarm service update --detach=false --quiet --force "${STACK}_$2" >/dev/null && echo "${STACK}_$2 updated" ;;
  down) down ;;
  at-rest) at_rest "${2:-60}" ;;
  per-list) [ -n "${2:-}" ] || die "per-list needs a URL"; per_list "$2" "${3:-30}" ;;
  *) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
