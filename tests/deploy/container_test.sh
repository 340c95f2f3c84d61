#!/usr/bin/env bash
# The container image, run as an operator would: deploy/container/build.sh --prebuilt wraps the
# suite's own binary in the runtime image (the full in-image compile is too slow for the suite's
# time budget; see docs/deploying.md), then the image migrates and imports the demo data into a
# database of its own on the test PostgreSQL and serves with host networking, a read-only root
# and a state volume. Checks: non-root user, /go/demo's 302, /readyz, /metrics, the HEALTHCHECK,
# and that `podman stop` (SIGTERM) ends it with exit 0 within the stop timeout. Prints the size.
#
# Needs REFGATE_TEST_DATABASE_URL and REFGATE_TEST_REDIS_URL (deploy/local/test.sh exports them).
# Exits 77 (skipped) without podman or root. Usage: container_test.sh REFGATE_BINARY
set -euo pipefail

HERE="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)"
# shellcheck source-path=SCRIPTDIR source=../../deploy/local/lib.sh
source "$HERE/../../deploy/local/lib.sh"

BIN=${1:?usage: container_test.sh REFGATE_BINARY}
: "${REFGATE_TEST_DATABASE_URL:?REFGATE_TEST_DATABASE_URL must name the test PostgreSQL}"
: "${REFGATE_TEST_REDIS_URL:?REFGATE_TEST_REDIS_URL must name the test Redis}"
if ! command -v podman >/dev/null || ((EUID != 0)); then
  echo "skipped: needs podman and root (debootstrap)"
  exit 77
fi
[[ -n ${CONTAINERS_CONF:-} || -e /etc/containers/containers.conf ]] ||
  export CONTAINERS_CONF="$ROOT/deploy/container/containers.conf"
PSQL="${REFGATE_TEST_PG_BINDIR:-$PG_BINDIR}/psql"
STOP_TIMEOUT=30

WORK=$(mktemp -d "${TMPDIR:-/tmp}/refgate-container.XXXXXX")
chmod 755 "$WORK"
NAME="refgate-test-$$"
TAG="localhost/refgate-test:$$"
DB="refgate_container_$$"
cleanup() {
  local rc=$?
  if ((rc != 0)); then
    echo "--- container log (last 30 lines)" >&2
    podman logs --tail 30 "$NAME" >&2 2>&1 || true
  fi
  podman rm -f -t 0 "$NAME" >/dev/null 2>&1 || true
  podman volume rm -f "$NAME" >/dev/null 2>&1 || true
  podman rmi -f "$TAG" >/dev/null 2>&1 || true
  "$PSQL" -X -q "$REFGATE_TEST_DATABASE_URL" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" \
    >/dev/null 2>&1 || true
  rm -rf -- "$WORK"
  exit "$rc"
}
trap cleanup EXIT
fail() {
  printf 'FAIL: %s\n' "$*" >&2
  exit 1
}

# A sanitizer build needs its runtime libraries in the image too. (ldd's output is read whole:
# `ldd | grep -q` under pipefail fails whenever grep's early exit lands ldd a SIGPIPE.)
extra=()
[[ $(ldd "$BIN") == *libasan* ]] && extra=(--extra-packages libasan8)
SECONDS=0
"$ROOT/deploy/container/build.sh" --prebuilt "$BIN" --tag "$TAG" "${extra[@]}" >"$WORK/build.log" 2>&1 ||
  {
    tail -n 30 "$WORK/build.log" >&2
    fail "deploy/container/build.sh --prebuilt failed"
  }
log "image $TAG built in $SECONDS s"

user=$(podman image inspect --format '{{.Config.User}}' "$TAG")
[[ $user == 10001:10001 ]] || fail "the image runs as '$user', not the unprivileged 10001:10001"
signal=$(podman image inspect --format '{{.Config.StopSignal}}' "$TAG")
[[ $signal == SIGTERM ]] || fail "the image's stop signal is '$signal'"

"$PSQL" -X -q -v ON_ERROR_STOP=1 "$REFGATE_TEST_DATABASE_URL" -c "CREATE DATABASE $DB"
PUBLIC_PORT=$(free_port)
ADMIN_PORT=$(free_port)
[[ $ADMIN_PORT != "$PUBLIC_PORT" ]] || ADMIN_PORT=$(free_port)
# LeakSanitizer cannot stop the world under the container's seccomp profile; the rest of the
# suite checks leaks.
env_args=(-e "REFGATE_DATABASE_URL=${REFGATE_TEST_DATABASE_URL%/*}/$DB"
  -e "REFGATE_REDIS_URL=$REFGATE_TEST_REDIS_URL"
  -e "REFGATE_LISTEN=127.0.0.1:$PUBLIC_PORT" -e "REFGATE_ADMIN_LISTEN=127.0.0.1:$ADMIN_PORT"
  -e REFGATE_DRAIN_MS=1000 -e REFGATE_SHUTDOWN_TIMEOUT_MS=5000 -e ASAN_OPTIONS=detect_leaks=0)
cp "$ROOT/deploy/local/demo.json" "$WORK/demo.json"
chmod 644 "$WORK/demo.json"
podman run --rm --network host --health-interval disable "${env_args[@]}" "$TAG" migrate >"$WORK/migrate.log" 2>&1 ||
  fail "refgate migrate in the image failed: $(tail -n 5 "$WORK/migrate.log")"
podman run --rm --network host --health-interval disable "${env_args[@]}" -v "$WORK/demo.json:/demo.json:ro" "$TAG" \
  import /demo.json >"$WORK/import.log" 2>&1 ||
  fail "refgate import in the image failed: $(tail -n 5 "$WORK/import.log")"

podman volume create "$NAME" >/dev/null
# No systemd here to run the HEALTHCHECK on a timer: it is run once by hand below.
podman run -d --name "$NAME" --network host --read-only -v "$NAME:/var/lib/refgate" \
  --health-interval disable --stop-timeout "$STOP_TIMEOUT" "${env_args[@]}" "$TAG" >/dev/null \
  2>"$WORK/run.log"
for ((i = 0; i < 150; i++)); do
  curl -fsS -o /dev/null "http://127.0.0.1:$PUBLIC_PORT/readyz" 2>/dev/null && break
  [[ $(podman inspect --format '{{.State.Running}}' "$NAME") == true ]] || fail "the container exited"
  sleep 0.2
done
curl -fsS -o /dev/null "http://127.0.0.1:$PUBLIC_PORT/readyz" || fail "/readyz never answered 200"

headers=$(curl -sS -o /dev/null -D - "http://127.0.0.1:$PUBLIC_PORT/go/demo" | tr -d '\r')
[[ $headers == "HTTP/1.1 302 Found"* ]] || fail "/go/demo did not answer 302: $headers"
grep -qi '^location: https://www.example.com/pricing?.*ref=picks42' <<<"$headers" ||
  fail "/go/demo's Location lacks the referral code: $headers"
metrics=$(curl -fsS "http://127.0.0.1:$ADMIN_PORT/metrics") || fail "/metrics failed"
grep -q '^refgate_build_info{' <<<"$metrics" || fail "/metrics has no refgate_build_info"
podman healthcheck run "$NAME" >/dev/null || fail "the image's HEALTHCHECK failed on a serving refgate"
ls_state=$(podman exec "$NAME" ls /var/lib/refgate) || fail "cannot list the state volume"
for ((i = 0; i < 50 && ${#ls_state} == 0; i++)); do
  sleep 0.1
  ls_state=$(podman exec "$NAME" ls /var/lib/refgate)
done
[[ $ls_state == *refgate-snapshot.json* ]] || fail "no snapshot file in the state volume: $ls_state"

SECONDS=0
podman stop -t "$STOP_TIMEOUT" "$NAME" >/dev/null 2>>"$WORK/run.log"
took=$SECONDS
code=$(podman inspect --format '{{.State.ExitCode}}' "$NAME")
[[ $code == 0 ]] || fail "SIGTERM ended the container with exit code $code, not 0"
((took < STOP_TIMEOUT)) || fail "the stop took $took s, not under the $STOP_TIMEOUT s timeout"
size=$(podman image inspect --format '{{.Size}}' "$TAG")
echo "image $TAG: $((size / 1000000)) MB; migrate, import, 302, /readyz, /metrics, HEALTHCHECK ok; stopped by SIGTERM in $took s with exit 0"
