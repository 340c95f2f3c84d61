#!/usr/bin/env bash
# Classification cost per click (ns), before and after: this tree's click classifier against a
# baseline commit's (default: main), each with the per-thread agent cache off and on, on the same
# realistic click mix. Prints a table with the ratios of this tree to the baseline.
#
#   tests/bench/classifier_cost.sh [--baseline REV] [--clicks N] [--rounds N]
#
# The mix: N clicks (default 200,000), 90 % from the browsers of tests/data/agents/browsers.txt
# with Zipf-distributed popularity (a few browser versions make most clicks), 10 % from the crawler
# corpora there, in a fixed pseudo-random order. Both classifiers are compiled with g++ -O2 from
# their own sources (the baseline's from `git archive`) into one program, outside any build tree,
# which alternates their passes (so both see the same load) and keeps each one's best pass;
# needs `npm ci` in third_party (the crawler patterns). About 30 s. Single-threaded.
set -euo pipefail

HERE="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)"
# shellcheck source-path=SCRIPTDIR source=../../deploy/local/lib.sh
source "$HERE/../../deploy/local/lib.sh"

BASELINE=main
CLICKS=200000
ROUNDS=10
while (($#)); do
  case $1 in
    --baseline) BASELINE=${2:?--baseline needs a commit}; shift ;;
    --clicks) CLICKS=${2:?--clicks needs a number}; shift ;;
    --rounds) ROUNDS=${2:?--rounds needs a number}; shift ;;
    -h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0"; exit 0 ;;
    *) die "unknown argument: $1 (try --help)" ;;
  esac
  shift
done

WORK=$(mktemp -d "${TMPDIR:-/tmp}/refgate-classifier-cost.XXXX")
trap 'rm -rf "$WORK"' EXIT
npm_ci_if_stale "$ROOT/third_party"
# The crawler patterns' text, converted once by this tree's refgate_data (the package is the same
# for both parts).
g++ -std=c++20 -O1 "$ROOT/src/tools/data_convert.cpp" -o "$WORK/refgate_data"
"$WORK/refgate_data" crawler-patterns "$ROOT/third_party/node_modules/crawler-user-agents" \
  "$WORK/crawler_patterns.txt"

# compile_part NAME SOURCE_ROOT: SOURCE_ROOT's classifier sources and a cost pass over them into
# objects whose namespace `refgate` is renamed to refgate_NAME, so that both parts link together.
compile_part() {
  local name=$1 src=$2 out=$WORK/$1
  mkdir -p "$out"
  cmake -DIN="$src/src/domain/bot_patterns.txt" -DOUT="$out/bot_patterns_data.cpp" \
    -DFUNCTION="$(classifier_namespace "$src")::embedded_bot_patterns" -DHEADER=refgate/domain/click_classifier.hpp \
    -P "$src/cmake/embed_text.cmake"
  local sources=("$src/src/domain/click_classifier.cpp" "$out/bot_patterns_data.cpp")
  if [[ -e $src/src/domain/agent_regex.cpp ]]; then
    cmake -DIN="$WORK/crawler_patterns.txt" -DOUT="$out/crawler_patterns_data.cpp" \
      -DFUNCTION="$(classifier_namespace "$src")::embedded_crawler_patterns" -DHEADER=refgate/domain/click_classifier.hpp \
      -P "$src/cmake/embed_text.cmake"
    sources+=("$src/src/domain/agent_regex.cpp" "$src/src/domain/agent_rules.cpp"
      "$out/crawler_patterns_data.cpp")
  fi
  local flags=(-std=c++20 -O2 -DNDEBUG -I"$src/include/domain" -Drefgate="refgate_$name")
  local file
  for file in "${sources[@]}"; do
    g++ "${flags[@]}" -c "$file" -o "$out/$(basename "$file" .cpp).o"
  done
  g++ "${flags[@]}" -DREFGATE_COST_PASS="${name}_pass" -c "$HERE/classifier_cost.cpp" \
    -o "$out/pass.o"
}

commit=$(git -C "$ROOT" rev-parse --verify "$BASELINE^{commit}") || die "no commit '$BASELINE'"
mkdir -p "$WORK/baseline-src"
git -C "$ROOT" archive "$commit" cmake include/domain src/domain | tar -x -C "$WORK/baseline-src"
log "compiling the classifier of $BASELINE (${commit:0:12}) and of this tree"
compile_part baseline "$WORK/baseline-src"
compile_part current "$ROOT"
g++ -std=c++20 -O2 "$HERE/classifier_cost.cpp" "$WORK"/baseline/*.o "$WORK"/current/*.o \
  -o "$WORK/classifier_cost"

python3 - "$ROOT/tests/data/agents" "$CLICKS" >"$WORK/clicks.txt" <<'PY'
import pathlib, random, sys
data, n = pathlib.Path(sys.argv[1]), int(sys.argv[2])
def agents(name):
    return [l for l in (data / name).read_text().splitlines() if l and not l.startswith("#")]
browsers = agents("browsers.txt")
bots = agents("crawlers-isbot-fixtures.txt") + agents("crawlers-documented.txt")
rng = random.Random(20)
weights = [1 / (rank + 1) for rank in range(len(browsers))]
for _ in range(n):
    print(rng.choice(bots) if rng.random() < 0.1 else rng.choices(browsers, weights)[0])
PY

read -r base_off base_on base_bots cur_off cur_on cur_bots < <(
  "$WORK/classifier_cost" "$WORK/clicks.txt" "$ROUNDS")
awk -v bo="$base_off" -v bn="$base_on" -v co="$cur_off" -v cn="$cur_on" -v bb="$base_bots" \
  -v cb="$cur_bots" -v n="$CLICKS" -v rev="$BASELINE" 'BEGIN {
  printf "classification cost per click, best of rounds, %d clicks (90 %% browsers, 10 %% crawlers)\n", n
  printf "%-34s %12s %12s %8s\n", "", rev, "this tree", "ratio"
  printf "%-34s %12.1f %12.1f %8.2f\n", "ns per click, cache off", bo, co, co / bo
  printf "%-34s %12.1f %12.1f %8.2f\n", "ns per click, per-thread cache on", bn, cn, cn / bn
  printf "%-34s %12d %12d\n", "clicks counted as bot", bb, cb
}'
