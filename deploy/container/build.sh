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
# The build's RUN steps get this machine's trust when it has any: behind a TLS-inspecting proxy
# apt and npm inside the build reach their mirrors only with the host's extra CA and proxy
# settings. build.sh passes them as build secrets (mounted for one RUN at a time, never committed):
# its CA bundle (the system bundle with NODE_EXTRA_CA_CERTS and npm's cafile) when the host trusts
# an extra CA, its proxy variables, npm's proxy, https-proxy, noproxy and registry settings, and
# apt's proxy settings. The runtime image carries none of it. See docs/deploying.md.
#
# Options: --base IMAGE, --prebuilt BINARY, --extra-packages "PKG ..." (libraries a special build
# needs, e.g. "libasan8" for a sanitizer build), --tag TAG (default
# localhost/refgate:<version>), --engine podman|docker, --target STAGE (build only up to that
# stage of the Containerfile, e.g. npm: every `npm ci` of the build), --no-cache (run every step
# afresh, keeping no intermediate images), --no-host-trust (pass none of this machine's trust).
# Prints the tag on the last line.
set -euo pipefail

HERE="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)"
ROOT="$(cd -- "$HERE/../.." && pwd -P)"
CACHE="$ROOT/.state/container"

base="" prebuilt="" extra="" tag="" target="" no_cache="" host_trust=1
engine=${CONTAINER_ENGINE:-podman}
while (($#)); do
  case $1 in
    --base) base=$2 && shift 2 ;;
    --prebuilt) prebuilt=$2 && shift 2 ;;
    --extra-packages) extra=$2 && shift 2 ;;
    --tag) tag=$2 && shift 2 ;;
    --engine) engine=$2 && shift 2 ;;
    --target) target=$2 && shift 2 ;;
    --no-cache) no_cache=1 && shift ;;
    --no-host-trust) host_trust="" && shift ;;
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

# ------------------------------------------------------------------ the host's trust

# pem_certs FILE... -> the certificates in FILEs, each once, as PEM (comments dropped).
pem_certs() {
  awk '/-----BEGIN CERTIFICATE-----/ { pem = ""; inside = 1 }
       inside { sub(/\r$/, ""); pem = pem $0 "\n" }
       inside && /-----END CERTIFICATE-----/ { inside = 0; if (!(pem in seen)) { seen[pem] = 1; printf "%s", pem } }' "$@"
}

# shell_quote VALUE -> VALUE in single quotes, for sh.
shell_quote() { printf "'%s'" "${1//\'/\'\\\'\'}"; }

# npm_setting NAME -> the host npm's value of NAME ("" when unset or when there is no npm).
npm_setting() {
  local value
  value=$(npm config get "$1" 2>/dev/null) || return 0
  [[ $value == null || $value == undefined ]] || printf '%s' "$value"
}

# host_trust DIR: writes this machine's trust for the build's RUN steps into DIR, only what it
# has: host-ca.pem (the CA bundle, when the host trusts a CA beyond its system bundle's usual
# set), host-env.sh (exports of proxy variables and npm settings), host-apt.conf (apt's proxy
# settings; the CA bundle for https). Logs what it passes, never a value (a proxy URL may carry
# a password).
host_trust() {
  local dir=$1 system="" cafile="" extra_cas=() passed=() f name value
  for f in /etc/ssl/certs/ca-certificates.crt /etc/pki/tls/certs/ca-bundle.crt /etc/ssl/cert.pem; do
    [[ -s $f ]] && system=$f && break
  done
  # An extra CA: NODE_EXTRA_CA_CERTS, npm's cafile, or a local anchor of the system bundle
  # (update-ca-certificates on Debian, update-ca-trust on Fedora).
  [[ -n ${NODE_EXTRA_CA_CERTS:-} && -s $NODE_EXTRA_CA_CERTS ]] && extra_cas+=("$NODE_EXTRA_CA_CERTS")
  if command -v npm >/dev/null; then
    cafile=$(npm_setting cafile)
    [[ -n $cafile && -s $cafile ]] && extra_cas+=("$cafile")
  fi
  for f in /usr/local/share/ca-certificates/*.crt /usr/local/share/ca-certificates/*/*.crt \
    /etc/pki/ca-trust/source/anchors/*; do
    [[ -f $f ]] && grep -q -e '-----BEGIN CERTIFICATE-----' "$f" && extra_cas+=("$f")
  done
  if ((${#extra_cas[@]})); then
    pem_certs ${system:+"$system"} "${extra_cas[@]}" >"$dir/host-ca.pem"
    passed+=("its CA bundle ($(grep -c -e '-----BEGIN CERTIFICATE-----' "$dir/host-ca.pem") certificates)")
  fi

  : >"$dir/host-env.sh"
  for name in http_proxy https_proxy ftp_proxy all_proxy no_proxy \
    HTTP_PROXY HTTPS_PROXY FTP_PROXY ALL_PROXY NO_PROXY; do
    [[ -n ${!name:-} ]] || continue
    printf 'export %s=%s\n' "$name" "$(shell_quote "${!name}")" >>"$dir/host-env.sh"
    passed+=("$name")
  done
  if command -v npm >/dev/null; then
    for name in proxy https-proxy noproxy registry; do
      value=$(npm_setting "$name")
      [[ -n $value ]] || continue
      # The registry only when the host names one of its own (npm's default otherwise).
      if [[ $name == registry ]]; then
        [[ $value != "$(cd / && env -u npm_config_registry -u NPM_CONFIG_REGISTRY \
          npm --userconfig "$dir/no-user" --globalconfig "$dir/no-global" config get registry 2>/dev/null)" ]] ||
          continue
      fi
      printf 'export npm_config_%s=%s\n' "${name//-/_}" "$(shell_quote "$value")" >>"$dir/host-env.sh"
      passed+=("npm's $name")
    done
  fi
  [[ -s $dir/host-env.sh ]] || rm "$dir/host-env.sh"

  # apt's proxies (Acquire::http::Proxy, per-host overrides; not Proxy-Auto-Detect, a program
  # of the host's).
  if command -v apt-config >/dev/null; then
    apt-config dump 2>/dev/null | grep -E '^Acquire::[a-z]+::Proxy( |::)' >"$dir/host-apt.conf" || true
    [[ -s $dir/host-apt.conf ]] && passed+=("apt's proxy settings")
  fi
  if [[ -s $dir/host-ca.pem ]]; then
    printf 'Acquire::https::CaInfo "/tmp/host-ca.pem";\n' >>"$dir/host-apt.conf"
  fi
  [[ -s $dir/host-apt.conf ]] || rm -f "$dir/host-apt.conf"

  if ((${#passed[@]})); then
    local list
    list=$(printf ', %s' "${passed[@]}")
    log "passing this machine's trust to the build's RUN steps as build secrets: ${list:2}"
  fi
}

# ------------------------------------------------------------------ the build

[[ -n $base ]] || base=$(make_base)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

build_args=(--build-arg "BASE=$base" -t "$tag")
# HEALTHCHECK is a Docker-format field; podman drops it from OCI images.
[[ $engine == podman ]] && build_args+=(--format docker --network host)
if [[ -n $no_cache ]]; then
  build_args+=(--no-cache)
  # podman would still keep every step as an intermediate image.
  [[ $engine == podman ]] && build_args+=(--layers=false)
fi
if [[ -n $host_trust ]]; then
  mkdir -m 700 "$work/trust"
  host_trust "$work/trust"
  for f in "$work"/trust/host-*; do
    [[ -e $f ]] || continue
    name=${f##*/}
    build_args+=(--secret "id=${name%.*},src=$f")
  done
fi

if [[ -n $prebuilt ]]; then
  [[ -x $prebuilt ]] || {
    log "--prebuilt $prebuilt: not an executable"
    exit 1
  }
  [[ -z $target ]] || {
    log "--target is for the full build (Containerfile), not --prebuilt"
    exit 2
  }
  context=$work/context
  mkdir "$context"
  cp "$prebuilt" "$context/refgate"
  cp "$ROOT/LICENSE" "$HERE/runtime-packages.txt" "$HERE/runtime-setup.sh" "$HERE/host-trust.sh" "$context/"
  log "building $tag around $prebuilt (base $base)"
  "$engine" build "${build_args[@]}" --build-arg "EXTRA_PACKAGES=$extra" \
    -f "$HERE/Containerfile.prebuilt" "$context" >&2
else
  [[ -z $target ]] || build_args+=(--target "$target")
  commit=$(git -C "$ROOT" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
  log "building $tag from the source tree (base $base; ${target:+only up to the stage $target}${target:-compiles refgate inside the image})"
  "$engine" build "${build_args[@]}" --build-arg "REFGATE_COMMIT=$commit" \
    -f "$HERE/Containerfile" "$ROOT" >&2
fi
echo "$tag"
