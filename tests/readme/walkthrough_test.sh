#!/usr/bin/env bash
# Runs the README's walk-through as written, so the document and the service cannot drift:
# every fenced ```sh block that follows a `<!-- walkthrough -->` line (blank lines between are
# allowed) is extracted in order and run with `bash -euo pipefail`, from the repository root,
# against the demo data (deploy/local/demo.json) on a refgate of its own, the way a second
# terminal runs it beside deploy/local/run.sh. Any failing command fails the test.
#
# Needs REFGATE_BIN and REFGATE_TEST_DATABASE_URL (exported by deploy/local/test.sh); creates and
# drops a database of its own there, and starts a private redis-server so that its flusher never
# takes another test's buckets. Usage: walkthrough_test.sh [README] (default: the repo's README.md).
set -euo pipefail

HERE="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)"
# shellcheck source-path=SCRIPTDIR source=../../deploy/local/lib.sh
source "$HERE/../../deploy/local/lib.sh"

README=${1:-$ROOT/README.md}
: "${REFGATE_BIN:?REFGATE_BIN must name the refgate binary}"
: "${REFGATE_TEST_DATABASE_URL:?REFGATE_TEST_DATABASE_URL must name the test PostgreSQL}"
PSQL="${REFGATE_TEST_PG_BINDIR:-$PG_BINDIR}/psql"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/refgate-readme.XXXXXX")
DB="refgate_readme_$$"
REFGATE_PID=""
REDIS_PID=""

cleanup() {
  local rc=$?
  if [[ -n $REFGATE_PID ]]; then
    kill -TERM "$REFGATE_PID" 2>/dev/null || true
    wait "$REFGATE_PID" 2>/dev/null || true
  fi
  if [[ -n $REDIS_PID ]]; then
    kill -TERM "$REDIS_PID" 2>/dev/null || true
    wait "$REDIS_PID" 2>/dev/null || true
  fi
  if ((rc != 0)) && [[ -r $WORK/refgate.log ]]; then
    echo "--- refgate log (last 30 lines)" >&2
    tail -n 30 "$WORK/refgate.log" >&2
  fi
  "$PSQL" -X -q "$REFGATE_TEST_DATABASE_URL" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" \
    >/dev/null 2>&1 || true
  rm -rf -- "$WORK"
  exit "$rc"
}
trap cleanup EXIT

# The walk-through: ```sh blocks right after a <!-- walkthrough --> marker.
extract_walkthrough() {
  awk '
    /^<!-- walkthrough -->[[:space:]]*$/ { armed = 1; next }
    armed && /^```sh[[:space:]]*$/       { armed = 0; inside = 1; blocks++; next }
    inside && /^```[[:space:]]*$/        { inside = 0; print ""; next }
    inside                               { print; next }
    armed && NF                          { armed = 0 }
    END { if (inside) { print "unterminated walkthrough block" > "/dev/stderr"; exit 1 }
          if (!blocks) { print "no <!-- walkthrough --> blocks" > "/dev/stderr"; exit 1 } }
  ' "$1"
}

extract_walkthrough "$README" >"$WORK/walkthrough.sh"
log "walk-through: $(grep -c . "$WORK/walkthrough.sh") lines from $README"

# env.sh must fail, saying what to do, when nothing is running.
if out=$(cd "$ROOT" && REFGATE_ENV_FILE="$WORK/missing" bash -c 'source deploy/local/env.sh' 2>&1); then
  die "env.sh without a running refgate succeeded: $out"
fi
[[ $out == *"start deploy/local/run.sh"* ]] || die "env.sh did not say what to do: $out"

# A database of our own with the demo data, as run.sh prepares it.
"$PSQL" -X -q -v ON_ERROR_STOP=1 "$REFGATE_TEST_DATABASE_URL" -c "CREATE DATABASE $DB"
export REFGATE_DATABASE_URL="${REFGATE_TEST_DATABASE_URL%/*}/$DB"
REDIS_PORT=$(free_port)
redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --dir "$WORK" --save '' \
  --appendonly yes --maxmemory-policy noeviction >"$WORK/redis.log" 2>&1 &
REDIS_PID=$!
for ((i = 0; i < 100; i++)); do
  [[ $(redis-cli -p "$REDIS_PORT" ping 2>/dev/null) == PONG ]] && break
  sleep 0.1
done
export REFGATE_REDIS_URL="redis://127.0.0.1:$REDIS_PORT/0"

"$REFGATE_BIN" migrate >/dev/null 2>>"$WORK/refgate.log"
"$REFGATE_BIN" import "$ROOT/deploy/local/demo.json" >/dev/null 2>>"$WORK/refgate.log"

REFGATE_LISTEN=127.0.0.1:0 REFGATE_ADMIN_LISTEN=127.0.0.1:0 REFGATE_DRAIN_MS=0 \
  REFGATE_SNAPSHOT_FILE="$WORK/snapshot.json" REFGATE_SPILL_FILE="$WORK/spill.json" \
  REFGATE_PUBLIC_BASE_URL=https://picks.example.com \
  "$REFGATE_BIN" serve 2>>"$WORK/refgate.log" &
REFGATE_PID=$!

# The ports come from the "listening" log lines (port 0 above: the kernel picks free ones).
PUBLIC_PORT=""
ADMIN_PORT=""
for ((i = 0; i < 200; i++)); do
  while IFS= read -r line; do
    port=$(grep -o '"port":[0-9]*' <<<"$line" | cut -d: -f2)
    case $line in
      *'"listener":"public"'*) PUBLIC_PORT=$port ;;
      *'"listener":"admin"'*) ADMIN_PORT=$port ;;
    esac
  done < <(grep '"msg":"listening"' "$WORK/refgate.log" || true)
  [[ -n $PUBLIC_PORT && -n $ADMIN_PORT ]] && break
  kill -0 "$REFGATE_PID" 2>/dev/null || die "refgate serve exited"
  sleep 0.1
done
[[ -n $PUBLIC_PORT && -n $ADMIN_PORT ]] || die "refgate serve did not report its ports"
for ((i = 0; i < 100; i++)); do
  curl -fsS -o /dev/null "http://127.0.0.1:$ADMIN_PORT/readyz" 2>/dev/null && break
  sleep 0.1
done

REFGATE_LISTEN=127.0.0.1:$PUBLIC_PORT REFGATE_ADMIN_LISTEN=127.0.0.1:$ADMIN_PORT \
  write_env_file "$WORK/env" "$(dirname -- "$REFGATE_BIN")"

# As a reader's fresh second terminal would: nothing of ours but the env file's location.
log "running the walk-through against P=http://127.0.0.1:$PUBLIC_PORT A=http://127.0.0.1:$ADMIN_PORT"
rc=0
(cd "$ROOT" && env -u REFGATE_DATABASE_URL -u REFGATE_REDIS_URL REFGATE_ENV_FILE="$WORK/env" \
  bash -euo pipefail -x "$WORK/walkthrough.sh") || rc=$?
if ((rc != 0)); then
  die "the README's walk-through failed (exit $rc); the commands are traced above"
fi
log "the README's walk-through ran as written"
