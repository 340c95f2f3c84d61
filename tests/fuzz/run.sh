#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz with clang-14 (build/fuzz) and runs each over its
# seed corpus in tests/fuzz/corpus/<target> for a bounded time. New inputs go to a temporary
# directory, so the corpus in the repository never grows by itself; a finding (crash, leak,
# sanitizer report, broken invariant, timeout, out of memory) fails the run and is kept under
# build/fuzz/findings/<target>/ to be fixed and added to the corpus as a regression input.
#
#   tests/fuzz/run.sh                          # 8 s per target (what deploy/local/test.sh runs)
#   tests/fuzz/run.sh --seconds-per-target 60
#   tests/fuzz/run.sh --minutes 240            # a night: the minutes shared by the targets
#   tests/fuzz/run.sh --only location          # one target (any option above still applies)
set -euo pipefail

HERE="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)"
ROOT="$(cd -- "$HERE/../.." && pwd -P)"
BUILD="$ROOT/build/fuzz"

seconds=8
only=""
while (($#)); do
  case $1 in
    --seconds-per-target) seconds=$2; shift 2 ;;
    --minutes) minutes=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    *) echo "usage: $0 [--seconds-per-target N | --minutes N] [--only TARGET]" >&2; exit 2 ;;
  esac
done

targets=()
for dir in "$HERE"/corpus/*/; do
  name=$(basename "$dir")
  [[ -z $only || $only == "$name" ]] && targets+=("$name")
done
((${#targets[@]})) || { echo "fuzz: no target named '$only'" >&2; exit 2; }
if [[ -n ${minutes:-} ]]; then
  seconds=$((minutes * 60 / ${#targets[@]}))
fi

cmake -S "$HERE" -B "$BUILD" -G Ninja -DCMAKE_CXX_COMPILER=clang++-14 >/dev/null
cmake --build "$BUILD"

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

failed=()
for name in "${targets[@]}"; do
  exe="$BUILD/fuzz_$name"
  [[ -x $exe ]] || { echo "fuzz: $name has a corpus but no target fuzz_$name.cpp" >&2; exit 2; }
  findings="$BUILD/findings/$name"
  mkdir -p "$scratch/$name" "$findings"
  # -rss_limit_mb and -timeout turn unbounded memory or time into findings; -max_len bounds
  # inputs (the snapshot and import targets need room for a few links).
  if "$exe" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -max_len=8192 \
      -print_final_stats=0 -artifact_prefix="$findings/" "$scratch/$name" "$HERE/corpus/$name" \
      >"$scratch/$name.log" 2>&1; then
    echo "fuzz: $name: $(grep -Eo 'Done [0-9]+ runs in [0-9]+ second' "$scratch/$name.log" | head -1)s, no finding"
  else
    failed+=("$name")
    tail -n 60 "$scratch/$name.log" >&2
    echo "fuzz: $name: FINDING (input kept in $findings)" >&2
  fi
done

if ((${#failed[@]})); then
  echo "fuzz: findings in: ${failed[*]}" >&2
  exit 1
fi
