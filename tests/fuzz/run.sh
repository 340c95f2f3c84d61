#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz with clang-14 (build/fuzz) and runs each over its
# seed corpus in tests/fuzz/corpus/<target> for a bounded time. New inputs go to a temporary
# directory, so the corpus in the repository never grows by itself; a finding (crash, leak,
# sanitizer report, broken invariant, timeout, out of memory) fails the run and is kept under
# build/fuzz/findings/<target>/ to be fixed and added to the corpus as a regression input.
#
#   tests/fuzz/run.sh                          # 8 s per target, one after the other
#   tests/fuzz/run.sh --seconds-per-target 60
#   tests/fuzz/run.sh --minutes 240            # a night: the minutes shared by the targets
#   tests/fuzz/run.sh --only location          # one target (any option above still applies)
#   tests/fuzz/run.sh --build-only             # build the targets, run none
#   tests/fuzz/run.sh --jobs 2                 # run two targets at a time (default 1)
set -euo pipefail

HERE="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)"
ROOT="$(cd -- "$HERE/../.." && pwd -P)"
BUILD="$ROOT/build/fuzz"

seconds=8
only=""
build_only=0
jobs=1
while (($#)); do
  case $1 in
    --seconds-per-target) seconds=$2; shift 2 ;;
    --minutes) minutes=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --build-only) build_only=1; shift ;;
    --jobs) jobs=$2; shift 2 ;;
    *) echo "usage: $0 [--seconds-per-target N | --minutes N] [--only TARGET] [--build-only] [--jobs N]" >&2; exit 2 ;;
  esac
done

targets=()
for dir in "$HERE"/corpus/*/; do
  name=$(basename "$dir")
  [[ -z $only || $only == "$name" ]] && targets+=("$name")
done
((${#targets[@]})) || { echo "fuzz: no target named '$only'" >&2; exit 2; }
if [[ -n ${minutes:-} ]]; then
  seconds=$((minutes * 60 * jobs / ${#targets[@]}))
fi

# lld (a test package of deploy/local/lib.sh): the 17 sanitizer programs link in a quarter of GNU
# ld's CPU time.
cmake -S "$HERE" -B "$BUILD" -G Ninja -DCMAKE_CXX_COMPILER=clang++-14 \
  -DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld >/dev/null
# build_cpu: the CPU time (user, then sys) of this shell's children waited for so far.
# (`times` in this shell, not in a subshell, which would count only its own children.)
build_cpu() {
  local times_file
  times_file=$(mktemp)
  times >"$times_file"
  { read -r _ && read -r cpu_user cpu_sys; } <"$times_file"
  rm -f "$times_file"
}

if ((build_only)); then
  cmake --build "$BUILD"
  build_cpu
  echo "fuzz: build: $SECONDS s wall, CPU $cpu_user user + $cpu_sys sys"
  exit 0
fi

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

# fuzz_one NAME: runs one target; its verdict goes to $scratch/NAME.verdict, its log beside it.
fuzz_one() {
  local name=$1 exe="$BUILD/fuzz_$1" findings="$BUILD/findings/$1"
  mkdir -p "$scratch/$name" "$findings"
  # -rss_limit_mb and -timeout turn unbounded memory or time into findings; -max_len bounds
  # inputs (the snapshot and import targets need room for a few links).
  if "$exe" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -max_len=8192 \
      -print_final_stats=0 -artifact_prefix="$findings/" "$scratch/$name" "$HERE/corpus/$name" \
      >"$scratch/$name.log" 2>&1; then
    echo "fuzz: $name: $(grep -Eo 'Done [0-9]+ runs in [0-9]+ second' "$scratch/$name.log" | head -1)s, no finding" \
      >"$scratch/$name.verdict"
  else
    echo "fuzz: $name: FINDING (input kept in $findings)" >"$scratch/$name.verdict"
  fi
}

# Each target runs as soon as its program is linked ($jobs at a time), while the build goes on:
# the small targets' runs then fill the time in which the build compiles its largest files one at
# a time. The programs of an earlier build are removed first, so that none runs before it is
# rebuilt (lld writes a program under another name and renames it when it is complete).
for name in "${targets[@]}"; do rm -f "$BUILD/fuzz_$name"; done
cmake --build "$BUILD" &
build_job=$!
# finish_build: waits for the build; a failed build, or a target left without its program, fails
# the run (after the runs already started have ended).
finish_build() {
  wait "$build_job" || { echo "fuzz: the build failed" >&2; wait; exit 1; }
  build_job=
  echo "fuzz: build: $SECONDS s wall (CPU below, with the runs beside it)"
  for name in "${pending[@]}"; do
    [[ -x $BUILD/fuzz_$name ]] || { echo "fuzz: $name has a corpus but no target fuzz_$name.cpp" >&2; wait; exit 2; }
  done
}
pending=("${targets[@]}")
runs=()
while ((${#pending[@]})); do
  if [[ -n $build_job ]] && ! kill -0 "$build_job" 2>/dev/null; then finish_build; fi
  still_running=()
  for pid in "${runs[@]}"; do
    if kill -0 "$pid" 2>/dev/null; then still_running+=("$pid"); fi
  done
  runs=("${still_running[@]}")
  waiting=()
  for name in "${pending[@]}"; do
    if ((${#runs[@]} < jobs)) && [[ -x $BUILD/fuzz_$name ]]; then
      fuzz_one "$name" &
      runs+=("$!")
    else
      waiting+=("$name")
    fi
  done
  pending=("${waiting[@]}")
  ((${#pending[@]} == 0)) || sleep 0.5
done
[[ -z $build_job ]] || finish_build
wait
build_cpu
echo "fuzz: build and runs: $SECONDS s wall, CPU $cpu_user user + $cpu_sys sys"

failed=()
for name in "${targets[@]}"; do
  if [[ ! -s $scratch/$name.verdict ]] || grep -q FINDING "$scratch/$name.verdict"; then
    failed+=("$name")
    tail -n 60 "$scratch/$name.log" >&2
    cat "$scratch/$name.verdict" >&2 2>/dev/null || echo "fuzz: $name: no verdict" >&2
  else
    cat "$scratch/$name.verdict"
  fi
done

if ((${#failed[@]})); then
  echo "fuzz: findings in: ${failed[*]}" >&2
  exit 1
fi
