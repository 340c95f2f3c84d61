#!/usr/bin/env bash
# Runs the whole test suite locally and in CI: format check, sanitizer build,
# fresh private PostgreSQL (127.0.0.1:54339) and Redis (127.0.0.1:63809) under
# .state/test, then ctest. REFGATE_TEST_PG_PORT / REFGATE_TEST_REDIS_PORT
# move the two servers to other ports. Extra arguments go to ctest (e.g. -R redirect).
# A run without arguments also runs the fuzz targets (tests/fuzz/run.sh); REFGATE_TEST_FUZZ=0|1
# turns that off or on.
# Exits with ctest's status; servers are always stopped.
set -euo pipefail

HERE="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)"
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$HERE/lib.sh"

STATE="$ROOT/.state/test"
# Overridable so that two checkouts can run their suites at the same time.
PG_PORT=${REFGATE_TEST_PG_PORT:-54339}
REDIS_PORT=${REFGATE_TEST_REDIS_PORT:-63809}

lock_state test
# The run's throwaway files live in memory when the machine has a tmpfs to spare: the suite's
# PostgreSQL creates and drops some three hundred databases of 460 files each, and on ext4 the
# kernel's search for free inodes among thousands just deleted took the backends about 30 CPU s
# of a run (tests/README.md, "2026-12-06, third session"). The folder holds the servers' data
# (.state/test links to it) and TMPDIR: the test programs', browsers' and compilers' temporary
# files. It is removed after a run that passed, and kept for its logs after one that failed.
prune_memory_scratch
scratch=$(memory_scratch test)
if [[ -n $scratch ]]; then
  claim_memory_scratch "$scratch"
  export TMPDIR=$scratch/tmp
fi
# The tests' private PostgreSQL servers copy one initdb'd cluster in here instead of running
# initdb each (seconds each on a busy machine; tests/support/private_postgres.hpp); it is made
# while the build runs.
pg_template=$(mktemp -d "${TMPDIR:-/tmp}/refgate-pg-template.XXXXXX")
chmod 755 "$pg_template"
export REFGATE_TEST_PG_TEMPLATE=$pg_template
pg_template_job=
fuzz_job=
# shellcheck disable=SC2317 # run by the EXIT trap
on_exit() {
  local status=$?
  # `|| true`: the jobs have usually ended, and a failing command would end the trap (set -e).
  [[ -z $fuzz_job ]] || kill "$fuzz_job" 2>/dev/null || true
  [[ -z $pg_template_job ]] || wait "$pg_template_job" 2>/dev/null || true
  stop_all
  rm -rf "$pg_template"
  cpu_now
  log "elapsed: $SECONDS s, CPU $(((CPU_NOW + 500) / 1000)) s (user + sys of the parts above)"
  if [[ -n $scratch ]]; then
    if ((status == 0)); then
      rm -rf -- "$scratch" "$STATE" || log "could not remove all of $scratch"
    else
      log "the run's servers' data and logs: $STATE -> $scratch/state"
    fi
  fi
}
trap on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

ensure_packages "${REFGATE_TEST_APT_PACKAGES[@]}"
npm_ci_build_inputs
npm_ci_if_stale "$ROOT/tests/browser"
part_done "packages and npm ci"
# Made aside and renamed into place: a test copies a whole cluster or makes its own.
(
  aside=$pg_template/new-test-sh
  mkdir "$aside"
  if ((EUID == 0)); then chown "$(_pg_user):" "$aside"; fi
  _pg_run "$PG_BINDIR/initdb" -D "$aside/data" -U refgate --auth=trust -E UTF8 \
    --locale=C.UTF-8 -N >"$pg_template/initdb.log" 2>&1 && mv "$aside/data" "$pg_template/data"
  rm -rf "$aside"
) &
pg_template_job=$!
log "checking formatting (clang-format-14)"
check_format
part_done "format check"
# The libFuzzer targets (clang-14, tests/fuzz), a few seconds each: on a whole run, or when
# REFGATE_TEST_FUZZ=1; REFGATE_TEST_FUZZ=0 skips them. Any finding fails the suite. They are
# built, and each run as soon as its program is linked, two at a time (tests/fuzz/run.sh), at the
# lowest priority from here on: beside the main build
# they take what it leaves idle (its configure steps and its last links), and beside ctest, whose
# tests spend much of their time waiting on servers and browsers, its idle moments, instead of
# minutes of their own after ctest (a target's time is wall time: one that got little CPU ran
# fewer inputs, not longer).
fuzz=${REFGATE_TEST_FUZZ:-$(($# == 0))}
if [[ $fuzz == 1 ]]; then
  # Two seconds each: the seed corpus replayed and a few thousand to a hundred thousand new
  # inputs (tests/fuzz/README.md); run.sh --minutes N for a night. The run is CPU-bound, so
  # every target's second is half a second of its wall time (three seconds until 2026-12-06).
  fuzz_seconds=${REFGATE_TEST_FUZZ_SECONDS:-2}
  log "fuzz targets: built and run at nice 19 beside the build and ctest ($fuzz_seconds s each, two at a time; build/fuzz.log)"
  mkdir -p "$ROOT/build"
  nolock nice -n 19 "$ROOT/tests/fuzz/run.sh" --seconds-per-target "$fuzz_seconds" --jobs 2 \
    >"$ROOT/build/fuzz.log" 2>&1 &
  fuzz_job=$!
fi
# The service's sources in unity batches too (CMake's eight a batch; the test programs always
# are, see REFGATE_UNITY_TESTS): the sanitizer build takes about four minutes on CI's two cores
# instead of seven, which keeps the whole run inside its time (the fuzz targets' library is built
# in unity batches too, tests/fuzz/CMakeLists.txt). Sixteen a batch compiles (no two sources
# define one helper twice any more) but did not pay: 578 CPU s for a clean build against 552 at
# eight (tests/README.md). The Release builds (run.sh, the benches) stay one source per compiler
# run, so a source that only compiles beside its neighbours still fails somewhere. -g1: line tables only, all a sanitizer's
# stack trace reads (function, file, line); without the types and locals of -g every compile
# step takes about 12 % less CPU and the objects are 15 % smaller. lld links the three big
# sanitizer programs in a quarter of GNU ld's CPU time (10 s of CPU down to 2.6 s, measured
# 2026-12-05; gold: 6 s). The ggc parameters keep g++'s garbage collector from running below 1 GiB
# of compiler heap, which none of these steps reaches: each takes about 12 % less CPU and at most
# 2.1 GB of memory instead of 1.5 (the largest, a batch of 32 unit test files; 2026-12-06).
build test Debug -DREFGATE_SANITIZE=ON -DREFGATE_FAULT_POINTS=ON -DCMAKE_UNITY_BUILD=ON \
  -DCMAKE_CXX_FLAGS_DEBUG=-g1 -DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld \
  "-DCMAKE_CXX_FLAGS=--param=ggc-min-expand=100 --param=ggc-min-heapsize=1048576"
part_done "build of build/test"

# Fresh databases every run, so results never depend on a previous run.
wipe_state "$STATE"
state_dir=$STATE
if [[ -n $scratch ]]; then
  # The servers get the folder's own path: the postgres user may not be able to pass through the
  # checkout (e.g. under /root) to follow the link.
  wipe_state "$scratch/state"
  (umask 022 && mkdir "$scratch/state")
  ln -s "$scratch/state" "$STATE"
  state_dir=$scratch/state
fi
# fsync=off: throwaway data, and much faster.
start_postgres "$state_dir" "$PG_PORT" off
start_redis "$state_dir" "$REDIS_PORT"

export REFGATE_TEST_DATABASE_URL="postgresql://refgate@127.0.0.1:$PG_PORT/postgres"
export REFGATE_TEST_REDIS_URL="redis://127.0.0.1:$REDIS_PORT/0"
export REFGATE_BIN="$ROOT/build/test/refgate"
export REFGATE_TEST_PG_BINDIR="$PG_BINDIR"
REFGATE_TEST_PG_USER="$(_pg_user)"
export REFGATE_TEST_PG_USER
# handle_sigill: a failed UBSan check traps (CMakeLists.txt), and ASan reports it with its stack.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:handle_sigill=1
# A known leak in libpqxx 6.4 when PostgreSQL goes away mid-query (see the file).
export LSAN_OPTIONS="suppressions=$ROOT/tests/lsan.supp:print_suppressions=0"

wait "$pg_template_job" || log "no template cluster (see $pg_template/initdb.log): each test runs initdb"
pg_template_job=

# One migrated database that the C++ tests' databases are copies of (CREATE DATABASE ... TEMPLATE,
# tests/support/test_database.cpp): the migrations run here once instead of in each of some
# three hundred test databases.
"$PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 "$REFGATE_TEST_DATABASE_URL" \
  -c "CREATE DATABASE refgate_migrated"
REFGATE_DATABASE_URL="postgresql://refgate@127.0.0.1:$PG_PORT/refgate_migrated" \
  "$REFGATE_BIN" migrate >"$STATE/migrated.log" 2>&1 || die "refgate migrate failed ($STATE/migrated.log)"
export REFGATE_TEST_TEMPLATE_DATABASE=refgate_migrated

# --no-tests=error: a build that registers no tests must not pass.
# Six at a time on two cores: the entries mostly wait (on servers, deadlines, browsers; at four
# at a time ctest's wall time was its entries' seconds over four, 417 s, with a core's worth of
# CPU left to the fuzz targets; at six 317 s, measured 2026-12-06), and each has its own
# database, Redis or servers (tests/README.md). The long ones start first (their COST,
# tests/CMakeLists.txt). REFGATE_TEST_JOBS sets another number.
rc=0
part_done "servers started"
nolock ctest --test-dir "$ROOT/build/test" --output-on-failure -j"${REFGATE_TEST_JOBS:-6}" \
  --timeout 300 --no-tests=error "$@" || rc=$?
part_done "ctest"

if [[ $fuzz == 1 ]]; then
  log "waiting for the fuzz targets"
  fuzz_rc=0
  wait "$fuzz_job" || fuzz_rc=$?
  fuzz_job=
  part_done "fuzz targets (wall: after ctest; CPU: their build and runs beside the build and ctest)"
  grep '^fuzz:' "$ROOT/build/fuzz.log" || true
  if ((fuzz_rc != 0)); then
    tail -n 60 "$ROOT/build/fuzz.log" >&2
    log "the fuzz targets failed to build or found something (build/fuzz.log)"
    rc=1
  fi
fi
exit "$rc"
