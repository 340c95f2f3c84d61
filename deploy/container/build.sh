#!/usr/bin/env bash
# Builds refgate's container image as localhost/refgate:<version> with podman (or docker).
#
#   deploy/container/build.sh                       full build: compile inside the image (Release)
#   deploy/container/build.sh --base debian:bookworm-slim
#                                                   same, from a pulled base (a normal host)
#   deploy/container/build.sh --prebuilt build/release/refgate
#                                                   runtime image around a binary built here
#
# Without --base, the Debian 12 base is made from the mirror of this machine's apt sources with
# `debootstrap --variant=minbase bookworm` (with the runtime libraries already in it) and
# `podman import`ed; its tarball is cached under .state/container/, so only the first build pays
# for it. Needs root for debootstrap.
#
# Options: --base IMAGE, --prebuilt BINARY, --extra-packages "PKG ..." (libraries a special build
# needs, e.g. "libasan8 libubsan1" for a sanitizer build), --tag TAG (default
# localhost/refgate:<version>), --engine podman|docker. Prints the tag on the last line.
set -euo pipefail

HERE="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)"
ROOT="$(cd -- "$HERE/../.." && pwd -P)"
CACHE="$ROOT/.state/container"

base="" prebuilt="" extra="" tag="" engine=${CONTAINER_ENGINE:-podman}
while (($#)); do
  case $1 in
    --base) base=$2 && shift 2 ;;
    --prebuilt) prebuilt=$2 && shift 2 ;;
    --extra-packages) extra=$2 && shift 2 ;;
    --tag) tag=$2 && shift 2 ;;
    --engine) engine=$2 && shift 2 ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' && exit 0 ;;
    *) echo "build.sh: unknown argument $1 (see --help)" >&2 && exit 2 ;;
  esac
done
log() { printf '[refgate] %s\n' "$*" >&2; }

version=$(sed -n 's/^project(refgate VERSION \([0-9.]*\).*/\1/p' "$ROOT/CMakeLists.txt")
[[ -n $version ]] || {
  log "no version in CMakeLists.txt"
  exit 1
}
tag=${tag:-localhost/refgate:$version}

# podman 4.3 on a machine like this project's CI needs runc, cgroupfs and a file event log
# (containers.conf beside this script); a machine with its own containers.conf keeps it.
if [[ $engine == podman && -z ${CONTAINERS_CONF:-} && ! -e /etc/containers/containers.conf ]]; then
  export CONTAINERS_CONF="$HERE/containers.conf"
fi

# The first deb line's mirror of this machine's apt sources (debootstrap's default otherwise).
apt_mirror() {
  local uri
  uri=$(grep -hsE '^URIs: .*/debian/?$' /etc/apt/sources.list.d/*.sources | head -n 1 | cut -d' ' -f2)
  [[ -n $uri ]] || uri=$(grep -hsE '^deb .*/debian/? ' /etc/apt/sources.list | head -n 1 | cut -d' ' -f2)
  printf '%s' "$uri"
}

# make_base -> prints the image name of a debootstrapped Debian 12 with the runtime libraries.
make_base() {
  local packages key image tarball rootfs
  packages=$(grep -v '^#' "$HERE/runtime-packages.txt" | tr '\n' ' ')
  packages="$packages $extra"
  key=$(printf '%s' "$packages" | sha256sum | cut -c1-12)
  image="localhost/refgate-base:bookworm-$key"
  tarball="$CACHE/bookworm-minbase-$key.tar"
  if "$engine" image exists "$image" 2>/dev/null; then
    printf '%s' "$image"
    return
  fi
  if [[ ! -s $tarball ]]; then
    command -v debootstrap >/dev/null || {
      log "debootstrap is missing (apt-get install debootstrap), or pass --base debian:bookworm-slim"
      exit 1
    }
    mkdir -p "$CACHE"
    rootfs=$(mktemp -d "$CACHE/rootfs.XXXXXX")
    log "debootstrap --variant=minbase bookworm (+ runtime libraries) into $rootfs"
    local mirror=()
    [[ -z $(apt_mirror) ]] || mirror=("$(apt_mirror)")
    # shellcheck disable=SC2086 # one word per package
    debootstrap --variant=minbase --include="$(echo $packages | tr ' ' ,)" bookworm "$rootfs" \
      "${mirror[@]}" >"$CACHE/debootstrap.log" 2>&1 || {
      tail -n 20 "$CACHE/debootstrap.log" >&2
      rm -rf "$rootfs"
      exit 1
    }
    rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/* \
      "$rootfs"/usr/share/doc/* "$rootfs"/usr/share/man/* "$rootfs"/usr/share/locale/*
    tar -C "$rootfs" -cf "$tarball.tmp" . && mv "$tarball.tmp" "$tarball"
    rm -rf "$rootfs"
  fi
  log "importing $tarball as $image"
  "$engine" import "$tarball" "$image" >/dev/null
  printf '%s' "$image"
}

[[ -n $base ]] || base=$(make_base)

build_args=(--build-arg "BASE=$base" -t "$tag")
# HEALTHCHECK is a Docker-format field; podman drops it from OCI images.
[[ $engine == podman ]] && build_args+=(--format docker --network host)

if [[ -n $prebuilt ]]; then
  [[ -x $prebuilt ]] || {
    log "--prebuilt $prebuilt: not an executable"
    exit 1
  }
  context=$(mktemp -d)
  trap 'rm -rf "$context"' EXIT
  cp "$prebuilt" "$context/refgate"
  cp "$ROOT/LICENSE" "$HERE/runtime-packages.txt" "$HERE/runtime-setup.sh" "$context/"
  log "building $tag around $prebuilt (base $base)"
  "$engine" build "${build_args[@]}" --build-arg "EXTRA_PACKAGES=$extra" \
    -f "$HERE/Containerfile.prebuilt" "$context" >&2
else
  commit=$(git -C "$ROOT" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
  log "building $tag from the source tree (base $base; compiles refgate inside the image)"
  "$engine" build "${build_args[@]}" --build-arg "REFGATE_COMMIT=$commit" \
    -f "$HERE/Containerfile" "$ROOT" >&2
fi
echo "$tag"
