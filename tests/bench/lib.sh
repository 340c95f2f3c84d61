# shellcheck shell=bash
# Helpers the bench scripts share, on top of deploy/local/lib.sh (source that first).
# Sourced, not executed: the caller sets `set -euo pipefail`.
#
# Provides: bench_build_release, bench_serve, bench_stop_servers, BENCH_PIDS.

# bench_build_release TARGET...: builds TARGETs Release in build/bench (tests off, benches on),
# the data packages fetched first; a failed configure dies naming its log (build/bench.cmake.log).
bench_build_release() {
  local build="$ROOT/build/bench"
  npm_ci_build_inputs
  log "building Release in build/bench ($*)"
  mkdir -p "$ROOT/build"
  cmake -S "$ROOT" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DREFGATE_BUILD_TESTS=OFF \
    -DREFGATE_BUILD_BENCH=ON >"$ROOT/build/bench.cmake.log" 2>&1 ||
    die "cmake configure failed; see build/bench.cmake.log"
  cmake --build "$build" --target "$@" || die "the Release build failed"
}

# The refgate servers bench_serve started in this shell, for bench_stop_servers.
BENCH_PIDS=()

# bench_serve NAME BIN PORT ADMIN_PORT STATE: `BIN serve` in the background on 127.0.0.1:PORT
# (admin 127.0.0.1:ADMIN_PORT) with one I/O thread, its snapshot file, spill file and log
# (NAME-snapshot.json, NAME-spill.json, NAME.log) under STATE, and the other REFGATE_* settings
# from the environment. Its pid goes to BENCH_PIDS at once (stopped however the script ends);
# waits at most 20 s for its /readyz and dies, naming the log, when it is not ready by then.
bench_serve() {
  local name=$1 bin=$2 port=$3 admin_port=$4 state=$5 i
  REFGATE_LISTEN="127.0.0.1:$port" REFGATE_ADMIN_LISTEN="127.0.0.1:$admin_port" REFGATE_THREADS=1 \
    REFGATE_SNAPSHOT_FILE="$state/$name-snapshot.json" REFGATE_SPILL_FILE="$state/$name-spill.json" \
    "$bin" serve >"$state/$name.log" 2>&1 &
  BENCH_PIDS+=($!)
  for ((i = 0; i < 100; i++)); do
    curl -fsS "http://127.0.0.1:$admin_port/readyz" >/dev/null 2>&1 && return 0
    sleep 0.2
  done
  curl -fsS "http://127.0.0.1:$admin_port/readyz" >/dev/null ||
    die "refgate ($name) not ready; see $state/$name.log"
}

# Stops (SIGTERM, then waits for) every server bench_serve started that still runs. Idempotent and
# never fails: it runs from EXIT traps.
bench_stop_servers() {
  local pid
  for pid in "${BENCH_PIDS[@]}"; do
    if kill -0 "$pid" 2>/dev/null; then
      kill -TERM "$pid" 2>/dev/null || true
      wait "$pid" 2>/dev/null || true
    fi
  done
  return 0
}
