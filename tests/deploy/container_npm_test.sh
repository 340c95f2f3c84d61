#!/usr/bin/env bash
# The image build's npm stage, run for real on this machine (issue 38): `deploy/container/build.sh
# --target npm --no-cache` installs Node and npm in the image and runs every `npm ci` of the build
# afresh. Behind a TLS-inspecting proxy, as on this project's own machines, that works only with
# the host's trust, which build.sh passes as build secrets (without it: SELF_SIGNED_CERT_IN_CHAIN).
# The stage must cover every project of deploy/local/lib.sh's npm_ci_build_inputs, and the build
# stage must copy each one's node_modules.
#
# Then the runtime image (build.sh --prebuilt around REFGATE_BINARY: the same runtime stage as the
# full build, whose one RUN mounts the same secrets) and the npm stage are searched for the host's
# trust: no extra CA certificate (one beyond Debian's ca-certificates), proxy setting, npmrc or
# mounted secret in their files, Config.Env or history. Canaries make that hold on a machine
# without a proxy too: a CA of the test's own (NODE_EXTRA_CA_CERTS), a no_proxy entry, an npm
# noproxy entry and an apt proxy setting (APT_CONFIG), all harmless to the build.
#
# Needs podman and root (debootstrap); exits 77 (skipped) without. Takes 2-4 minutes here once the
# Debian base exists (it is shared with container_test.sh: same base). Usage:
# container_npm_test.sh REFGATE_BINARY
set -euo pipefail

HERE="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)"
# shellcheck source-path=SCRIPTDIR source=../../deploy/local/lib.sh
source "$HERE/../../deploy/local/lib.sh"

BIN=${1:?usage: container_npm_test.sh REFGATE_BINARY}
if ! command -v podman >/dev/null || ((EUID != 0)); then
  echo "skipped: needs podman and root (debootstrap)"
  exit 77
fi
[[ -n ${CONTAINERS_CONF:-} || -e /etc/containers/containers.conf ]] ||
  export CONTAINERS_CONF="$ROOT/deploy/container/containers.conf"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/refgate-container-npm.XXXXXX")
NPM_TAG="localhost/refgate-test-npm:$$"
TAG="localhost/refgate-test-trust:$$"
MOUNTED=()
cleanup() {
  local rc=$? image
  for image in "${MOUNTED[@]}"; do
    podman image unmount "$image" >/dev/null 2>&1 || true
  done
  podman rmi -f "$NPM_TAG" "$TAG" >/dev/null 2>&1 || true
  rm -rf -- "$WORK"
  exit "$rc"
}
trap cleanup EXIT
failures=0
problem() {
  printf 'FAIL: %s\n' "$*" >&2
  failures=$((failures + 1))
}

# ---------------------------------------------------------------- canaries

CANARY="refgate-canary-$$-$RANDOM.invalid"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
  -subj "/CN=$CANARY" -keyout "$WORK/canary.key" -out "$WORK/canary.pem" 2>/dev/null
# The host's own NODE_EXTRA_CA_CERTS stays in force beside the canary.
cat "$WORK/canary.pem" ${NODE_EXTRA_CA_CERTS:+"$NODE_EXTRA_CA_CERTS"} >"$WORK/node-extra-ca.pem"
export NODE_EXTRA_CA_CERTS="$WORK/node-extra-ca.pem"
no_proxy="${no_proxy:-${NO_PROXY:-}}"
export no_proxy="${no_proxy:+$no_proxy,}$CANARY"
noproxy=$(npm config get noproxy 2>/dev/null || true)
export npm_config_noproxy="${noproxy:+$noproxy,}npm-$CANARY"
{
  [[ -z ${APT_CONFIG:-} ]] || printf '#include "%s";\n' "$APT_CONFIG"
  printf 'Acquire::http::Proxy::apt-%s "DIRECT";\n' "$CANARY"
} >"$WORK/apt.conf"
export APT_CONFIG="$WORK/apt.conf"

# The host's trust to look for: the canaries, and every certificate the host trusts beyond
# Debian's own set (which the images may carry through ca-certificates), by its full base64 lines.
pem_lines() {
  awk '/-----BEGIN CERTIFICATE-----/ { inside = 1; next } /-----END CERTIFICATE-----/ { inside = 0 }
       inside && length($0) == 64 { print }' "$@" 2>/dev/null || true
}
cafile=$(npm config get cafile 2>/dev/null || true)
[[ $cafile == null || ! -s $cafile ]] && cafile=""
shopt -s nullglob
pem_lines /usr/share/ca-certificates/mozilla/*.crt | sort -u >"$WORK/debian-lines"
pem_lines "$NODE_EXTRA_CA_CERTS" ${cafile:+"$cafile"} /usr/local/share/ca-certificates/*.crt \
  /usr/local/share/ca-certificates/*/*.crt /etc/ssl/certs/ca-certificates.crt |
  sort -u | comm -23 - "$WORK/debian-lines" >"$WORK/patterns"
cert_lines=$(wc -l <"$WORK/patterns")
printf '%s\n' "$CANARY" >>"$WORK/patterns"

# ---------------------------------------------------------------- the npm stage

# The same Debian base as container_test.sh (a sanitizer build's libraries in it), so a run
# makes it once.
extra=()
[[ $(ldd "$BIN") == *libasan* ]] && extra=(--extra-packages libasan8)
SECONDS=0
"$ROOT/deploy/container/build.sh" --target npm --no-cache --tag "$NPM_TAG" "${extra[@]}" \
  >"$WORK/npm.log" 2>&1 || {
  grep -E 'npm ERR!|^E: |Error' "$WORK/npm.log" | tail -n 20 >&2 || tail -n 30 "$WORK/npm.log" >&2
  printf 'FAIL: build.sh --target npm failed: the npm stage cannot run its npm ci here\n' >&2
  exit 1
}
log "npm stage built afresh in $SECONDS s"
grep -q "passing this machine's trust" "$WORK/npm.log" ||
  problem "build.sh passed none of this machine's trust (not even the canaries)"

# Every npm project of the build (lib.sh's list) is installed in the npm stage and copied into
# the build stage.
# shellcheck disable=SC2016 # $ROOT as lib.sh spells it
mapfile -t projects < <(sed -n '/^npm_ci_build_inputs()/,/^}/p' "$ROOT/deploy/local/lib.sh" |
  sed -n 's|.*npm_ci_if_stale "$ROOT/\([^"]*\)".*|\1|p')
# At least the console's toolchain and the data sets (third_party): fewer means the list was misread.
[[ " ${projects[*]} " == *" src/console/web "* && " ${projects[*]} " == *" third_party "* ]] ||
  problem "npm_ci_build_inputs does not read as the console's and third_party's npm ci (found: ${projects[*]})"
npm_root=$(podman image mount "$NPM_TAG")
MOUNTED+=("$NPM_TAG")
for project in "${projects[@]}"; do
  [[ -s $npm_root/src/$project/node_modules/.package-lock.json ]] ||
    problem "the npm stage has no npm ci of $project (deploy/local/lib.sh's npm_ci_build_inputs names it)"
  grep -q "^COPY --from=npm /src/$project/node_modules $project/node_modules\$" \
    "$ROOT/deploy/container/Containerfile" ||
    problem "the build stage does not copy $project/node_modules from the npm stage"
done

# ---------------------------------------------------------------- the runtime image

SECONDS=0
"$ROOT/deploy/container/build.sh" --prebuilt "$BIN" --tag "$TAG" "${extra[@]}" >"$WORK/runtime.log" 2>&1 || {
  tail -n 30 "$WORK/runtime.log" >&2
  printf 'FAIL: build.sh --prebuilt failed\n' >&2
  exit 1
}
log "runtime image built in $SECONDS s"
runtime_root=$(podman image mount "$TAG")
MOUNTED+=("$TAG")

# check_image WHAT TAG ROOTFS: the image holds none of the host's trust.
check_image() {
  local what=$1 image=$2 rootfs=$3 env history hits
  env=$(podman image inspect --format '{{range .Config.Env}}{{println .}}{{end}}' "$image")
  if grep -i -E '^[a-z_]*proxy=|^NODE_EXTRA_CA_CERTS=|^APT_CONFIG=|^npm_config_|^SSL_CERT' <<<"$env"; then
    problem "the $what's Config.Env carries a proxy or CA setting"
  fi
  grep -q -F -f "$WORK/patterns" <<<"$env" && problem "the $what's Config.Env carries the host's trust"
  history=$(podman history --no-trunc --format '{{.CreatedBy}}' "$image")
  if grep -F -f "$WORK/patterns" <<<"$history" >/dev/null; then
    problem "the $what's history carries the host's CA or proxy settings"
  fi
  hits=$(grep -r -l -F -f "$WORK/patterns" "$rootfs" 2>/dev/null | sed "s|^$rootfs||" | head -n 5 | tr "\n" " " || true)
  [[ -z $hits ]] || problem "the $what's files carry the host's CA or proxy settings: $hits"
  hits=$(find "$rootfs/tmp" "$rootfs/run" -maxdepth 2 -name 'host-*' 2>/dev/null | sed "s|^$rootfs||" || true)
  [[ -z $hits ]] || problem "the $what keeps a mounted secret's file: $hits"
}
check_image "npm stage" "$NPM_TAG" "$npm_root"
check_image "runtime image" "$TAG" "$runtime_root"
hits=$(find "$runtime_root" -xdev \( -name npmrc -o -name .npmrc \) 2>/dev/null | sed "s|^$runtime_root||" || true)
[[ -z $hits ]] || problem "the runtime image has an npmrc: $hits"

((failures == 0)) || exit 1
passed=$(sed -n 's/.*as build secrets: //p' "$WORK/npm.log" | head -n 1)
echo "npm stage: npm ci of ${#projects[@]} projects afresh with the host's trust ($passed);" \
  "neither it nor the runtime image holds any of it (searched: $cert_lines lines of the host's" \
  "extra CA certificates, the canaries)"
