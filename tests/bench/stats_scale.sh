#!/usr/bin/env bash
# The stats answers at a big publisher's scale (issue 41), with one command:
#
#   tests/bench/stats_scale.sh           full: 10,000 and 1,000 links x 365 days x 3 channels, and
#                                        the flush with the roll-ups against a build without them
#   tests/bench/stats_scale.sh --smoke   300 and 30 links x 40 days, one run each: proves the script
#
# Options: --links LIST     link counts, one database each (default 10000,1000)
#          --days N         days of counts up to today (default 365)
#          --runs N         timed runs of each answer (default 7; the base table's, 3)
#          --no-flush       leave out the flush part (and the baseline build it needs)
#          --open-day       today open as in service (sql/026: read from the base table, not from
#                           link days), where `refgate migrate` of a loaded database closes it
#          --flush-only     only the flush part: the first --links database loaded, no answers
#          --flush-runs N   alternating runs of each flush case (default 5)
#          --baseline REV   the build without roll-ups for the flush part (default: the parent of
#                           the commit that added sql/014_rollups.sql), built Release from
#                           `git archive` in build/bench-baseline
#          --budget SECONDS stop everything after this long (default 3600)
#
# Each database is loaded directly (10 partners, 90 % of the links under the partner `big`; a
# row per link, day and channel with every class, a unique estimate per link and day, written in
# day order as flushes write them), then `refgate migrate` builds the roll-ups in its batches.
# `refgate serve` (Release, build/bench) answers: every answer is timed over one keep-alive
# connection, round-robin, and its median reported as a ratio to one link's year answer of the
# same run (goal: at most 20x, and below 250 ms); then the same answers from the base table (the
# roll-ups marked incomplete, which is how the stats answered before them) for the "before"
# column. The flush part fills Redis with buckets of 1,000 and 10,000 counters on tomorrow's rows
# of the largest database and times `refgate flush` of this tree and of the baseline alternately
# (goal: at most 1.3x). Private PostgreSQL (fsync on, 127.0.0.1:54399) and Redis (63869), refgate
# on 18396/18397, under .state/stats-scale, all stopped at the end however the script ends;
# REFGATE_BENCH_PORT_SHIFT=N adds N to each port. Prints a Markdown table (paste it into
# tests/bench/RESULTS.md) and writes tests/bench/results/stats-scale.json (git-ignored).
set -euo pipefail

HERE="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)"
# shellcheck source-path=SCRIPTDIR source=../../deploy/local/lib.sh
source "$HERE/../../deploy/local/lib.sh"

COMMAND_LINE="tests/bench/stats_scale.sh${*:+ $*}"
LINKS_LIST="10000,1000"
DAYS=365
RUNS=7
BASE_RUNS=3
FLUSH=1
ANSWERS=1
FLUSH_RUNS=5
BUDGET=3600
BASELINE_REV=""
OPEN_DAY=0
while (($#)); do
  case $1 in
    --smoke) LINKS_LIST="300,30" DAYS=40 RUNS=1 BASE_RUNS=1 FLUSH_RUNS=1 ;;
    --links) LINKS_LIST=${2:?--links needs a list}; shift ;;
    --days) DAYS=${2:?--days needs a number}; shift ;;
    --runs) RUNS=${2:?--runs needs a number}; shift ;;
    --no-flush) FLUSH=0 ;;
    --open-day) OPEN_DAY=1 ;;
    --flush-only) ANSWERS=0 FLUSH=1 ;;
    --flush-runs) FLUSH_RUNS=${2:?--flush-runs needs a number}; shift ;;
    --baseline) BASELINE_REV=${2:?--baseline needs a commit}; shift ;;
    --budget) BUDGET=${2:?--budget needs seconds}; shift ;;
    -h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0"; exit 0 ;;
    *) die "unknown argument: $1 (try --help)" ;;
  esac
  shift
done
[[ $LINKS_LIST =~ ^[0-9]+(,[0-9]+)*$ ]] || die "--links takes a list such as 10000,1000"
if ! [[ $DAYS =~ ^[0-9]+$ ]] || ((DAYS < 31 || DAYS > 400)); then die "--days takes 31 to 400"; fi
if ! [[ $RUNS =~ ^[0-9]+$ ]] || ((RUNS < 1)); then die "--runs takes a whole number"; fi
if ! [[ $FLUSH_RUNS =~ ^[0-9]+$ ]] || ((FLUSH_RUNS < 1 || FLUSH_RUNS > 50)); then
  die "--flush-runs takes 1 to 50"
fi
((FLUSH || ANSWERS)) || die "--no-flush and --flush-only leave nothing to do"
[[ $BUDGET =~ ^[0-9]+$ ]] || die "--budget takes whole seconds"

STARTED_AT=$SECONDS
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

SHIFT=${REFGATE_BENCH_PORT_SHIFT:-0}
[[ $SHIFT =~ ^[0-9]+$ ]] || die "REFGATE_BENCH_PORT_SHIFT takes a whole number"
PG_PORT=$((54399 + SHIFT))
REDIS_PORT=$((63869 + SHIFT))
RG_PORT=$((18396 + SHIFT))
RG_ADMIN_PORT=$((18397 + SHIFT))
STATE="$ROOT/.state/stats-scale"
RESULTS="$ROOT/tests/bench/results"
OUT="$RESULTS/stats-scale.json"
BIN="$ROOT/build/bench/refgate"
BASE_BIN="$ROOT/build/bench-baseline/refgate"
PY=/usr/bin/python3
HELPER="$HERE/stats_scale.py"
RG_PID=""

lock_state stats-scale
cleanup() {
  [[ -z $RG_PID ]] || kill "$RG_PID" 2>/dev/null || true
  [[ -z $RG_PID ]] || wait "$RG_PID" 2>/dev/null || true
  stop_all
  log "elapsed: $SECONDS s"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

ensure_packages jq
npm_ci_build_inputs
mkdir -p "$STATE" "$RESULTS"

log "building Release in build/bench (refgate)"
bounded "$(remaining)" cmake -S "$ROOT" -B "$ROOT/build/bench" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DREFGATE_BUILD_TESTS=OFF -DREFGATE_BUILD_BENCH=ON >"$STATE/cmake.log" 2>&1 ||
  die "cmake configure failed; see $STATE/cmake.log"
bounded "$(remaining)" cmake --build "$ROOT/build/bench" --target refgate || die "build failed"

BASELINE_COMMIT=""
if ((FLUSH)); then
  if [[ -z $BASELINE_REV ]]; then
    added=$(git -C "$ROOT" log -1 --format=%H --diff-filter=A -- sql/014_rollups.sql)
    [[ -n $added ]] || die "no commit adds sql/014_rollups.sql yet: give --baseline REV"
    BASELINE_REV="$added^"
  fi
  BASELINE_COMMIT=$(git -C "$ROOT" rev-parse --verify "$BASELINE_REV^{commit}") ||
    die "--baseline: no commit '$BASELINE_REV'"
  stamp="$ROOT/build/bench-baseline/.baseline-commit"
  if [[ ! -x $BASE_BIN || ! -f $stamp || $(cat "$stamp") != "$BASELINE_COMMIT" ]]; then
    log "building the baseline ${BASELINE_COMMIT:0:12} Release in build/bench-baseline"
    rm -rf "$STATE/baseline-src" "$ROOT/build/bench-baseline"
    mkdir -p "$STATE/baseline-src"
    git -C "$ROOT" archive "$BASELINE_COMMIT" | tar -x -C "$STATE/baseline-src"
    # An older tree may not build warning-free with today's compiler flags.
    sed -i 's/ -Werror / /' "$STATE/baseline-src/CMakeLists.txt"
    while IFS= read -r -d '' lock; do
      dir=$(dirname "${lock#"$STATE/baseline-src/"}")
      if cmp -s "$ROOT/$dir/package-lock.json" "$lock" && [[ -d $ROOT/$dir/node_modules ]]; then
        cp -al "$ROOT/$dir/node_modules" "$STATE/baseline-src/$dir/"
      else
        npm_ci_if_stale "$STATE/baseline-src/$dir"
      fi
    done < <(find "$STATE/baseline-src/src" -name package-lock.json -not -path '*/node_modules/*' -print0)
    bounded "$(remaining)" cmake -S "$STATE/baseline-src" -B "$ROOT/build/bench-baseline" -G Ninja \
      -DCMAKE_BUILD_TYPE=Release -DREFGATE_BUILD_TESTS=OFF >"$STATE/cmake-baseline.log" 2>&1 ||
      die "baseline cmake configure failed; see $STATE/cmake-baseline.log"
    bounded "$(remaining)" cmake --build "$ROOT/build/bench-baseline" --target refgate ||
      die "baseline build failed"
    printf '%s\n' "$BASELINE_COMMIT" >"$stamp"
  fi
fi

wipe_state "$STATE/servers"
start_postgres "$STATE/servers" "$PG_PORT" on
start_redis "$STATE/servers" "$REDIS_PORT"
export REFGATE_REDIS_URL="redis://127.0.0.1:$REDIS_PORT/0"
export REFGATE_LISTEN="127.0.0.1:$RG_PORT" REFGATE_ADMIN_LISTEN="127.0.0.1:$RG_ADMIN_PORT"
export REFGATE_SNAPSHOT_FILE="$STATE/snapshot.json" REFGATE_SPILL_FILE="$STATE/spill.json"
export REFGATE_LOG_LEVEL=warn REFGATE_FLUSH_INTERVAL_MS=3600000 REFGATE_LINKCHECK_INTERVAL=0

psql_q() {
  local db=$1
  shift
  "$PG_BINDIR/psql" -X -qtA -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PG_PORT" -U refgate -d "$db" "$@"
}
ms_since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", (b - a) * 1000 }'; }

# load DB LINKS: the schema, LINKS links and DAYS days of counts written directly, then the
# roll-ups built by `refgate migrate`; appends the database's facts to $STATE/size-DB.json.
load() {
  local db=$1 n=$2 start build_ms batches max_batch rows
  ensure_database "$PG_PORT" "$db"
  export REFGATE_DATABASE_URL="postgresql://refgate@127.0.0.1:$PG_PORT/$db"
  bounded 120 "$BIN" migrate >/dev/null
  log "$db: loading $n links x $DAYS days x 3 channels"
  start=$EPOCHREALTIME
  bounded 3600 "$PG_BINDIR/psql" -X -qtA -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PG_PORT" -U refgate \
    -d "$db" <<SQL
INSERT INTO refgate_partners (slug, name, ref_param, ref_code, allowed_domains)
SELECT CASE WHEN i = 0 THEN 'big' ELSE 'p' || i END, 'Partner ' || i, 'ref', 'bench', ARRAY['example.com']
FROM generate_series(0, 9) i;
INSERT INTO refgate_links (slug, partner_id, destination)
SELECT 'l' || i,
       (SELECT id FROM refgate_partners WHERE slug = CASE WHEN i < $n * 9 / 10 THEN 'big' ELSE 'p' || (1 + i % 9) END),
       'https://example.com/' || i
FROM generate_series(0, $n - 1) i;
INSERT INTO refgate_click_counts (link_id, day, channel, human, bot, prefetch, scanner)
SELECT l.id, d.day, c.channel, (l.id * 7 + d.n * 3 + c.k) % 40 + c.k, (l.id + d.n) % 4, (l.id + d.n) % 2,
       CASE WHEN (l.id + d.n) % 29 = 0 THEN 1 ELSE 0 END
FROM (SELECT n, current_date - n AS day FROM generate_series(0, $DAYS - 1) n) d,
     refgate_links l,
     (VALUES ('direct', 1), ('newsletter', 2), ('social', 3)) AS c(channel, k)
ORDER BY d.day, l.id, c.channel;
INSERT INTO refgate_uniques (link_id, day, unique_estimate)
SELECT l.id, current_date - n, 5 + (l.id + n) % 30
FROM generate_series(0, $DAYS - 1) n, refgate_links l
ORDER BY 2, 1;
ANALYZE;
SQL
  log "$db: loaded in $(ms_since "$start") ms; building the roll-ups (refgate migrate)"
  start=$EPOCHREALTIME
  REFGATE_LOG_LEVEL=debug bounded 3600 "$BIN" migrate >/dev/null 2>"$STATE/build-$db.log" ||
    die "refgate migrate failed; see $STATE/build-$db.log"
  build_ms=$(ms_since "$start")
  batches=$(grep -c '"rollups_batch"' "$STATE/build-$db.log" || true)
  max_batch=$(grep '"rollups_batch"' "$STATE/build-$db.log" | jq -s 'map(.ms) | max // 0')
  [[ $(psql_q "$db" -c "SELECT complete FROM refgate_rollup_state") == t ]] ||
    die "$db: the roll-ups are not complete after refgate migrate"
  psql_q "$db" -c "VACUUM ANALYZE"
  rows=$(psql_q "$db" -c "SELECT count(*) FROM refgate_click_counts")
  log "$db: roll-ups built in $build_ms ms, $batches batches, the longest $max_batch ms"
  if ((OPEN_DAY)); then
    psql_q "$db" -c "UPDATE refgate_rollup_state SET days_through = current_date"
    log "$db: today is open (read from refgate_click_counts)"
  fi
  jq -n --argjson links "$n" --argjson days "$DAYS" --argjson rows "$rows" \
    --argjson build_seconds "$(awk -v m="$build_ms" 'BEGIN { print m / 1000 }')" \
    --argjson batches "$batches" --argjson max_batch_ms "$max_batch" \
    '{links: $links, days: $days, rows: $rows, build_seconds: $build_seconds, batches: $batches,
      max_batch_ms: $max_batch_ms}' >"$STATE/size-$db.json"
}

wait_ready() {
  local i
  for ((i = 0; i < 600; i++)); do
    [[ $(curl -s -o /dev/null -w '%{http_code}' --max-time 1 "http://127.0.0.1:$RG_ADMIN_PORT/readyz" || true) == 200 ]] && return 0
    _pid_is "$RG_PID" refgate || die "refgate exited at start; see $STATE/serve.log"
    sleep 0.1
  done
  die "refgate did not become ready; see $STATE/serve.log"
}

# answers DB: times every answer from the roll-ups, then from the base table.
answers() {
  local db=$1 token from year
  export REFGATE_DATABASE_URL="postgresql://refgate@127.0.0.1:$PG_PORT/$db"
  token=$("$BIN" token create --name "bench-$db" --role viewer | tail -n 1)
  "$BIN" serve {_LOCK_FD}>&- >>"$STATE/serve.log" 2>&1 &
  RG_PID=$!
  wait_ready
  from=$(psql_q "$db" -c "SELECT (current_date - 364)::text")
  year="from=$from&to=$(psql_q "$db" -c "SELECT current_date::text")"
  jq -n --arg year "$year" '[
    {name: "link year", target: ("/api/v1/stats/links/l7?" + $year)},
    {name: "top 30 days", target: "/api/v1/stats/top"},
    {name: "top year", target: ("/api/v1/stats/top?" + $year)},
    {name: "partner 30 days", target: "/api/v1/stats/partners/big"},
    {name: "partner year", target: ("/api/v1/stats/partners/big?" + $year)},
    {name: "top year, CSV", target: ("/api/v1/stats/top?limit=100&" + $year), accept: "text/csv"},
    {name: "partner year, CSV", target: ("/api/v1/stats/partners/big?" + $year), accept: "text/csv"},
    {name: "top partners year", target: ("/api/v1/stats/top?by=partner&" + $year)},
    {name: "overview 30 days", target: "/api/v1/stats/overview"},
    {name: "overview year", target: ("/api/v1/stats/overview?" + $year)}
  ]' >"$STATE/cases.json"
  log "$db: timing the answers from the roll-ups ($RUNS runs each)"
  bounded 1800 "$PY" "$HELPER" answers --port "$RG_ADMIN_PORT" --token "$token" \
    --cases "$STATE/cases.json" --runs "$RUNS" --budget "$(remaining)" >"$STATE/rollups-$db.json"
  log "$db: timing the same answers from the base table ($BASE_RUNS runs each)"
  psql_q "$db" -c "UPDATE refgate_rollup_state SET complete = false"
  bounded 3600 "$PY" "$HELPER" answers --port "$RG_ADMIN_PORT" --token "$token" \
    --cases "$STATE/cases.json" --runs "$BASE_RUNS" --warmup 0 --budget "$(remaining)" --tolerate-cuts \
    >"$STATE/base-$db.json"
  psql_q "$db" -c "UPDATE refgate_rollup_state SET complete = true"
  kill "$RG_PID"
  wait "$RG_PID" || true
  RG_PID=""
  jq --slurpfile r "$STATE/rollups-$db.json" --slurpfile b "$STATE/base-$db.json" \
    '. + {rollups: $r[0], base: $b[0]}' "$STATE/size-$db.json" >"$STATE/answers-$db.json"
}

# flush_once BIN BUCKETS PER_BUCKET DB SEQ: Redis filled with the buckets (ids of their own for
# each SEQ), `refgate flush` timed (ms).
flush_once() {
  local bin=$1 buckets=$2 per=$3 db=$4 seq=$5 start out took
  redis-cli -h 127.0.0.1 -p "$REDIS_PORT" flushall >/dev/null
  "$PY" "$HELPER" fill --buckets "$buckets" --per-bucket "$per" --first "$FIRST_ID" \
    --last "$LAST_ID" --offset "$((seq * 977))" --seq "$seq" --day "$FLUSH_DAY" |
    bounded 120 redis-cli -h 127.0.0.1 -p "$REDIS_PORT" --pipe >/dev/null
  start=$EPOCHREALTIME
  out=$(REFGATE_DATABASE_URL="postgresql://refgate@127.0.0.1:$PG_PORT/$db" bounded 300 "$bin" flush) ||
    die "refgate flush ($bin) failed: $out"
  took=$(ms_since "$start")
  [[ $out == *"flushed: $buckets bucket(s), $((buckets * per)) counter(s)"* ]] ||
    die "refgate flush ($bin) moved something else: $out"
  echo "$took"
}

flush_part() {
  local db=$1 n=$2 buckets per case run this base load seq=0
  # The counts go to tomorrow: a day whose rows the flushes write, as every day after the
  # migration's (the build writes a link's days together, so today's link-day rows lie a page
  # apart; the flushes of a day write its rows side by side).
  FLUSH_DAY=$(date -u -d tomorrow +%F)
  FIRST_ID=$(psql_q "$db" -c "SELECT min(id) FROM refgate_links")
  LAST_ID=$(psql_q "$db" -c "SELECT max(id) FROM refgate_links")
  # The baseline writes counts without roll-ups, which would mark them for a rebuild (that this
  # tree's flush would then do): this database is thrown away, so the trigger is off here.
  psql_q "$db" -c "ALTER TABLE refgate_click_counts DISABLE TRIGGER refgate_click_counts_unmaintained;
                   ALTER TABLE refgate_uniques DISABLE TRIGGER refgate_uniques_unmaintained"
  : >"$STATE/flush.jsonl"
  for case in "20 1000" "4 10000"; do
    read -r buckets per <<<"$case"
    # A bucket holds at most four counters a link (three human channels and one bot).
    if ((per > n * 4)); then
      log "flush: $buckets buckets of $per counters left out: $n links fill at most $((n * 4)) a bucket"
      continue
    fi
    log "flush: $buckets buckets of $per counters, this tree and ${BASELINE_COMMIT:0:12} alternately"
    for ((run = 1; run <= FLUSH_RUNS; run++)); do
      seq=$((seq + 2))
      this=$(flush_once "$BIN" "$buckets" "$per" "$db" "$seq")
      base=$(flush_once "$BASE_BIN" "$buckets" "$per" "$db" "$((seq + 1))")
      load=$(cut -d' ' -f1 /proc/loadavg)
      log "  run $run: this tree $this ms, baseline $base ms, load average $load"
      jq -nc --arg case "$buckets buckets of $(printf "%'d" "$per") counters" \
        --argjson this "$this" --argjson base "$base" --argjson load "$load" \
        '{case: $case, this: $this, base: $base, load: $load}' >>"$STATE/flush.jsonl"
    done
  done
  jq -s --argjson runs "$FLUSH_RUNS" --argjson links "$n" --arg baseline "${BASELINE_COMMIT:0:12}" '
    def median: sort | if length % 2 == 1 then .[length / 2 | floor]
                       else (.[length / 2 - 1] + .[length / 2]) / 2 end;
    {runs: $runs, links: $links, baseline: $baseline,
     cases: (group_by(.case) | map({case: .[0].case, this_ms: (map(.this) | median),
                                    baseline_ms: (map(.base) | median)}))}' \
    "$STATE/flush.jsonl" >"$STATE/flush.json"
}

IFS=, read -r -a SIZES <<<"$LINKS_LIST"
FIRST_SIZE=${SIZES[0]}
if ((ANSWERS)); then
  for n in "${SIZES[@]}"; do
    load "refgate_stats_$n" "$n"
    answers "refgate_stats_$n"
  done
else
  load "refgate_stats_$FIRST_SIZE" "$FIRST_SIZE"
  SIZES=() # no answers to report
fi
((FLUSH)) && flush_part "refgate_stats_$FIRST_SIZE" "$FIRST_SIZE"

jq -n --arg command "$COMMAND_LINE" --arg commit "$(git -C "$ROOT" rev-parse --short HEAD)" \
  --arg load "$(cut -d' ' -f1-3 /proc/loadavg)" \
  --slurpfile sizes <(for n in "${SIZES[@]+"${SIZES[@]}"}"; do cat "$STATE/answers-refgate_stats_$n.json"; done) \
  --slurpfile flush <( ((FLUSH)) && cat "$STATE/flush.json" || echo null) '
  {command: $command, commit: $commit, goal_ratio: 20, goal_ms: 250, sizes: $sizes,
   flush: $flush[0],
   notes: ["\($command) at \($commit); load average at the end \($load); 2 shared cores"]}' >"$OUT"
"$PY" "$HELPER" report "$OUT"
