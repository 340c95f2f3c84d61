#!/usr/bin/env bash
# A rolling upgrade never breaks a running instance: the previous release's binary keeps serving,
# counting and editing against a database that this tree's `refgate migrate` brought up to date,
# side by side with this tree's binary.
#
#   tests/deploy/upgrade_test.sh REV     REV: the release running in production (a commit or tag)
#
# Builds REV Release from `git archive` (build/upgrade-previous) and this tree Release
# (build/release), starts private PostgreSQL and Redis under .state/upgrade
# (REFGATE_UPGRADE_PG_PORT, default 54359; REFGATE_UPGRADE_REDIS_PORT, default 63829), then:
# the previous binary migrates and imports its demo data; this tree migrates the same database;
# the previous binary serves /go/demo (302 with the referral code), its clicks reach PostgreSQL
# through Redis and its own `refgate flush`, its admin API creates a link; this tree's binary,
# serving at the same time, answers that link too. Not part of deploy/local/test.sh: building a
# second release costs more than the suite's whole CI budget; run it before tagging a release.
set -euo pipefail

HERE="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)"
# shellcheck source-path=SCRIPTDIR source=../../deploy/local/lib.sh
source "$HERE/../../deploy/local/lib.sh"

REV=${1:?usage: tests/deploy/upgrade_test.sh REV (the previous release: a commit or tag)}
STATE="$ROOT/.state/upgrade"
PG_PORT=${REFGATE_UPGRADE_PG_PORT:-54359}
REDIS_PORT=${REFGATE_UPGRADE_REDIS_PORT:-63829}
OLD_PORT=$(free_port) OLD_ADMIN=$(free_port) NEW_PORT=$(free_port) NEW_ADMIN=$(free_port)
OLD_PID="" NEW_PID=""

lock_state upgrade
finish() {
  local rc=$?
  [[ -n $OLD_PID ]] && kill "$OLD_PID" 2>/dev/null
  [[ -n $NEW_PID ]] && kill "$NEW_PID" 2>/dev/null
  wait 2>/dev/null || true
  stop_all
  if ((rc == 0)); then log "upgrade from $REV: PASS"; else log "upgrade from $REV: FAIL (logs in $STATE)"; fi
}
trap finish EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

ensure_packages "${REFGATE_APT_PACKAGES[@]}" curl
commit=$(git -C "$ROOT" rev-parse --verify "$REV^{commit}") || die "no commit '$REV'"

log "building the previous release $REV (${commit:0:12}) Release in build/upgrade-previous"
wipe_state "$STATE"
mkdir -p "$STATE/previous-src"
git -C "$ROOT" archive "$commit" | tar -x -C "$STATE/previous-src"
cmake -S "$STATE/previous-src" -B "$ROOT/build/upgrade-previous" -G Ninja \
  -DCMAKE_BUILD_TYPE=Release -DREFGATE_BUILD_TESTS=OFF >"$STATE/cmake-previous.log"
cmake --build "$ROOT/build/upgrade-previous" --target refgate
OLD="$ROOT/build/upgrade-previous/refgate"
log "building this tree Release in build/release"
build release Release -DREFGATE_BUILD_TESTS=OFF
NEW="$ROOT/build/release/refgate"

start_postgres "$STATE" "$PG_PORT" off
start_redis "$STATE" "$REDIS_PORT"
ensure_database "$PG_PORT" refgate_upgrade
export REFGATE_DATABASE_URL="postgresql://refgate@127.0.0.1:$PG_PORT/refgate_upgrade"
export REFGATE_REDIS_URL="redis://127.0.0.1:$REDIS_PORT/0"
export REFGATE_STATE_DIR="$STATE" REFGATE_DRAIN_MS=0 REFGATE_LOG_LEVEL=warn

check() { "$@" || die "check failed: $*"; }
psql_value() {
  "$PG_BINDIR/psql" -X -qtA -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PG_PORT" -U refgate \
    -d refgate_upgrade -c "$1"
}
wait_ready() {
  local i
  for ((i = 0; i < 300; i++)); do
    curl -fsS -o /dev/null --max-time 1 "http://127.0.0.1:$1/readyz" 2>/dev/null && return 0
    sleep 0.1
  done
  die "no /readyz 200 on 127.0.0.1:$1"
}
# serve BIN PORT ADMIN_PORT NAME: starts `serve` in the background; the pid is in SERVED_PID.
serve() {
  REFGATE_LISTEN="127.0.0.1:$2" REFGATE_ADMIN_LISTEN="127.0.0.1:$3" \
    REFGATE_SNAPSHOT_FILE="$STATE/snapshot-$4.json" REFGATE_SPILL_FILE="$STATE/spill-$4.json" \
    "$1" serve {_LOCK_FD}>&- >>"$STATE/$4.log" 2>&1 &
  SERVED_PID=$!
  wait_ready "$3"
}
location() { curl -s -o /dev/null -w '%{http_code} %{redirect_url}' --max-time 2 "$1"; }

log "the previous release creates the schema and its demo data; this tree migrates it"
"$OLD" migrate >/dev/null
"$OLD" import "$STATE/previous-src/deploy/local/demo.json" >/dev/null
"$NEW" migrate >/dev/null

log "both releases serve the migrated database side by side"
serve "$OLD" "$OLD_PORT" "$OLD_ADMIN" previous
OLD_PID=$SERVED_PID
serve "$NEW" "$NEW_PORT" "$NEW_ADMIN" current
NEW_PID=$SERVED_PID
old_answer=$(location "http://127.0.0.1:$OLD_PORT/go/demo")
new_answer=$(location "http://127.0.0.1:$NEW_PORT/go/demo")
[[ $old_answer == "302 "*ref=picks42* ]] || die "previous release: /go/demo answered '$old_answer'"
[[ $new_answer == "$old_answer" ]] || die "the releases disagree: '$old_answer' vs '$new_answer'"

log "the previous release's clicks reach PostgreSQL through Redis"
for ((i = 0; i < 25; i++)); do
  curl -s -o /dev/null --max-time 2 -A "Mozilla/5.0 upgrade-test" "http://127.0.0.1:$OLD_PORT/go/demo"
done
kill -TERM "$OLD_PID"
wait "$OLD_PID" || die "the previous release did not stop cleanly"
OLD_PID=""
"$OLD" flush >/dev/null
clicks=$(psql_value "SELECT coalesce(sum(clicks), 0) FROM refgate_clicks_daily WHERE link = 'demo'")
((clicks >= 25)) || die "expected at least 25 clicks of /go/demo in PostgreSQL, found $clicks"

log "the previous release's admin API writes a link that this tree serves"
serve "$OLD" "$OLD_PORT" "$OLD_ADMIN" previous
OLD_PID=$SERVED_PID
token=$("$OLD" token create --name upgrade --role editor | tail -n 1)
status=$(curl -s -o "$STATE/post.json" -w '%{http_code}' --max-time 5 \
  -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
  -d '{"slug":"after-upgrade","partner":"tailscale","destination":"https://tailscale.com/pricing"}' \
  "http://127.0.0.1:$OLD_ADMIN/api/v1/links")
[[ $status == 201 ]] || die "previous release: POST /api/v1/links answered $status: $(cat "$STATE/post.json")"
for ((i = 0; i < 50; i++)); do
  new_answer=$(location "http://127.0.0.1:$NEW_PORT/go/after-upgrade")
  [[ $new_answer == "302 "* ]] && break
  sleep 0.1
done
[[ $new_answer == "302 https://tailscale.com/pricing?ref=picks42"* ]] ||
  die "this tree: /go/after-upgrade answered '$new_answer'"
