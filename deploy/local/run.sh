#!/usr/bin/env bash
# Runs refgate locally: installs packages, builds Release, starts a private
# PostgreSQL (127.0.0.1:54329) and Redis (127.0.0.1:63799) under .state/run,
# migrates, imports demo.json and serves in the foreground. Ctrl-C stops
# everything. Data persists across runs in .state/run. While it serves,
# .state/run/env holds what `source deploy/local/env.sh` gives a second terminal.
set -euo pipefail

HERE="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)"
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$HERE/lib.sh"

STATE="$ROOT/.state/run"
PG_PORT=54329
REDIS_PORT=63799
BIN="$ROOT/build/release/refgate"
ENV_FILE="$STATE/env"

lock_state run
# Servers are stopped however we leave; the signal traps turn a Ctrl-C during
# setup into a normal exit so the EXIT trap runs.
trap 'rm -f "$ENV_FILE"; stop_all' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# shellcheck disable=SC2119 # no packages but REFGATE_APT_PACKAGES
ensure_packages
npm_ci_build_inputs
# The service only: the test suite is built (with sanitizers) by test.sh.
build release Release -DREFGATE_BUILD_TESTS=OFF

start_postgres "$STATE" "$PG_PORT" on
ensure_database "$PG_PORT" refgate
start_redis "$STATE" "$REDIS_PORT"

export REFGATE_DATABASE_URL="postgresql://refgate@127.0.0.1:$PG_PORT/refgate"
export REFGATE_REDIS_URL="redis://127.0.0.1:$REDIS_PORT/0"
# These may be overridden from the caller's environment.
export REFGATE_LISTEN="${REFGATE_LISTEN:-127.0.0.1:8080}"
if [[ -z ${REFGATE_ADMIN_LISTEN:-} ]]; then
  REFGATE_ADMIN_LISTEN=127.0.0.1:9090
  # A Prometheus (or anything else) on 9090 would stop the admin listener: take 9091 then.
  if (exec 3<>/dev/tcp/127.0.0.1/9090) 2>/dev/null; then
    log "127.0.0.1:9090 is taken (a Prometheus service?); the admin listener uses 127.0.0.1:9091"
    REFGATE_ADMIN_LISTEN=127.0.0.1:9091
  fi
fi
export REFGATE_ADMIN_LISTEN
# The snapshot and spill files live in the state directory.
export REFGATE_STATE_DIR="${REFGATE_STATE_DIR:-$STATE}"
# Ctrl-C should stop a developer's instance at once; deployments keep the drain (drain_ms).
export REFGATE_DRAIN_MS="${REFGATE_DRAIN_MS:-0}"
# /snippet/ links point here; a placeholder for the demo.
export REFGATE_PUBLIC_BASE_URL="${REFGATE_PUBLIC_BASE_URL:-https://picks.example.com}"

"$BIN" migrate
"$BIN" import "$ROOT/deploy/local/demo.json"
# A console user for the demo: created once, with a new password at every start (in the banner).
CONSOLE_PASSWORD=$("$BIN" user create --name demo --role admin 2>/dev/null | tail -n 1) ||
  CONSOLE_PASSWORD=$("$BIN" user set-password demo | tail -n 1)

cat >&2 <<BANNER

  refgate is starting
    redirects  http://$REFGATE_LISTEN
    admin      http://$REFGATE_ADMIN_LISTEN
    console    http://$REFGATE_ADMIN_LISTEN/console/  (name: demo, password: $CONSOLE_PASSWORD)
    database   $REFGATE_DATABASE_URL
    redis      $REFGATE_REDIS_URL
  try: curl -i http://$REFGATE_LISTEN/go/demo
  a second terminal: source deploy/local/env.sh  (then see the README's walk-through)
  Ctrl-C stops refgate, PostgreSQL and Redis.

BANNER

# Ctrl-C reaches refgate directly (same process group). The no-op traps keep
# this shell alive until it exits, so we return its exit code and the EXIT
# trap stops the databases. Not exec'd for the same reason.
trap ':' INT TERM HUP
write_env_file "$ENV_FILE" "$(dirname -- "$BIN")"
rc=0
nolock "$BIN" serve || rc=$?
log "refgate serve exited with status $rc"
exit "$rc"
