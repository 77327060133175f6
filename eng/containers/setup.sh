#!/usr/bin/env bash
# What container mode needs once on a Debian machine without Docker Hub or MCR (docs/deploy.md): Podman and its
# settings, Docker Engine beside it, a local registry on loopback, and the two base images built from Debian's packages:
#   localhost:$PORT/dotnet/aspnet:10.0   the equivalent of mcr.microsoft.com/dotnet/aspnet:10.0 (the SDK's base)
#   localhost/httpperf/redis:7           redis-server, for the flags (Aspire's default, docker.io's redis, cannot be pulled)
# and the AppHost's user secrets that name them. Idempotent: run it again after a reboot (it restarts the registry).
# Elsewhere, with Docker or Podman that reach Microsoft's and Docker's registries, none of this is needed.
set -euo pipefail
cd "$(dirname "$0")/../.."

PORT="${HTTPPERF_REGISTRY_PORT:-5043}"
WORK="${HTTPPERF_CONTAINERS_WORK:-/var/lib/httpperf-containers}"
BASE="localhost:$PORT/dotnet/aspnet:10.0"
REDIS="localhost/httpperf/redis:7"

[ "$(id -u)" = 0 ] || { echo "setup.sh: run as root (it installs packages and runs rootful Podman)" >&2; exit 1; }
command -v apt-get >/dev/null || { echo "setup.sh: needs apt-get (Debian)" >&2; exit 1; }

# 1. The engine: Debian's Podman 4.3, and the registry and rootfs tools.
need=()
for tool in podman:podman runc:runc slirp4netns:slirp4netns newuidmap:uidmap fuse-overlayfs:fuse-overlayfs \
            mmdebstrap:mmdebstrap docker-registry:docker-registry curl:curl; do
  command -v "${tool%%:*}" >/dev/null || need+=("${tool#*:}")
done
[ -x /usr/lib/podman/netavark ] || need+=(netavark)
[ -x /usr/lib/podman/aardvark-dns ] || need+=(aardvark-dns)
[ -d /usr/lib/cni ] || need+=(containernetworking-plugins)
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi

# 2. Two settings this kind of VM needs: Podman's default rlimits exceed the VM's hard limits, and crun refuses
#    its hybrid cgroups.
conf=/etc/containers/containers.conf
if ! grep -qs 'httpperf' "$conf"; then
  mkdir -p /etc/containers
  cat >>"$conf" <<'CONF'
# httpperf: eng/containers/setup.sh
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=4096:4096"]

[engine]
runtime = "runc"
CONF
fi
podman info --format '{{.Host.OCIRuntime.Name}}' >/dev/null

# 3. A registry on loopback, for the SDK's base image (the SDK pulls its base from a registry, never from the engine).
mkdir -p "$WORK/registry"
cat >"$WORK/registry.yml" <<CONF
version: 0.1
storage:
  filesystem:
    rootdirectory: $WORK/registry
http:
  addr: 127.0.0.1:$PORT
CONF
if ! curl -fsS "http://127.0.0.1:$PORT/v2/" >/dev/null 2>&1; then
  nohup docker-registry serve "$WORK/registry.yml" >"$WORK/registry.log" 2>&1 &
  for _ in $(seq 50); do curl -fsS "http://127.0.0.1:$PORT/v2/" >/dev/null 2>&1 && break; sleep 0.2; done
fi
grep -qs "localhost:$PORT" /etc/containers/registries.conf.d/httpperf.conf 2>/dev/null || \
  printf '[[registry]]\nlocation = "localhost:%s"\ninsecure = true\n' "$PORT" >/etc/containers/registries.conf.d/httpperf.conf

# 4. The images, from Debian's packages (mmdebstrap), each made once.
mirror="$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n 1)"
mirror="${mirror:-http://deb.debian.org/debian}"
rootfs() { # name, packages: a minimal Debian root file system in $WORK/$name
  rm -rf "$WORK/$1"
  mmdebstrap --quiet --variant=minbase --mode=root --include="$2" bookworm "$WORK/$1" "deb $mirror bookworm main"
}

# Redis works in /data, as the official image does: the AppHost mounts its data volume there, and Redis writes its
# snapshots to its working directory (an image without WORKDIR wrote them to /, outside the volume).
# Its /bin/sh is bash: Aspire starts Redis as `/bin/sh -c "redis-server --requirepass $REDIS_PASSWORD ..."`, and
# bash replaces itself with a lone command where dash, Debian's sh, stays as PID 1 and ignores SIGTERM, so every stop
# waited out the engine's 10 s and killed Redis unsaved. An image without the label below is rebuilt.
REDIS_LABEL=org.httpperf.redis=sh-execs
redis_built() { [ "$("$1" image inspect --format "{{.Config.WorkingDir}} {{index .Config.Labels \"${REDIS_LABEL%%=*}\"}}" "$REDIS" 2>/dev/null)" = "/data ${REDIS_LABEL#*=}" ]; }
if ! redis_built podman; then
  rootfs redis redis-server
  mkdir -p "$WORK/redis/data"
  ln -sf bash "$WORK/redis/usr/bin/sh"
  tar -C "$WORK/redis" -c . | podman import --change 'CMD ["redis-server"]' --change 'EXPOSE 6379' --change 'WORKDIR /data' \
    --change "LABEL $REDIS_LABEL" - "$REDIS" >/dev/null
  rm -rf "$WORK/redis"
fi

if ! curl -fsS "http://127.0.0.1:$PORT/v2/dotnet/aspnet/manifests/10.0" -H 'Accept: application/vnd.oci.image.manifest.v1+json' >/dev/null 2>&1; then
  rootfs aspnet libicu72,libssl3,ca-certificates,tzdata,libgcc-s1,libstdc++6,zlib1g
  # The .NET 10 shared runtime and ASP.NET Core, copied from the installed SDK (the SDK's own, so the versions match).
  dotnet_root="$(dirname "$(readlink -f "$(command -v dotnet)")")"
  mkdir -p "$WORK/aspnet/usr/share/dotnet/shared"
  cp -a "$dotnet_root/dotnet" "$dotnet_root/host" "$dotnet_root/LICENSE.txt" "$WORK/aspnet/usr/share/dotnet/"
  cp -a "$dotnet_root/shared/Microsoft.NETCore.App" "$dotnet_root/shared/Microsoft.AspNetCore.App" "$WORK/aspnet/usr/share/dotnet/shared/"
  ln -sf /usr/share/dotnet/dotnet "$WORK/aspnet/usr/bin/dotnet"
  # The user Microsoft's images define: app, uid and gid 1654, with a home ($APP_UID tells the SDK to run as it).
  chroot "$WORK/aspnet" groupadd --gid=1654 app
  chroot "$WORK/aspnet" useradd -l --uid=1654 --gid=1654 --create-home app
  tar -C "$WORK/aspnet" -c . | podman import \
    --change 'ENV APP_UID=1654' --change 'ENV ASPNETCORE_HTTP_PORTS=8080' --change 'ENV DOTNET_RUNNING_IN_CONTAINER=true' \
    --change 'ENV DOTNET_VERSION=10.0' --change 'ENV ASPNET_VERSION=10.0' \
    - "$BASE" >/dev/null
  podman push --quiet --tls-verify=false "$BASE" >/dev/null
  rm -rf "$WORK/aspnet"
fi

# 5. The AppHost's settings on this machine (its user secrets, outside the repository): the engine, the images above,
#    and no container tunnel (Aspire builds its proxy from an MCR image, and on Podman 4.3 DCP then waits for it forever).
secrets() { dotnet user-secrets set --project AppHost "$1" "$2" >/dev/null; }
secrets ASPIRE_CONTAINER_RUNTIME podman
secrets ASPIRE_ENABLE_CONTAINER_TUNNEL false
secrets Containers:BaseImage "$BASE"
secrets Containers:RedisImage "$REDIS"
# 6. Docker Engine, the engine most users have, beside Podman: Debian's docker.io (daemon 20.10), started here since
#    no service manager runs it, with Redis's image from Podman's store. Container mode runs on it unchanged with
#    ASPIRE_CONTAINER_RUNTIME=docker (the images are built into it by the SDK, from the same base in the registry).
#    HTTPPERF_DOCKER=0 leaves it out. Without Docker's userland proxy: a published port is forwarded by the kernel (NAT),
#    not copied through a docker-proxy process, which cost 39-53 ms of CPU per product list (docs/cost.md).
docker_version="not set up"
if [ "${HTTPPERF_DOCKER:-1}" = 1 ]; then
  if ! command -v dockerd >/dev/null; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io >/dev/null
  fi
  if ! docker info >/dev/null 2>&1; then
    nohup dockerd --userland-proxy=false >"$WORK/dockerd.log" 2>&1 &
    for _ in $(seq 100); do docker info >/dev/null 2>&1 && break; sleep 0.3; done
    docker info >/dev/null 2>&1 || { echo "setup.sh: dockerd did not start: $WORK/dockerd.log" >&2; tail -n 20 "$WORK/dockerd.log" >&2; exit 1; }
  fi
  redis_built docker || podman save "$REDIS" | docker load >/dev/null
  docker_version="docker $(docker version --format '{{.Server.Version}}')"
fi
echo "container mode ready: podman $(podman version --format '{{.Client.Version}}'), $docker_version, base $BASE, redis $REDIS"
