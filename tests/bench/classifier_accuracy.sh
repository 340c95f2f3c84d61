#!/usr/bin/env bash
# Precision and recall of the click classifier per corpus, before and after: this tree's
# classifier against a baseline commit's (default: main), and the npm package isbot (the pinned
# version in tests/data/agents/npm) beside them for comparison, on every corpus of
# tests/data/agents plus the pinned crawler-user-agents package's own examples.
#
#   tests/bench/classifier_accuracy.sh [--baseline REV] [--show]
#
# A crawler corpus (crawlers-*.txt) counts the agents kept out of `human` (recall); a browser
# corpus (every other .txt) the agents counted as anything but `human` (false positives). Agents of
# an app's own HTTP stack (Dalvik/, CFNetwork/, Cronet/: neither a browser nor a crawler, see
# docs/click-classes.md) are set aside in every corpus, for all three, and counted in a column of
# their own. Hold-out corpora (`holdout` in the file name) are only ever counted: --show prints
# the agents this tree gets wrong in every other corpus, never a hold-out's. Both classifiers are
# compiled with g++ -O1 from their own sources, like tests/bench/classifier_cost.sh. About a
# minute.
set -euo pipefail

HERE="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)"
# shellcheck source-path=SCRIPTDIR source=../../deploy/local/lib.sh
source "$HERE/../../deploy/local/lib.sh"

BASELINE=main
SHOW=()
while (($#)); do
  case $1 in
    --baseline) BASELINE=${2:?--baseline needs a commit}; shift ;;
    --show) SHOW=(--show) ;;
    -h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0"; exit 0 ;;
    *) die "unknown argument: $1 (try --help)" ;;
  esac
  shift
done

WORK=$(mktemp -d "${TMPDIR:-/tmp}/refgate-classifier-accuracy.XXXX")
trap 'rm -rf "$WORK"' EXIT
DATA=$ROOT/tests/data/agents
npm_ci_if_stale "$ROOT/third_party"
npm_ci_if_stale "$DATA/npm"
# The crawler patterns' text, converted once by this tree's refgate_data (the package is the same
# for both parts).
g++ -std=c++20 -O1 "$ROOT/src/tools/data_convert.cpp" -o "$WORK/refgate_data"
"$WORK/refgate_data" crawler-patterns "$ROOT/third_party/node_modules/crawler-user-agents" \
  "$WORK/crawler_patterns.txt"

# compile_part NAME SOURCE_ROOT, as in classifier_cost.sh.
compile_part() {
  local name=$1 src=$2 out=$WORK/$1
  mkdir -p "$out"
  cmake -DIN="$src/src/domain/bot_patterns.txt" -DOUT="$out/bot_patterns_data.cpp" \
    -DFUNCTION="$(classifier_namespace "$src")::embedded_bot_patterns" -DHEADER=refgate/domain/click_classifier.hpp \
    -P "$src/cmake/embed_text.cmake"
  cmake -DIN="$WORK/crawler_patterns.txt" -DOUT="$out/crawler_patterns_data.cpp" \
    -DFUNCTION="$(classifier_namespace "$src")::embedded_crawler_patterns" -DHEADER=refgate/domain/click_classifier.hpp \
    -P "$src/cmake/embed_text.cmake"
  local flags=(-std=c++20 -O1 -DNDEBUG -I"$src/include/domain" -Drefgate="refgate_$name")
  local file
  for file in "$src"/src/domain/{click_classifier,agent_regex,agent_rules}.cpp \
    "$out"/{bot_patterns,crawler_patterns}_data.cpp; do
    g++ "${flags[@]}" -c "$file" -o "$out/$(basename "$file" .cpp).o"
  done
  local app_stack=()
  [[ $name == current ]] && app_stack=(-DREFGATE_ACCURACY_APP_STACK=current_app_stack)
  g++ "${flags[@]}" -DREFGATE_ACCURACY_PART="${name}_human" "${app_stack[@]}" \
    -c "$HERE/classifier_accuracy.cpp" -o "$out/part.o"
}

commit=$(git -C "$ROOT" rev-parse --verify "$BASELINE^{commit}") || die "no commit '$BASELINE'"
mkdir -p "$WORK/baseline-src"
git -C "$ROOT" archive "$commit" cmake include/domain src/domain | tar -x -C "$WORK/baseline-src"
log "compiling the classifier of $BASELINE (${commit:0:12}) and of this tree"
compile_part baseline "$WORK/baseline-src"
compile_part current "$ROOT"
g++ -std=c++20 -O1 "$HERE/classifier_accuracy.cpp" "$WORK"/baseline/*.o "$WORK"/current/*.o \
  -o "$WORK/classifier_accuracy"

# The package's own examples, one a line, as a corpus file like the others.
python3 - "$ROOT/third_party/node_modules/crawler-user-agents/crawler-user-agents.json" \
  >"$WORK/crawlers-package-instances.txt" <<'PY'
import json, sys
for entry in json.load(open(sys.argv[1])):
    for agent in entry.get("instances", []):
        print(agent)
PY
files=("$DATA"/crawlers-*.txt "$WORK/crawlers-package-instances.txt" "$DATA"/browsers*.txt)
mkdir -p "$WORK/filtered"
"$WORK/classifier_accuracy" "${SHOW[@]}" --filtered "$WORK/filtered" "${files[@]}" \
  >"$WORK/refgate.txt"
ISBOT_MODULE="$DATA/npm/node_modules/isbot" node "$HERE/isbot_tally.mjs" "$WORK"/filtered/*.txt \
  >"$WORK/isbot.txt"

isbot_version=$(node -p "require('$DATA/npm/node_modules/isbot/package.json').version")
printf 'crawler corpora: crawlers kept out of human (recall); browser corpora: browsers counted as bot\n'
printf '(app HTTP stacks set aside, counted under "apps")\n'
printf '%-44s %7s %5s  %-20s %-20s %-20s\n' corpus agents apps "$BASELINE (${commit:0:8})" \
  "this tree" "isbot $isbot_version"
awk 'NR == FNR { isbot[$1] = $3; next }
  $1 == "wrong" { wrong[++n] = $0; next }
  {
    crawlers = ($1 ~ /^crawlers/)
    cell = ""
    split($4 " " $5 " " isbot[$1], w, " ")
    for (i = 1; i <= 3; ++i) {
      if (crawlers) {
        c = sprintf("%d (%.2f %%)", $2 - w[i], 100 * ($2 - w[i]) / $2)
      } else {
        c = sprintf("%d (%.2f %%)", w[i], 100 * w[i] / $2)
      }
      cell = cell sprintf(" %-20s", c)
    }
    printf "%-44s %7d %5d %s\n", $1, $2, $3, cell
  }
  END { for (i = 1; i <= n; ++i) print wrong[i] }' "$WORK/isbot.txt" "$WORK/refgate.txt"
