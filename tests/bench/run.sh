#!/usr/bin/env bash
# Benchmarks of refgate, with one command:
#
#   tests/bench/run.sh                 full run (about 8 minutes with a built tree)
#   tests/bench/run.sh --smoke         tiny sizes, a few seconds a part: proves the script works
#
# Options: --threads LIST   REFGATE_THREADS values for the redirect part (default 1,2; 2 runs
#                           keep-alive 64 only, unpinned)
#          --no-pin         do not pin the server to CPU 0 and wrk to CPU 1
#          --deps-full-priority  leave PostgreSQL and Redis at the priority they start with
#                           (by default they get nice 19 during the redirect part; see
#                           deprioritize_dependencies)
#          --only LIST      some of: redirect,flush,startup,micro,idle,memory (default: all but
#                           memory)
#          --budget SECONDS stop everything after this long (default 900)
#          --links N        links of the redirect part (default 10000; 200 with --smoke)
#          --baseline REV   also build REV (a commit, e.g. main~3) and run it as a third server in
#                           the redirect part's alternating rounds: "before and after" in one run,
#                           reported as ratios of this tree to REV
#          --floor FILE     the floor program's C source (default ../shared/bench/floor.c beside
#                           the checkout, when it is there): one epoll thread writing a fixed 302
#                           per request end, built with cc -O2 and run in the keep-alive rounds
#                           with one thread; refgate's CPU per request is reported against it
#          --no-floor       leave it out
#          --bin FILE       measure this refgate (a saved binary of another commit, its data
#                           files beside it) instead of building the tree; not with micro
#          --perf           after the 1-thread rounds, one more run per server of keep-alive 64
#                           and Connection: close under `perf record -e cpu-clock`: each server's
#                           CPU per request split into kernel and user time, and its top symbols
#                           (in the report, and whole in .state/bench/profile.txt)
#
# Parts: redirect (refgate vs nginx under wrk, A B A B, medians), flush (`refgate flush` of
# 100,000 counters), startup (RSS and time to /readyz 200 with 100,000 links, from PostgreSQL and
# from the snapshot file), micro (Catch2 BENCHMARKs, allocations per redirect) and idle (memory per
# 1,000 idle keep-alive connections, refgate vs nginx, fresh processes); memory, only when named
# (RssAnon, RssFile and VmRSS of `refgate serve` with 100,000 links, or --links N, at /readyz, 10 s
# later, right after wrk -c 64 spread over all the links until each was asked for twice, and 5 and
# 15 s after, and after a /metrics scrape). Everything runs
# on 127.0.0.1 with servers of its own under .state/bench (PostgreSQL 54379, Redis 63849, refgate
# 18380/18390, nginx 18381; REFGATE_BENCH_PORT_SHIFT=N adds N to each), all stopped at the end
# however the script ends. Prints a table and
# writes tests/bench/results/latest.json (git-ignored). What each part measures, the budget and
# the recorded results with their history: tests/bench/RESULTS.md (paste a full run's table there).
set -euo pipefail

HERE="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)"
# shellcheck source-path=SCRIPTDIR source=../../deploy/local/lib.sh
source "$HERE/../../deploy/local/lib.sh"

COMMAND_LINE="tests/bench/run.sh${*:+ $*}"
MODE=full
THREADS_LIST="1,2"
PIN=1
DEPS_NICE=1
ONLY="redirect,flush,startup,micro,idle"
PERF=0
BUDGET=900
LINKS=""
BASELINE_REV=""
BIN_GIVEN=""
FLOOR_SRC=""
[[ -f $HERE/../../../shared/bench/floor.c ]] && FLOOR_SRC=$HERE/../../../shared/bench/floor.c
while (($#)); do
  case $1 in
    --smoke) MODE=smoke ;;
    --threads) THREADS_LIST=${2:?--threads needs a list}; shift ;;
    --no-pin) PIN=0 ;;
    --deps-full-priority) DEPS_NICE=0 ;;
    --only) ONLY=${2:?--only needs a list}; shift ;;
    --budget) BUDGET=${2:?--budget needs seconds}; shift ;;
    --links) LINKS=${2:?--links needs a number}; shift ;;
    --baseline) BASELINE_REV=${2:?--baseline needs a commit}; shift ;;
    --bin) BIN_GIVEN=${2:?--bin needs a file}; shift ;;
    --floor) FLOOR_SRC=${2:?--floor needs a C file}; shift ;;
    --no-floor) FLOOR_SRC="" ;;
    --perf) PERF=1 ;;
    -h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0"; exit 0 ;;
    *) die "unknown argument: $1 (try --help)" ;;
  esac
  shift
done
[[ $BUDGET =~ ^[0-9]+$ ]] || die "--budget takes whole seconds"
[[ -z $LINKS || $LINKS =~ ^[1-9][0-9]*$ ]] || die "--links takes a whole number"
[[ $THREADS_LIST =~ ^[0-9]+(,[0-9]+)*$ ]] || die "--threads takes a list such as 1,2"
if [[ -n $BIN_GIVEN ]]; then
  [[ -x $BIN_GIVEN ]] || die "--bin: $BIN_GIVEN is not an executable file"
  [[ ,$ONLY, != *,micro,* ]] || die "--bin: the micro part needs the tree's build (leave micro out of --only)"
  [[ -z $BASELINE_REV ]] || die "--bin and --baseline do not go together"
fi

STARTED_AT=$SECONDS
STATE="$ROOT/.state/bench"
RESULTS="$ROOT/tests/bench/results"
# Ports can be moved (REFGATE_BENCH_PORT_SHIFT=N adds N to each) so that two checkouts can run it.
SHIFT=${REFGATE_BENCH_PORT_SHIFT:-0}
[[ $SHIFT =~ ^[0-9]+$ ]] || die "REFGATE_BENCH_PORT_SHIFT takes a whole number"
PG_PORT=$((54379 + SHIFT))
REDIS_PORT=$((63849 + SHIFT))
RG_PORT=$((18380 + SHIFT))
RG_ADMIN_PORT=$((18390 + SHIFT))
NGINX_PORT=$((18381 + SHIFT))
BASE_PORT=$((18382 + SHIFT))
BASE_ADMIN_PORT=$((18392 + SHIFT))
FLOOR_PORT=$((18383 + SHIFT))
DEAD_PG_PORT=$((54378 + SHIFT)) # nothing listens here: "PostgreSQL unreachable"
BUILD_NAME=bench
BIN="$ROOT/build/$BUILD_NAME/refgate"
MICRO_BIN="$ROOT/build/$BUILD_NAME/refgate_micro_bench"
BASE_BIN="$ROOT/build/$BUILD_NAME-baseline/refgate"
BASE_PID=""
FLOOR_BIN="$STATE/floor"
FLOOR_PID=""
PY=/usr/bin/python3
BENCH_PY="$HERE/bench.py"
PG_URL_BASE="postgresql://refgate@127.0.0.1:$PG_PORT"
BROWSER_UA="Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"

if [[ $MODE == full ]]; then
  REDIRECT_LINKS=10000 ROUNDS=5 DURATION=5 WARMUP=1
  IDLE_CONNECTIONS=10000
  MANY_CONNECTIONS=10000
  FLUSH_COUNTERS=100000 FLUSH_RUNS=3
  STARTUP_LINKS=100000 STARTUP_RUNS=3
  MICRO_ARGS=()
else
  REDIRECT_LINKS=200 ROUNDS=1 DURATION=1 WARMUP=0
  IDLE_CONNECTIONS=200
  MANY_CONNECTIONS=300
  FLUSH_COUNTERS=2000 FLUSH_RUNS=1
  STARTUP_LINKS=1000 STARTUP_RUNS=1
  MICRO_ARGS=(--benchmark-samples 3 --benchmark-warmup-time 1 --benchmark-resamples 100)
fi
[[ -n $LINKS ]] && REDIRECT_LINKS=$LINKS

# Progress lines carry the seconds since the start.
log() { printf '[bench %3ds] %s\n' "$((SECONDS - STARTED_AT))" "$*" >&2; }

RAW="$STATE/raw.jsonl"
META="$STATE/meta.json"
NOTES=()
REDIRECT_EXTRA=()
STARTUP_EXTRA=()
PROFILE_TXT="$STATE/profile.txt"

# --------------------------------------------------------------- time bound

remaining() { echo $((BUDGET - (SECONDS - STARTED_AT))); }

# bounded SECONDS CMD...: runs CMD for at most SECONDS and never past the budget.
bounded() {
  local want=$1 left
  shift
  left=$(remaining)
  ((left > 0)) || die "time budget of $BUDGET s used up"
  ((want < left)) || want=$left
  timeout -k 5 "$want" "$@"
}

# True when NEED seconds are left; otherwise notes that PART was skipped.
have_time() {
  local need=$1 part=$2
  if (($(remaining) < need)); then
    log "skipping $part: $(remaining) s left of the $BUDGET s budget, it needs about $need s"
    NOTES+=("$part skipped: time budget")
    return 1
  fi
}

want() { [[ ,$ONLY, == *,$1,* ]]; }

# ------------------------------------------------------------ processes we own

RG_PID=""
NGINX_PID=""
REPORTED=0
WATCHDOG_PID=""

stop_pid() {
  local pid=$1 comm=$2 sig=${3:-TERM} i
  [[ -n $pid ]] || return 0
  _pid_is "$pid" "$comm" || return 0
  kill "-$sig" "$pid" 2>/dev/null || true
  for ((i = 0; i < 150; i++)); do
    _pid_is "$pid" "$comm" || break
    sleep 0.1
  done
  if _pid_is "$pid" "$comm"; then
    log "WARNING: $comm pid $pid did not stop; killing it"
    kill -KILL "$pid" 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || true
}

stop_refgate() {
  stop_pid "$RG_PID" refgate TERM
  RG_PID=""
}
stop_baseline() {
  # The process's name is refgate: with any other, stop_pid found no such process and left the
  # baseline running (through the 2-thread rounds, which it then served, and after the bench).
  stop_pid "$BASE_PID" refgate TERM
  BASE_PID=""
}
stop_nginx() {
  stop_pid "$NGINX_PID" nginx TERM
  NGINX_PID=""
}
stop_floor() {
  stop_pid "$FLOOR_PID" floor TERM
  FLOOR_PID=""
}

cleanup() {
  local rc=$?
  trap - EXIT INT TERM HUP
  stop_refgate
  stop_baseline
  stop_nginx
  stop_floor
  stop_all
  # Stopped early (budget, error, Ctrl-C): still report what was measured.
  if ((!REPORTED)) && [[ -s ${RAW:-} || -s ${STATE:-}/micro.json ]]; then
    NOTES+=("INCOMPLETE: the run stopped early (exit status $rc); only the parts above were measured")
    { write_meta && report; } || true
  fi
  if [[ -n $WATCHDOG_PID ]]; then kill "$WATCHDOG_PID" 2>/dev/null || true; fi
  exit "$rc"
}

# wait_http_200 URL SECONDS [STATUS]: until URL answers STATUS (200 unless given).
wait_http_200() {
  local url=$1 seconds=$2 want=${3:-200} i
  for ((i = 0; i < seconds * 20; i++)); do
    [[ $(curl -s -o /dev/null -w '%{http_code}' --max-time 1 "$url" || true) == "$want" ]] && return 0
    sleep 0.05
  done
  return 1
}

psql_q() {
  local db=$1
  shift
  "$PG_BINDIR/psql" -X -qtA -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PG_PORT" -U refgate -d "$db" "$@"
}

# Environment of a refgate command against database DB and Redis db REDIS_DB.
refgate_env() {
  local db=$1 redis_db=$2
  export REFGATE_DATABASE_URL="$PG_URL_BASE/$db"
  export REFGATE_REDIS_URL="redis://127.0.0.1:$REDIS_PORT/$redis_db"
  export REFGATE_LISTEN="127.0.0.1:$RG_PORT"
  export REFGATE_ADMIN_LISTEN="127.0.0.1:$RG_ADMIN_PORT"
  export REFGATE_SNAPSHOT_FILE="$STATE/snapshot-$db.json"
  export REFGATE_SPILL_FILE="$STATE/spill-$db.json"
  export REFGATE_LOG_LEVEL=warn
}

# import_links DB N LABEL: database DB (Redis untouched) holding exactly links 1..N of bench.py,
# made with `refgate import` in files of IMPORT_CHUNK links. Kept between runs: when the
# database already holds what this run would import, the import is skipped.
IMPORT_CHUNK=2500
import_links() {
  local db=$1 n=$2 marker="$STATE/imported-$1" want have start files f
  want="$n links, chunk $IMPORT_CHUNK, $(sha256sum "$BENCH_PY" | cut -c1-16)"
  have=$(psql_q postgres -c "SELECT 1 FROM pg_database WHERE datname = '$db'")
  if [[ $have == 1 && -f $marker && $(cat "$marker") == "$want" ]] &&
    [[ $(psql_q "$db" -c "SELECT count(*) FROM refgate_links") == "$n" ]]; then
    log "  $db already holds the $n links (import skipped)"
    # The kept database may predate a migration of the binary being measured.
    refgate_env "$db" 0
    bounded 60 "$BIN" migrate >/dev/null
    return 0
  fi
  rm -f "$marker"
  "$PG_BINDIR/dropdb" --if-exists -h 127.0.0.1 -p "$PG_PORT" -U refgate "$db"
  ensure_database "$PG_PORT" "$db"
  refgate_env "$db" 0
  bounded 60 "$BIN" migrate >/dev/null
  mapfile -t files < <("$PY" "$BENCH_PY" links "$n" "$STATE/links-$db" --chunk "$IMPORT_CHUNK")
  log "  importing $n links into $db with refgate import (${#files[@]} file(s))"
  start=$EPOCHREALTIME
  for f in "${files[@]}"; do
    bounded 120 "$BIN" import "$f" >/dev/null
  done
  IMPORT_FILES=${#files[@]}
  IMPORT_SECONDS=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN {printf "%.1f", b - a}')
  rm -f "${files[@]}"
  printf '%s' "$want" >"$marker"
}

# ----------------------------------------------------------------- set-up

lock_state bench
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# Safety net beside `bounded`: past the budget (+30 s for stopping) the script is told to stop.
# It checks every second that the script still runs, so it never outlives it by more than that.
(
  for ((i = 0; i < BUDGET + 30; i++)); do
    sleep 1
    kill -0 $$ 2>/dev/null || exit 0
  done
  kill -TERM $$ 2>/dev/null
) {_LOCK_FD}>&- >/dev/null 2>&1 &
WATCHDOG_PID=$!

REFGATE_APT_PACKAGES+=(wrk nginx python3 curl)
((PERF)) && REFGATE_APT_PACKAGES+=(linux-perf)
# shellcheck disable=SC2119 # no packages but REFGATE_APT_PACKAGES
ensure_packages
npm_ci_build_inputs

mkdir -p "$STATE" "$RESULTS"
rm -f "$RAW" "$STATE"/*.xml "$STATE"/alloc.json "$STATE"/oneshot.json "$STATE"/micro.json

# One Release build directory for the server and the microbenchmarks, so that the libraries are
# compiled once and a build by someone else in build/release is never disturbed. Same flags as
# deploy/local's `build release Release`; tests are not built. Once the top-level CMakeLists.txt
# has the REFGATE_BUILD_BENCH option, it is used instead of the project-include hook.
if grep -q REFGATE_BUILD_BENCH "$ROOT/CMakeLists.txt"; then
  BENCH_CMAKE=(-DREFGATE_BUILD_BENCH=ON -UCMAKE_PROJECT_INCLUDE)
else
  BENCH_CMAKE=(-DCMAKE_PROJECT_INCLUDE="$HERE/standalone.cmake")
fi
if [[ -n $BIN_GIVEN ]]; then
  BIN=$(realpath "$BIN_GIVEN")
  NOTES+=("refgate: $BIN ($("$BIN" --version 2>/dev/null || echo "version unknown")), not built from this tree")
else
  log "building Release in build/$BUILD_NAME (refgate, refgate_micro_bench)"
  bounded "$(remaining)" cmake -S "$ROOT" -B "$ROOT/build/$BUILD_NAME" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release -DREFGATE_BUILD_TESTS=OFF "${BENCH_CMAKE[@]}" >"$STATE/cmake.log" 2>&1 ||
    die "cmake configure failed; see $STATE/cmake.log"
  # refgate_scanner_data: the ASN and country databases and the scanner list beside the binary, so
  # that refgate runs as deploy/local/run.sh serves it (scanner check, country lookups, their walks).
  bounded "$(remaining)" cmake --build "$ROOT/build/$BUILD_NAME" \
    --target refgate refgate_micro_bench refgate_scanner_data ||
    die "build failed"
fi
if [[ -n $BASELINE_REV ]]; then
  BASELINE_COMMIT=$(git -C "$ROOT" rev-parse --verify "$BASELINE_REV^{commit}") ||
    die "--baseline: no commit '$BASELINE_REV'"
  log "building the baseline $BASELINE_REV (${BASELINE_COMMIT:0:12}) Release in build/$BUILD_NAME-baseline"
  rm -rf "$STATE/baseline-src"
  mkdir -p "$STATE/baseline-src"
  # git archive gives files their commit's time, older than objects built from another commit:
  # the build directory is only reused for the same commit.
  baseline_stamp="$ROOT/build/$BUILD_NAME-baseline/.baseline-commit"
  [[ -f $baseline_stamp && $(cat "$baseline_stamp") == "$BASELINE_COMMIT" ]] ||
    rm -rf "$ROOT/build/$BUILD_NAME-baseline"
  git -C "$ROOT" archive "$BASELINE_COMMIT" | tar -x -C "$STATE/baseline-src"
  # Its warnings are not what it is built for: a commit whose Release build stopped on one
  # (-Werror, e.g. e7bbb37 with GCC 12 at -O3) is still measured.
  sed -i 's/ -Werror / /' "$STATE/baseline-src/CMakeLists.txt"
  # The npm packages its build reads: this tree's (hard links) when the lockfile is the same.
  lock="" dir=""
  while IFS= read -r -d '' lock; do
    dir=${lock#"$STATE/baseline-src/"}
    dir=${dir%/package-lock.json}
    if cmp -s "$ROOT/$dir/package-lock.json" "$STATE/baseline-src/$dir/package-lock.json"; then
      cp -al "$ROOT/$dir/node_modules" "$STATE/baseline-src/$dir/"
    else
      npm_ci_if_stale "$STATE/baseline-src/$dir"
    fi
  done < <(find "$STATE/baseline-src/src" "$STATE/baseline-src/third_party" -name package-lock.json \
    -not -path '*/node_modules/*' -print0 2>/dev/null)
  bounded "$(remaining)" cmake -S "$STATE/baseline-src" -B "$ROOT/build/$BUILD_NAME-baseline" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release -DREFGATE_BUILD_TESTS=OFF >"$STATE/cmake-baseline.log" 2>&1 ||
    die "baseline cmake configure failed; see $STATE/cmake-baseline.log"
  baseline_targets=(refgate)
  grep -q refgate_scanner_data "$STATE/baseline-src/src/tools/CMakeLists.txt" 2>/dev/null &&
    baseline_targets+=(refgate_scanner_data)
  bounded "$(remaining)" cmake --build "$ROOT/build/$BUILD_NAME-baseline" --target "${baseline_targets[@]}" ||
    die "baseline build failed"
  printf '%s\n' "$BASELINE_COMMIT" >"$baseline_stamp"
  NOTES+=("baseline: $BASELINE_REV = ${BASELINE_COMMIT:0:12}, built Release from git archive, run as a third server in the same alternating rounds")
fi
if [[ -n $FLOOR_SRC ]]; then
  cc -O2 -o "$FLOOR_BIN" "$FLOOR_SRC" || die "the floor program did not build ($FLOOR_SRC)"
  NOTES+=("floor: $(basename "$FLOOR_SRC") (cc -O2), one epoll thread writing a fixed 302 per request end, in the 1-thread keep-alive rounds")
fi
log "build done after $((SECONDS - STARTED_AT)) s"

pin_server=() pin_client=()
if ((PIN)); then
  pin_server=(taskset -c 0)
  pin_client=(taskset -c 1)
fi

start_postgres "$STATE" "$PG_PORT" on
start_redis "$STATE" "$REDIS_PORT"
_require_free_port "$RG_PORT" "refgate (bench)"
_require_free_port "$RG_ADMIN_PORT" "refgate admin (bench)"
_require_free_port "$NGINX_PORT" "nginx (bench)"
if [[ -n $BASELINE_REV ]]; then
  _require_free_port "$BASE_PORT" "refgate baseline (bench)"
  _require_free_port "$BASE_ADMIN_PORT" "refgate baseline admin (bench)"
fi
_require_free_port "$DEAD_PG_PORT" "the unreachable PostgreSQL of the start-up part"

# ----------------------------------------------------------------- metadata

cpu_model=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
mem_total=$(awk '/^MemTotal/ {print $2}' /proc/meminfo)
commit=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=$(git -C "$ROOT" status --porcelain -- src include sql CMakeLists.txt 2>/dev/null | wc -l)
loadavg=$(cut -d' ' -f1-3 /proc/loadavg)

write_meta() {
  local notes_json redirect_json startup_json
  notes_json=$(printf '%s\n' "${NOTES[@]}" | jq -R . | jq -s 'map(select(. != ""))')
  redirect_json=$(printf '%s\n' "${REDIRECT_EXTRA[@]}" | jq -R . | jq -s 'map(select(. != ""))')
  startup_json=$(printf '%s\n' "${STARTUP_EXTRA[@]}" | jq -R . | jq -s 'map(select(. != ""))')
  jq -n --arg date "$(date -u +%Y-%m-%dT%H:%M:%SZ)" --arg command "$COMMAND_LINE" \
    --arg mode "$MODE" --arg cpu "$cpu_model" --arg nproc "$(nproc)" --arg kernel "$(uname -r)" \
    --arg mem "$mem_total" --arg commit "$commit" --arg dirty "$dirty" --arg load "$loadavg" \
    --arg rounds "$ROUNDS" --arg duration "$DURATION" --arg pin "$PIN" \
    --argjson notes "$notes_json" --argjson rx "$redirect_json" --argjson sx "$startup_json" \
    '{date: $date, command: $command, mode: $mode, rounds: ($rounds|tonumber),
      duration: ($duration|tonumber), pinned: ($pin == "1"),
      machine: {cpu_model: $cpu, nproc: ($nproc|tonumber), kernel: $kernel,
                mem_total_kib: ($mem|tonumber), load_average_at_start: $load},
      git: {commit: $commit, modified_files_in_src_include_sql: ($dirty|tonumber)},
      notes: $notes, redirect_extra: $rx, startup_extra: $sx}' >"$META"
}

report() {
  "$PY" "$BENCH_PY" report --raw "$RAW" --meta "$META" --out "$RESULTS/latest.json" \
    --micro "$STATE/micro.json" --alloc "$STATE/alloc.json" --oneshot "$STATE/oneshot.json" |
    tee "$RESULTS/latest.txt"
}

# ----------------------------------------------------------------- redirect

# CPU time (clock ticks) used so far by PID and its children's processes (nginx workers), each
# process's figure including all its threads: "TOTAL USER" (user + system, and user alone).
cpu_ticks() {
  local pid=$1 p total=0 user=0 stat fields
  for p in "$pid" $(ps -o pid= --ppid "$pid" 2>/dev/null); do
    stat=$(cat "/proc/$p/stat" 2>/dev/null) || continue
    read -r -a fields <<<"${stat##*) }"  # from the state on: utime and stime are the 12th, 13th
    user=$((user + fields[11]))
    total=$((total + fields[11] + fields[12]))
  done
  echo "$total $user"
}

# PostgreSQL and Redis stand in for servers that production gives machines of their own: the
# redirect path never waits for them. Here wrk and the server each fill a CPU, and each flush's
# tenth of a second of PostgreSQL CPU (10,000 counters every 10 s bucket) would otherwise be taken
# from one of the two in 4 ms slices, which is most of the p99 with keep-alive connections. So
# they run at nice 19 (new PostgreSQL backends inherit it from the postmaster) and, where the
# kernel groups processes by session for scheduling (autogroup; each PostgreSQL backend is a
# session of its own), at autogroup nice 19. Called before every wrk run: the flusher's
# connection is opened by the first flush. --deps-full-priority turns this off.
deprioritize_dependencies() {
  ((DEPS_NICE)) || return 0
  local pids=() pid
  if [[ -r $STATE/redis/redis.pid ]] && read -r pid <"$STATE/redis/redis.pid"; then
    pids+=("$pid")
  fi
  if [[ -r $STATE/pg/data/postmaster.pid ]] && read -r pid <"$STATE/pg/data/postmaster.pid"; then
    pids+=("$pid")
    mapfile -t -O "${#pids[@]}" pids < <(pgrep -P "$pid" || true)
  fi
  for pid in "${pids[@]}"; do
    renice -n 19 -p "$pid" >/dev/null 2>&1 || true
    if [[ -w /proc/$pid/autogroup ]]; then
      echo 19 2>/dev/null >"/proc/$pid/autogroup" || true
    fi
  done
}

# run_wrk SERVER THREADS CASE PORT CONNS CLOSE(0/1) SECONDS RECORD(part name)
# The port and the process of a server of the redirect rounds (refgate, baseline, nginx, floor).
server_port() {
  case $1 in
    nginx) echo "$NGINX_PORT" ;; baseline) echo "$BASE_PORT" ;; floor) echo "$FLOOR_PORT" ;;
    *) echo "$RG_PORT" ;;
  esac
}
server_pid() {
  case $1 in
    nginx) echo "$NGINX_PID" ;; baseline) echo "$BASE_PID" ;; floor) echo "$FLOOR_PID" ;;
    *) echo "$RG_PID" ;;
  esac
}

run_wrk() {
  local server=$1 threads=$2 case=$3 port=$4 conns=$5 close=$6 secs=$7 part=$8
  local wrk_threads=1 headers=(-H "User-Agent: $BROWSER_UA") pin=("${pin_client[@]}") out
  ((close)) && headers+=(-H "Connection: close")
  # Unpinned runs (threads > 1) share both CPUs with the server: wrk gets two threads too.
  if ((threads > 1)); then
    pin=()
    wrk_threads=2
  fi
  local server_pid cpu_before
  server_pid=$(server_pid "$server")
  deprioritize_dependencies
  local user_before cpu_after user_after
  read -r cpu_before user_before < <(cpu_ticks "$server_pid")
  out=$(bounded $((secs + 15)) "${pin[@]}" wrk -t "$wrk_threads" -c "$conns" -d "${secs}s" \
    --timeout 5s --latency -s "$STATE/spread.lua" "${headers[@]}" "http://127.0.0.1:$port") ||
    die "wrk failed against $server"
  local line
  line=$(grep '^WRK_RESULT ' <<<"$out" | head -n1 | cut -d' ' -f2-)
  [[ -n $line ]] || die "no result from wrk against $server: $out"
  read -r cpu_after user_after < <(cpu_ticks "$server_pid")
  local cpu_ticks_used=$((cpu_after - cpu_before)) user_ticks_used=$((user_after - user_before))
  jq -c --arg part "$part" --arg server "$server" --argjson threads "$threads" --arg case "$case" \
    --argjson ticks "$cpu_ticks_used" --argjson user "$user_ticks_used" \
    --argjson hz "$(getconf CLK_TCK)" \
    '. + {part: $part, server: $server, threads: $threads, case: $case,
          server_cpu_s: ($ticks / $hz),
          server_cpu_us_per_req: (if .requests > 0 then $ticks / $hz * 1e6 / .requests else null end),
          server_user_us_per_req: (if .requests > 0 then $user / $hz * 1e6 / .requests else null end)}' \
    <<<"$line" >>"$RAW"
  if [[ $part == redirect ]]; then
    jq -r --arg s "$server" --argjson t "$cpu_ticks_used" --argjson hz "$(getconf CLK_TCK)" '"  \($s): \(.rps|floor) req/s, p50 \(.p50_us/1000) ms, p99 \(.p99_us/1000) ms, errors \(.errors|add), server CPU \($t / $hz * 1e6 / .requests | floor) us/req"' <<<"$line" >&2
  fi
}

# profile_servers SERVER...: for keep-alive 64 and Connection: close, one more run per server
# under perf record (cpu-clock, all of its threads and workers). Its CPU per request is split by
# where the samples fell: the kernel ([kernel.kallsyms]) or user space (the rest); the top
# symbols go to the report's notes and the whole flat profile to $PROFILE_TXT.
profile_servers() {
  local case name conns close server port pid pids data secs=$DURATION
  for case in "keep-alive, 64 conn|64|0" "Connection: close, 64 conn|64|1"; do
    IFS='|' read -r name conns close <<<"$case"
    for server in "$@"; do
      [[ $server == floor ]] && ((close)) && continue
      port=$(server_port "$server") pid=$(server_pid "$server")
      pids=$(ps -o pid= --ppid "$pid" | tr -d ' ' | paste -sd, - || true)
      pids=$pid${pids:+,$pids}
      data="$STATE/perf-$server-$conns-$close.data"
      log "  profile: $name, $server"
      bounded $((secs + 20)) perf record -q -e cpu-clock -F 1999 -p "$pids" -o "$data" \
        -- sleep $((secs + 1)) >/dev/null 2>&1 &
      local perf_pid=$!
      sleep 0.5
      run_wrk "$server" 1 "$name" "$port" "$conns" "$close" "$secs" profile
      wait "$perf_pid" || log "WARNING: perf record failed for $server"
      local us kernel top
      us=$(jq -rs --arg s "$server" --arg c "$name" \
        'map(select(.part == "profile" and .server == $s and .case == $c)) | last | .server_cpu_us_per_req' "$RAW")
      kernel=$(perf report -i "$data" --no-children --sort dso --stdio -q 2>/dev/null |
        awk '/\[kernel/ { k += $1 } END { printf "%.1f", k }')
      top=$(perf report -i "$data" --no-children --sort dso,sym --stdio -q 2>/dev/null |
        awk 'NF && ++n <= 8 { sub(/^ +/, ""); gsub(/ +/, " "); print substr($0, 1, 90) }' |
        paste -sd';' - | sed 's/;/; /g')
      {
        echo "== $name, $server: $us us/request of CPU, $kernel % of samples in the kernel"
        perf report -i "$data" --no-children --sort dso,sym --stdio -q 2>/dev/null | awk 'NR <= 40'
        echo
      } >>"$PROFILE_TXT"
      REDIRECT_EXTRA+=("perf, $name, $server: $(jq -rn --argjson us "$us" --argjson k "$kernel" \
        '"\($us * 100 | round / 100) us/req = kernel \($us * $k / 100 * 100 | round / 100) + user \($us * (100 - $k) / 100 * 100 | round / 100) us"'); top: $top")
      rm -f "$data"
    done
  done
}

start_refgate_serve() {
  local threads=$1
  refgate_env refgate_bench 0
  export REFGATE_THREADS=$threads
  local pin=("${pin_server[@]}")
  ((threads > 1)) && pin=()
  # A simple command, not a function, so that $! is refgate itself (taskset execs it).
  "${pin[@]}" "$BIN" serve {_LOCK_FD}>&- >>"$STATE/refgate-serve.log" 2>&1 &
  RG_PID=$!
  wait_http_200 "http://127.0.0.1:$RG_ADMIN_PORT/readyz" 30 ||
    die "refgate did not become ready; see $STATE/refgate-serve.log"
  _pid_is "$RG_PID" refgate || die "refgate exited at start; see $STATE/refgate-serve.log"
}

# The --baseline build on ports of its own, with the same settings and data as start_refgate_serve.
start_baseline_serve() {
  local threads=$1
  refgate_env refgate_bench 0
  export REFGATE_THREADS=$threads
  local pin=("${pin_server[@]}")
  ((threads > 1)) && pin=()
  REFGATE_LISTEN="127.0.0.1:$BASE_PORT" REFGATE_ADMIN_LISTEN="127.0.0.1:$BASE_ADMIN_PORT" \
    REFGATE_SNAPSHOT_FILE="$STATE/snapshot-baseline.json" \
    REFGATE_SPILL_FILE="$STATE/spill-baseline.json" \
    "${pin[@]}" "$BASE_BIN" serve {_LOCK_FD}>&- >>"$STATE/baseline-serve.log" 2>&1 &
  BASE_PID=$!
  wait_http_200 "http://127.0.0.1:$BASE_ADMIN_PORT/readyz" 30 ||
    die "the baseline refgate did not become ready; see $STATE/baseline-serve.log"
  # Another process on its ports would have answered: this one must be alive and serving.
  _pid_is "$BASE_PID" refgate || die "the baseline refgate exited; see $STATE/baseline-serve.log"
}

start_nginx() {
  local threads=$1 dir="$STATE/nginx"
  mkdir -p "$dir/tmp"
  # As root, workers run as nobody; they only need the config (read by the master) and tmp dirs.
  cat >"$dir/nginx.conf" <<NGINX
worker_processes $threads;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
events { worker_connections ${NGINX_CONNECTIONS:-4096}; }
http {
  access_log off;
  client_body_temp_path $dir/tmp/body;
  proxy_temp_path $dir/tmp/proxy;
  fastcgi_temp_path $dir/tmp/fastcgi;
  uwsgi_temp_path $dir/tmp/uwsgi;
  scgi_temp_path $dir/tmp/scgi;
  keepalive_requests 1000000;
  keepalive_timeout 15s;
  map_hash_max_size 262144;
  map_hash_bucket_size 256;
  # /go/<slug> -> the very Location refgate answers for that link ($REDIRECT_LINKS entries).
  map \$uri \$bench_location {
    default "";
    include $dir/links.map;
  }
  server {
    listen 127.0.0.1:$NGINX_PORT reuseport backlog=1024 deferred;
    location /go/ {
      if (\$bench_location = "") { return 404; }
      add_header Cache-Control "private, no-store";
      add_header X-Robots-Tag "noindex, nofollow";
      add_header Referrer-Policy "strict-origin-when-cross-origin";
      return 302 \$bench_location;
    }
  }
}
NGINX
  local pin=("${pin_server[@]}")
  ((threads > 1)) && pin=()
  "${pin[@]}" nginx -p "$dir" -c "$dir/nginx.conf" -e "$dir/error.log" -g 'daemon off;' \
    {_LOCK_FD}>&- >>"$dir/stdout.log" 2>&1 &
  NGINX_PID=$!
  local i
  for ((i = 0; i < 100; i++)); do
    [[ $(curl -s -o /dev/null -w '%{http_code}' --max-time 1 \
      "http://127.0.0.1:$NGINX_PORT/go/bench-000001" || true) == 302 ]] && return 0
    sleep 0.1
  done
  die "nginx did not start; see $dir/error.log"
}

location_of() { curl -s -o /dev/null -w '%{redirect_url}' --max-time 2 "$1"; }

redirect_part() {
  log "redirect: $REDIRECT_LINKS links, $ROUNDS round(s) of ${DURATION} s per server and case"
  import_links refgate_bench "$REDIRECT_LINKS"
  refgate_env refgate_bench 0
  mkdir -p "$STATE/nginx"
  "$PY" "$BENCH_PY" nginx-map "$REDIRECT_LINKS" "$STATE/nginx/links.map"
  "$PY" "$BENCH_PY" wrk-lua "$REDIRECT_LINKS" "$STATE/spread.lua"
  redis-cli -h 127.0.0.1 -p "$REDIS_PORT" -n 0 flushdb >/dev/null
  psql_q refgate_bench -c "TRUNCATE refgate_click_counts, refgate_uniques, refgate_flushed_buckets"

  local threads_list threads case conns close round server port
  IFS=, read -r -a threads_list <<<"$THREADS_LIST"
  for threads in "${threads_list[@]}"; do
    local cases=("keep-alive, 64 conn|64|0" "keep-alive, 256 conn|256|0"
      "keep-alive, 1000 conn|1000|0" "Connection: close, 64 conn|64|1")
    # 10,000 connections need more descriptors than a default shell gives, and the servers a
    # higher connection cap (this part only).
    local most=$((MANY_CONNECTIONS > 1000 ? MANY_CONNECTIONS : 1000))
    if ulimit -n $((MANY_CONNECTIONS + 1024)) 2>/dev/null; then
      cases+=("keep-alive, $MANY_CONNECTIONS conn|$MANY_CONNECTIONS|0")
    else
      NOTES+=("redirect: no $MANY_CONNECTIONS-connection case: cannot raise the open-file limit to $((MANY_CONNECTIONS + 1024))")
    fi
    ((threads > 1)) && cases=("keep-alive, 64 conn|64|0")
    # 2 or 3 servers x rounds x (warm-up + run) per case, plus start-up and checks.
    local nservers=2
    [[ -n $BASELINE_REV ]] && nservers=3
    local need=$((${#cases[@]} * ROUNDS * nservers * (DURATION + WARMUP + 1) + 20))
    have_time "$need" "redirect with $threads thread(s)" || continue
    REFGATE_MAX_CONNECTIONS=$((most + 100)) start_refgate_serve "$threads"
    local servers=(refgate nginx)
    if [[ -n $BASELINE_REV ]]; then
      REFGATE_MAX_CONNECTIONS=$((most + 100)) start_baseline_serve "$threads"
      servers=(refgate baseline nginx)
      [[ $(location_of "http://127.0.0.1:$BASE_PORT/go/bench-000001") == "$("$PY" "$BENCH_PY" location 1)" ]] ||
        die "the baseline answers another Location"
    fi
    NGINX_CONNECTIONS=$((most + 100)) start_nginx "$threads"
    if [[ -n $FLOOR_SRC ]] && ((threads == 1)); then
      _require_free_port "$FLOOR_PORT" "the floor program (bench)"
      "${pin_server[@]}" "$FLOOR_BIN" "$FLOOR_PORT" {_LOCK_FD}>&- >>"$STATE/floor.log" 2>&1 &
      FLOOR_PID=$!
      wait_http_200 "http://127.0.0.1:$FLOOR_PORT/" 10 302 ||
        die "the floor program did not answer; see $STATE/floor.log"
      servers+=(floor)
    fi
    local want_loc rg_loc ng_loc
    want_loc=$("$PY" "$BENCH_PY" location 1)
    rg_loc=$(location_of "http://127.0.0.1:$RG_PORT/go/bench-000001")
    ng_loc=$(location_of "http://127.0.0.1:$NGINX_PORT/go/bench-000001")
    [[ $rg_loc == "$want_loc" && $ng_loc == "$want_loc" ]] ||
      die "Locations differ: refgate '$rg_loc', nginx '$ng_loc', expected '$want_loc'"
    log "redirect, REFGATE_THREADS=$threads / worker_processes $threads" \
      "($( ((threads == 1 && PIN)) && echo "servers on CPU 0, wrk on CPU 1" || echo "unpinned"))"
    for case in "${cases[@]}"; do
      IFS='|' read -r name conns close <<<"$case"
      for ((round = 1; round <= ROUNDS; round++)); do
        for server in "${servers[@]}"; do
          # The floor program answers every request end and never closes.
          [[ $server == floor ]] && ((close)) && continue
          port=$(server_port "$server")
          log "  $name, round $round, $server"
          if ((WARMUP > 0)); then
            run_wrk "$server" "$threads" "$name" "$port" "$conns" "$close" "$WARMUP" warmup
          fi
          run_wrk "$server" "$threads" "$name" "$port" "$conns" "$close" "$DURATION" redirect
        done
      done
    done
    if ((PERF && threads == 1)); then
      : >"$PROFILE_TXT"
      profile_servers "${servers[@]}"
    fi
    local rss
    rss=$("$PY" "$BENCH_PY" rss "$RG_PID")
    REDIRECT_EXTRA+=("refgate RSS after the load with $REDIRECT_LINKS links, REFGATE_THREADS=$threads: $(jq -r '"\(.rss_kib/1024*10|floor/10) MiB (RssAnon \(.anon_kib/1024*10|floor/10) MiB, RssFile \(.file_kib/1024*10|floor/10) MiB, RssShmem \(.shmem_kib/1024*10|floor/10) MiB; VmHWM \(.hwm_kib/1024*10|floor/10) MiB)"' <<<"$rss")")
    stop_refgate
    stop_baseline
    stop_nginx
    stop_floor
  done

  # Counting was on: every click refgate answered must be in PostgreSQL after a flush.
  if [[ -s $RAW ]]; then
    refgate_env refgate_bench 0
    bounded 60 "$BIN" flush >"$STATE/redirect-flush.txt" || log "WARNING: final flush failed"
    local counted answered
    counted=$(psql_q refgate_bench -c "SELECT coalesce(sum(clicks), 0) FROM refgate_clicks")
    answered=$(jq -s '[.[] | select(.server == "refgate" or .server == "baseline") | .requests] | add // 0' "$RAW")
    REDIRECT_EXTRA+=("counting on: refgate counted $counted clicks into PostgreSQL (Redis -> flush); wrk saw $answered responses from refgate${BASELINE_REV:+ and the baseline} (warm-ups included; a few more may be answered after wrk stops)")
  fi
  REDIRECT_EXTRA+=("nginx: map of all $REDIRECT_LINKS /go/<slug> -> the same Location as refgate, return 302, same Cache-Control/X-Robots-Tag/Referrer-Policy headers, access_log off, listen ... deferred (TCP_DEFER_ACCEPT, as refgate); requests spread over all links by a wrk Lua script, browser User-Agent (refgate counts them as human clicks)")
}

# ------------------------------------------------------------------- flush

# flush_run CASE BUCKETS PER_BUCKET TRUNCATE_CLICKS(0/1)
flush_run() {
  local case=$1 buckets=$2 per=$3 truncate=$4
  local total=$((buckets * per))
  redis-cli -h 127.0.0.1 -p "$REDIS_PORT" -n 1 flushdb >/dev/null
  psql_q refgate_flush -c "TRUNCATE refgate_flushed_buckets"
  ((truncate)) && psql_q refgate_flush -c "TRUNCATE refgate_click_counts"
  if ((total > 0)); then
    "$PY" "$BENCH_PY" redis-fill "$buckets" "$per" 0 |
      bounded 120 redis-cli -h 127.0.0.1 -p "$REDIS_PORT" -n 1 --pipe >/dev/null
  fi
  # Everything Redis has is on disk (AOF) before the clock starts, as in steady operation.
  local start end out moved
  start=$EPOCHREALTIME
  out=$(bounded 120 "${pin_server[@]}" "$BIN" flush) || die "refgate flush failed: $out"
  end=$EPOCHREALTIME
  moved=$(sed -n 's/.* \([0-9]*\) counter(s).*/\1/p' <<<"$out")
  local secs
  secs=$(awk -v a="$start" -v b="$end" 'BEGIN {printf "%.4f", b - a}')
  log "  $case: $out ($secs s)"
  jq -nc --arg case "$case" --argjson counters "$total" --argjson moved "${moved:-0}" \
    --argjson seconds "$secs" --argjson buckets "$buckets" \
    '{part: "flush", case: $case, counters: $counters, moved: $moved, seconds: $seconds, buckets: $buckets}' >>"$RAW"
}

flush_part() {
  have_time $((FLUSH_RUNS * 30 + 20)) "flush" || return 0
  log "flush: $FLUSH_COUNTERS distinct counters"
  ensure_database "$PG_PORT" refgate_flush
  refgate_env refgate_flush 1
  bounded 60 "$BIN" migrate >/dev/null
  local n=$FLUSH_COUNTERS round
  flush_run "nothing to move (process + connections)" 0 0 1
  for ((round = 1; round <= FLUSH_RUNS; round++)); do
    flush_run "new counters, 1 bucket of $n" 1 "$n" 1
  done
  for ((round = 1; round <= FLUSH_RUNS; round++)); do
    flush_run "existing counters (upsert adds), 1 bucket" 1 "$n" 0
  done
  flush_run "new counters, 10 buckets of $((n / 10))" 10 $((n / 10)) 1
}

# ----------------------------------------------------------------- start-up

startup_part() {
  have_time $((STARTUP_RUNS * 2 * 8 + 20)) "startup" || return 0
  log "startup: $STARTUP_LINKS links"
  IMPORT_SECONDS=""
  import_links refgate_big "$STARTUP_LINKS"
  [[ -n $IMPORT_SECONDS ]] &&
    STARTUP_EXTRA+=("import of the $STARTUP_LINKS links: $IMPORT_SECONDS s ($IMPORT_FILES x refgate import of up to $IMPORT_CHUNK links)")
  refgate_env refgate_big 2
  export REFGATE_THREADS=1
  local round taskset_arg=""
  ((PIN)) && taskset_arg=0
  rm -f "$REFGATE_SNAPSHOT_FILE"
  for ((round = 1; round <= STARTUP_RUNS; round++)); do
    bounded 60 "$PY" "$BENCH_PY" startup --bin "$BIN" --label "from PostgreSQL" \
      --out "$STATE/startup.jsonl" --log "$STATE/refgate-startup.log" --timeout 30 \
      --taskset "$taskset_arg" >/dev/null || log "WARNING: start-up run failed"
  done
  [[ -s $REFGATE_SNAPSHOT_FILE ]] || die "no snapshot file was written at $REFGATE_SNAPSHOT_FILE"
  STARTUP_EXTRA+=("snapshot file: $(($(stat -c %s "$REFGATE_SNAPSHOT_FILE") / 1024)) KiB for $STARTUP_LINKS links; REFGATE_THREADS=1")
  export REFGATE_DATABASE_URL="postgresql://refgate@127.0.0.1:$DEAD_PG_PORT/refgate_big"
  for ((round = 1; round <= STARTUP_RUNS; round++)); do
    bounded 60 "$PY" "$BENCH_PY" startup --bin "$BIN" \
      --label "from snapshot file, PostgreSQL unreachable" \
      --out "$STATE/startup.jsonl" --log "$STATE/refgate-startup.log" --timeout 30 \
      --taskset "$taskset_arg" >/dev/null || log "WARNING: start-up run failed"
  done
  jq -c '. + {part: "startup"}' "$STATE/startup.jsonl" >>"$RAW"
  rm -f "$STATE/startup.jsonl"
}

# ------------------------------------------------------------------- idle

# Waits until PID has used no CPU for a second (at most SECONDS): refgate's start-up work in the
# background (the scanner's ASN ranges 20 s after start, the country ranges) allocates memory of
# its own, which must not land in the idle connections' figure.
wait_cpu_quiet() {
  local pid=$1 limit=$2 start=$SECONDS last=-1 now
  while ((SECONDS - start < limit)); do
    now=$(awk '{ print $14 + $15 }' "/proc/$pid/stat" 2>/dev/null) || return 0
    [[ $now == "$last" ]] && return 0
    last=$now
    sleep 1
  done
  NOTES+=("idle: refgate was still busy $limit s after start; its figure may include start-up work")
}

# Memory per 1,000 idle keep-alive connections, each server freshly started (one thread / worker):
# issue 22 asks for no more than nginx's. The limits are raised for this part only.
idle_part() {
  have_time 150 "idle" || return 0
  log "idle: $IDLE_CONNECTIONS keep-alive connections per server, one request each"
  local n=$IDLE_CONNECTIONS
  ulimit -n $((n + 1024)) 2>/dev/null || die "cannot raise the open-file limit to $((n + 1024))"
  [[ -s $STATE/nginx/links.map ]] || {
    mkdir -p "$STATE/nginx"
    "$PY" "$BENCH_PY" nginx-map "$REDIRECT_LINKS" "$STATE/nginx/links.map"
  }
  import_links refgate_bench "$REDIRECT_LINKS"
  local server
  for server in refgate nginx; do
    if [[ $server == refgate ]]; then
      REFGATE_MAX_CONNECTIONS=$((n + 100)) start_refgate_serve 1
      sleep 21 # past the scanner's ASN ranges walk's start (src/app/scanner.cpp)
      wait_cpu_quiet "$RG_PID" 30
    else
      NGINX_CONNECTIONS=$((n + 100)) start_nginx 1
    fi
    local pid=$RG_PID port=$RG_PORT
    if [[ $server == nginx ]]; then
      pid=$(pgrep -P "$NGINX_PID" | head -n 1)
      port=$NGINX_PORT
    fi
    bounded 120 "$PY" "$BENCH_PY" idle --server "$server" --port "$port" --pid "$pid" --n "$n" \
      --path /go/bench-000001 --agent "$BROWSER_UA" --settle 2 >>"$RAW" ||
      NOTES+=("idle: the $server run failed")
    if [[ $server == refgate ]]; then stop_refgate; else stop_nginx; fi
  done
}

# ------------------------------------------------------------------ memory

# memory_row STATE: one raw row of refgate's memory now (/proc/<pid>/status).
memory_row() {
  "$PY" "$BENCH_PY" rss "$RG_PID" | jq -c --arg state "$1" --argjson links "$MEMORY_LINKS" \
    '. + {part: "memory", state: $state, links: $links}' >>"$RAW"
}

# Memory over a load (issue 40 item 4: 64 MiB with 100,000 links and every data set on): one
# fresh `refgate serve` (one I/O thread, pinned like the redirect part), sampled at /readyz, 10 s
# later (the link-health round has started), right after wrk over all the links (each asked for
# twice), 5 and 15 s after (background rounds have given their transient memory back), and after
# one /metrics scrape.
memory_part() {
  have_time 150 "memory" || return 0
  MEMORY_LINKS=${LINKS:-$STARTUP_LINKS}
  log "memory: $MEMORY_LINKS links"
  import_links refgate_big "$MEMORY_LINKS"
  "$PY" "$BENCH_PY" wrk-lua "$MEMORY_LINKS" "$STATE/spread-memory.lua"
  refgate_env refgate_big 3
  redis-cli -h 127.0.0.1 -p "$REDIS_PORT" -n 3 flushdb >/dev/null
  export REFGATE_THREADS=1
  rm -f "$REFGATE_SNAPSHOT_FILE"
  "${pin_server[@]}" "$BIN" serve {_LOCK_FD}>&- >>"$STATE/refgate-memory.log" 2>&1 &
  RG_PID=$!
  wait_http_200 "http://127.0.0.1:$RG_ADMIN_PORT/readyz" 60 ||
    die "refgate did not become ready; see $STATE/refgate-memory.log"
  memory_row "at /readyz"
  sleep 10
  memory_row "10 s later"
  # Rounds of 8 s, each walking on from where the last stopped, until every link was asked for
  # twice (one round on a quiet machine; at most 8 when other work slows it down).
  local served=0 round n
  for ((round = 1; round <= 8 && served < 2 * MEMORY_LINKS; round++)); do
    bounded 30 "${pin_client[@]}" wrk -t 1 -c 64 -d 8s --timeout 5s -s "$STATE/spread-memory.lua" \
      -H "User-Agent: $BROWSER_UA" "http://127.0.0.1:$RG_PORT" -- "$served" >"$STATE/wrk-memory.txt" ||
      die "wrk failed; see $STATE/wrk-memory.txt"
    n=$(grep '^WRK_RESULT ' "$STATE/wrk-memory.txt" | cut -d' ' -f2- | jq -r .requests)
    [[ $n =~ ^[0-9]+$ ]] || die "no result from wrk; see $STATE/wrk-memory.txt"
    served=$((served + n))
  done
  memory_row "right after wrk -c 64, $((round - 1)) x 8 s, $served requests"
  sleep 5
  memory_row "5 s after"
  sleep 10
  memory_row "15 s after"
  # What a Prometheus scrape adds (and gives back: the per-link totals kept for it).
  curl -s -o /dev/null --max-time 10 "http://127.0.0.1:$RG_ADMIN_PORT/metrics" ||
    log "WARNING: /metrics did not answer"
  sleep 1
  memory_row "after a /metrics scrape"
  stop_refgate
}

# ------------------------------------------------------------------- micro

micro_part() {
  have_time 60 "micro" || return 0
  log "micro: refgate_micro_bench"
  local pin=("${pin_server[@]}")
  REFGATE_BENCH_OUT="$STATE" bounded 120 "${pin[@]}" "$MICRO_BIN" "[alloc],[oneshot]" \
    >"$STATE/micro-alloc.txt" 2>&1 || {
    cat "$STATE/micro-alloc.txt" >&2
    NOTES+=("micro: the allocation check FAILED (see .state/bench/micro-alloc.txt)")
  }
  bounded 240 "${pin[@]}" "$MICRO_BIN" "[micro]" "${MICRO_ARGS[@]}" -r xml -o "$STATE/micro.xml" ||
    NOTES+=("micro: a benchmark case failed (see .state/bench/micro.xml)")
  "$PY" "$BENCH_PY" micro-xml "$STATE/micro.xml" "$STATE/micro.json"
}

# ------------------------------------------------------------------- run

log "mode $MODE, budget $BUDGET s, threads $THREADS_LIST, pinned: $( ((PIN)) && echo yes || echo no)"
((PIN)) && NOTES+=("pinned with taskset: servers (refgate, nginx, refgate flush/serve in start-up) on CPU 0, wrk on CPU 1; PostgreSQL and Redis unpinned")
if ((DEPS_NICE)); then
  NOTES+=("PostgreSQL and Redis at nice 19 (and autogroup nice 19) during wrk runs: they stand in for servers of their own, which the redirect path never waits for (--deps-full-priority: as started)")
else
  NOTES+=("PostgreSQL and Redis at the priority they started with (--deps-full-priority)")
fi
NOTES+=("load average at start: $loadavg (the machine is shared)")
want micro && micro_part
want redirect && redirect_part
want flush && flush_part
want startup && startup_part
want idle && idle_part
want memory && memory_part

write_meta
report
REPORTED=1
log "results: tests/bench/results/latest.json (and latest.txt); logs in .state/bench; $((SECONDS - STARTED_AT)) s"
