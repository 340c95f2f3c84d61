#!/usr/bin/env bash
# What Redis and PostgreSQL pay as refgate instances are added: 1, 2, 4 and 8 simulated instances
# (refgate_scale_bench: a thread per instance, each with its own connection and the real bucket
# store, sending one batch a round back to back) against one Redis, then one `refgate flush` of
# everything they sent. Reported per instance count and as per-instance ratios to 1 instance:
#
#   tests/bench/scale_out.sh                 # full: 400 rounds an instance, 1,000 counters a batch
#   tests/bench/scale_out.sh --smoke         # a few rounds: proves the script works
#
# Also sweeps the batch size with one instance (100, 1,000 and 10,000 distinct counters: bytes and
# Redis CPU per round as a function of the links clicked in a window). Private PostgreSQL (fsync
# on, 127.0.0.1:54389) and Redis (AOF everysec, 127.0.0.1:63859) under .state/scale, stopped at
# the end; REFGATE_BENCH_PORT_SHIFT=N moves both. Every flush is checked: PostgreSQL must hold
# exactly the clicks sent. Prints a Markdown table (paste it into tests/bench/RESULTS.md) and
# writes tests/bench/results/scale-out.json (git-ignored).
set -euo pipefail

HERE="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)"
# shellcheck source-path=SCRIPTDIR source=../../deploy/local/lib.sh
source "$HERE/../../deploy/local/lib.sh"
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$HERE/lib.sh"

ROUNDS=400 SWEEP_ROUNDS=200
if [[ ${1:-} == --smoke ]]; then
  ROUNDS=5 SWEEP_ROUNDS=5
elif (($#)); then
  die "usage: $0 [--smoke]"
fi
SHIFT=${REFGATE_BENCH_PORT_SHIFT:-0}
PG_PORT=$((54389 + SHIFT))
REDIS_PORT=$((63859 + SHIFT))
STATE="$ROOT/.state/scale"
BUILD="$ROOT/build/bench"
OUT="$ROOT/tests/bench/results/scale-out.json"

lock_state scale
trap 'stop_all' EXIT
ensure_packages jq
bench_build_release refgate refgate_scale_bench

wipe_state "$STATE"
start_postgres "$STATE" "$PG_PORT" on
start_redis "$STATE" "$REDIS_PORT"
ensure_database "$PG_PORT" refgate_scale
export REFGATE_DATABASE_URL="postgresql://refgate@127.0.0.1:$PG_PORT/refgate_scale"
export REFGATE_REDIS_URL="redis://127.0.0.1:$REDIS_PORT/0"
export REFGATE_LOG_LEVEL=warn
timeout 60 "$BUILD/refgate" migrate >/dev/null

psql_q() {
  "$PG_BINDIR/psql" -X -qtA -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PG_PORT" -U refgate \
    -d refgate_scale "$@"
}

# run INSTANCES ROUNDS COUNTERS: one send phase and its flush; appends a JSON line to $OUT.
run() {
  local n=$1 rounds=$2 counters=$3 send start end flushed want got
  redis-cli -h 127.0.0.1 -p "$REDIS_PORT" flushall >/dev/null
  psql_q -c "TRUNCATE refgate_click_counts, refgate_flushed_buckets"
  send=$(timeout 300 "$BUILD/refgate_scale_bench" --redis "$REFGATE_REDIS_URL" --instances "$n" \
    --rounds "$rounds" --counters "$counters" --run "scale-$n-$counters")
  start=$EPOCHREALTIME
  flushed=$(timeout 300 "$BUILD/refgate" flush)
  end=$EPOCHREALTIME
  # Batch i of an instance adds (i % 3 + 1) clicks to counter i: the sum is known.
  want=$(awk -v k="$counters" -v r="$rounds" -v n="$n" \
    'BEGIN { s = 0; for (i = 0; i < k; i++) s += i % 3 + 1; print s * r * n }')
  got=$(psql_q -c "SELECT coalesce(sum(human), 0) FROM refgate_click_counts")
  [[ $got == "$want" ]] || die "$n instance(s): PostgreSQL holds $got clicks, $want were sent"
  jq -c --argjson flush_s "$(awk -v a="$start" -v b="$end" 'BEGIN {printf "%.4f", b - a}')" \
    --arg flushed "$flushed" --argjson rows "$(psql_q -c 'SELECT count(*) FROM refgate_click_counts')" \
    '. + {flush_seconds: $flush_s, flush_output: $flushed, rows: $rows}' <<<"$send" >>"$OUT"
  log "  $n instance(s), $counters counters a batch: $(tail -n 1 "$OUT")"
}

mkdir -p "$(dirname "$OUT")"
: >"$OUT"
log "instances 1, 2, 4, 8: $ROUNDS rounds each, 1,000 counters a batch"
for n in 1 2 4 8; do run "$n" "$ROUNDS" 1000; done
log "batch size with one instance: 100, 1,000, 10,000 counters"
for k in 100 1000 10000; do run 1 "$SWEEP_ROUNDS" "$k"; done

python3 - "$OUT" "$(nproc)" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
scale = [r for r in rows if r["counters"] == 1000][:4]
one = scale[0]
per = lambda r: r["flush_seconds"] / (r["instances"] * r["rounds_per_instance"])
print("| instances | rounds/s (all) | round p50 / p99 ms | Redis CPU µs a round | ratio to 1 | "
      "bytes a round | flush s | flush ms per instance-round | ratio to 1 |")
print("|---|---|---|---|---|---|---|---|---|")
for r in scale:
    print("| %d | %.0f | %.2f / %.2f | %.0f | %.2f | %.0f | %.2f | %.3f | %.2f |" % (
        r["instances"], r["rounds_per_s"], r["p50_ms"], r["p99_ms"],
        r["redis_cpu_us_per_round"], r["redis_cpu_us_per_round"] / one["redis_cpu_us_per_round"],
        r["redis_in_bytes_per_round"], r["flush_seconds"], per(r) * 1000, per(r) / per(one)))
print()
print("| counters a batch (1 instance) | bytes a round | Redis CPU µs a round | round p50 ms | "
      "flush s | rows |")
print("|---|---|---|---|---|---|")
for r in rows[4:]:
    print("| %d | %.0f | %.0f | %.2f | %.2f | %d |" % (
        r["counters"], r["redis_in_bytes_per_round"], r["redis_cpu_us_per_round"], r["p50_ms"],
        r["flush_seconds"], r["rows"]))
print()
print("%s cores; every flush checked exact" % sys.argv[2])
EOF
