#!/usr/bin/env bash
# The live endpoint (GET /api/v1/stats/live, issue 45) under 50 watching editors, beside the
# redirect load: refgate's CPU per redirect with and without the watchers, as a ratio.
#
#   tests/bench/live_watchers.sh [--bin PATH] [--rounds N] [--seconds S] [--watchers N]
#
# Builds refgate Release in build/bench (as tests/bench/run.sh does) unless --bin names a binary.
# Private PostgreSQL (127.0.0.1:54391) and Redis (63861), refgate on 18401/18402 with one I/O
# thread, under .state/live-bench, all stopped at the end however the script ends;
# REFGATE_BENCH_PORT_SHIFT=N adds N to each port. 1,000 links; wrk (one thread, 16 connections)
# clicks them at random as a desktop browser for S seconds (default 10) per round, rounds
# alternating without and with N watchers (default 50) each polling the live endpoint once a
# second (the console polls every 3 s), ROUNDS (default 3) of each; medians reported. Prints a
# Markdown table (paste it into tests/bench/RESULTS.md) and writes
# tests/bench/results/live-watchers.json (git-ignored). Everything is bounded in count and time.
set -euo pipefail

HERE="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)"
# shellcheck source-path=SCRIPTDIR source=../../deploy/local/lib.sh
source "$HERE/../../deploy/local/lib.sh"
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$HERE/lib.sh"

BIN=""
ROUNDS=3
SECS=10
WATCHERS=50
while (($#)); do
  case $1 in
    --bin) BIN=${2:?--bin needs a path}; shift ;;
    --rounds) ROUNDS=${2:?--rounds needs a number}; shift ;;
    --seconds) SECS=${2:?--seconds needs a number}; shift ;;
    --watchers) WATCHERS=${2:?--watchers needs a number}; shift ;;
    -h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0"; exit 0 ;;
    *) die "unknown argument: $1 (try --help)" ;;
  esac
  shift
done

SHIFT=${REFGATE_BENCH_PORT_SHIFT:-0}
PG_PORT=$((54391 + SHIFT))
REDIS_PORT=$((63861 + SHIFT))
RG_PORT=$((18401 + SHIFT))
RG_ADMIN_PORT=$((18402 + SHIFT))
STATE="$ROOT/.state/live-bench"
RESULTS="$ROOT/tests/bench/results"
mkdir -p "$STATE" "$RESULTS"

if [[ -z $BIN ]]; then
  bench_build_release refgate
  BIN="$ROOT/build/bench/refgate"
fi
[[ -x $BIN ]] || die "no refgate binary at $BIN"

cleanup() {
  bench_stop_servers
  stop_all
}
trap cleanup EXIT
trap 'exit 143' TERM

wipe_state "$STATE/servers"
start_postgres "$STATE/servers" "$PG_PORT" on
start_redis "$STATE/servers" "$REDIS_PORT"
ensure_database "$PG_PORT" live
export REFGATE_DATABASE_URL="postgresql://refgate@127.0.0.1:$PG_PORT/live"
export REFGATE_REDIS_URL="redis://127.0.0.1:$REDIS_PORT/0"
export REFGATE_LOG_LEVEL=warn REFGATE_LINKCHECK_INTERVAL=0

timeout 120 "$BIN" migrate >/dev/null
python3 - "$STATE/links.json" <<'PY'
import json, sys
links = [{"slug": f"l{i}", "partner": "shop", "destination": f"https://example.com/{i}"} for i in range(1000)]
doc = {"partners": [{"slug": "shop", "name": "Shop", "ref_param": "ref", "ref_code": "bench",
                     "allowed_domains": ["example.com"]}], "links": links}
json.dump(doc, open(sys.argv[1], "w"))
PY
timeout 120 "$BIN" import "$STATE/links.json" >/dev/null
TOKEN=$(timeout 30 "$BIN" token create --name live-bench --role viewer | tail -n 1)

cat >"$STATE/clicks.lua" <<'LUA'
wrk.headers["User-Agent"] = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0 Safari/537.36"
wrk.headers["Accept"] = "text/html"
request = function()
  return wrk.format("GET", "/go/l" .. math.random(0, 999))
end
LUA

bench_serve refgate "$BIN" "$RG_PORT" "$RG_ADMIN_PORT" "$STATE"
SERVE_PID=${BENCH_PIDS[-1]}

log "load before the run: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 "$HERE/live_watchers.py" --pid "$SERVE_PID" --public-url "http://127.0.0.1:$RG_PORT" \
  --admin-port "$RG_ADMIN_PORT" --redis-port "$REDIS_PORT" --token "$TOKEN" --script "$STATE/clicks.lua" \
  --rounds "$ROUNDS" --seconds "$SECS" --watchers "$WATCHERS" --json "$RESULTS/live-watchers.json"
log "load after the run: $(cut -d' ' -f1-3 /proc/loadavg)"
