#!/usr/bin/env bash
# The scanner class's cost per click (ns), and the ASN database's conversion (time, size).
#
#   tests/bench/scanner_cost.sh [--clicks N] [--rounds N]
#
# Converts the pinned ASN ranges (third_party, `npm ci` there) into an .mmdb with the
# converter compiled -O2 (timed), then measures this tree's classifier with the per-thread agent
# cache, alone ("scanner check off") and followed by the scanner check a human click gets
# (deploy/scanner-networks.txt, the ASN check, the burst window: "on"; the ASN check once as a
# lookup in the database per click and once in the listed networks' ranges flattened out of it,
# as refgate serves once its background walk is done, timed), over N clicks (default
# 200,000) of browser agents (tests/data/agents/browsers.txt, Zipf popularity: every click is a
# human candidate, the check's worst case) from addresses spread over public IPv4 and IPv6, 5 %
# from a listed network. Everything compiled with g++ -O2 outside any build tree; best pass of
# ROUNDS (default 10). About a minute. Single-threaded: run it on an otherwise idle machine.
set -euo pipefail

HERE="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)"
# shellcheck source-path=SCRIPTDIR source=../../deploy/local/lib.sh
source "$HERE/../../deploy/local/lib.sh"

CLICKS=200000
ROUNDS=10
while (($#)); do
  case $1 in
    --clicks) CLICKS=${2:?--clicks needs a number}; shift ;;
    --rounds) ROUNDS=${2:?--rounds needs a number}; shift ;;
    -h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0"; exit 0 ;;
    *) die "unknown argument: $1 (try --help)" ;;
  esac
  shift
done

WORK=$(mktemp -d "${TMPDIR:-/tmp}/refgate-scanner-cost.XXXX")
trap 'rm -rf "$WORK"' EXIT
npm_ci_if_stale "$ROOT/third_party"
FLAGS=(-std=c++20 -O2 -DNDEBUG -I"$ROOT/include/domain" -I"$ROOT/include/tools" -I"$ROOT/include/runtime"
  -I"$ROOT/include/clicks" -I"$ROOT/include/redirect")

log "compiling the ASN converter"
g++ "${FLAGS[@]}" "$ROOT/src/tools/asn_mmdb.cpp" "$ROOT/src/tools/mmdb_writer.cpp" \
  "$ROOT/src/domain/ip_network.cpp" -o "$WORK/asn_mmdb"
package=$ROOT/third_party/node_modules/@ip-location-db/asn
start=$(date +%s.%N)
"$WORK/asn_mmdb" "$WORK/asn.mmdb" "bench" "$package/asn-ipv4.csv" "$package/asn-ipv6.csv" >/dev/null
convert_s=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
size=$(stat -c %s "$WORK/asn.mmdb")

log "compiling the classifier and the scanner check"
cmake -DIN="$ROOT/src/domain/bot_patterns.txt" -DOUT="$WORK/bot_patterns_data.cpp" \
  -DFUNCTION=refgate::domain::embedded_bot_patterns -DHEADER=refgate/domain/click_classifier.hpp \
  -P "$ROOT/cmake/embed_text.cmake"
g++ -std=c++20 -O1 "$ROOT/src/tools/data_convert.cpp" -o "$WORK/refgate_data"
"$WORK/refgate_data" crawler-patterns "$ROOT/third_party/node_modules/crawler-user-agents" \
  "$WORK/crawler_patterns.txt"
cmake -DIN="$WORK/crawler_patterns.txt" -DOUT="$WORK/crawler_patterns_data.cpp" \
  -DFUNCTION=refgate::domain::embedded_crawler_patterns -DHEADER=refgate/domain/click_classifier.hpp \
  -P "$ROOT/cmake/embed_text.cmake"
g++ "${FLAGS[@]}" "$HERE/scanner_cost.cpp" "$WORK/bot_patterns_data.cpp" \
  "$WORK/crawler_patterns_data.cpp" "$ROOT"/src/domain/{click_classifier,agent_regex,agent_rules}.cpp \
  "$ROOT"/src/domain/{address_ranges,ip_network,scanner_networks,burst_window}.cpp \
  "$ROOT/src/redirect/scanner_check.cpp" "$ROOT/src/redirect/mmdb_lookup.cpp" \
  "$ROOT/src/clicks/salts.cpp" \
  -lmaxminddb -o "$WORK/scanner_cost"

python3 - "$ROOT/tests/data/agents" "$CLICKS" >"$WORK/agents.txt" <<'PY'
import pathlib, random, sys
data, n = pathlib.Path(sys.argv[1]), int(sys.argv[2])
browsers = [l for l in (data / "browsers.txt").read_text().splitlines() if l and not l.startswith("#")]
rng = random.Random(20)
weights = [1 / (rank + 1) for rank in range(len(browsers))]
for _ in range(n):
    print(rng.choices(browsers, weights)[0])
PY

read -r off on ranges scanners scanners_ranges walk_ms range_count < <("$WORK/scanner_cost" "$WORK/agents.txt" "$WORK/asn.mmdb" \
  "$ROOT/deploy/scanner-networks.txt" "$ROUNDS")
awk -v off="$off" -v on="$on" -v ranges="$ranges" -v s="$scanners" -v sr="$scanners_ranges" \
  -v n="$CLICKS" -v t="$convert_s" -v b="$size" -v w="$walk_ms" -v rc="$range_count" 'BEGIN {
  printf "ASN database: converted in %.1f s, %.1f MB\n", t, b / 1e6
  printf "listed networks flattened: %d ranges in %d ms (one walk of the database)\n", rc, w
  printf "classification cost per click, best of rounds, %d browser clicks\n", n
  printf "%-50s %10.1f\n", "ns per click, scanner check off", off
  printf "%-50s %10.1f\n", "ns per click, check on, a database lookup a click", on
  printf "%-50s %10.1f\n", "ns per click, check on, flattened ranges", ranges
  printf "%-50s %10.1f\n", "ns the check adds per click, database lookup", on - off
  printf "%-50s %10.1f\n", "ns the check adds per click, flattened ranges", ranges - off
  printf "%-50s %10d / %d\n", "clicks counted as scanner (lookup / ranges)", s, sr
  if (s != sr) { print "MISMATCH: the two forms of the check disagree"; exit 1 }
}'
