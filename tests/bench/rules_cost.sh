#!/usr/bin/env bash
# The targeting rules' cost: CPU per redirect with rules on a link against without, as a ratio
# (issue 19's target: a country lookup adds no more than 10 %), and the allocations per redirect
# through the rules (none).
#
#   tests/bench/rules_cost.sh [--rounds N]
#
# Builds refgate_micro_bench Release in build/bench (as tests/bench/run.sh does) and the country
# database from the pinned package (third_party, `npm ci` there), then runs the micro
# bench's "[rules-alloc]" check and "[rules-cost]" measurement: 10,000 links, each with the
# issue's four rules (DE/AT store, iOS app, French store, 70/30 split), readers on a US desktop
# in English from changing public addresses, so every redirect looks its country up in the real
# database and walks all four rules to the split; against the same links without rules. The
# country comes from the .mmdb itself and from its flattened ranges (what a process serves once
# its background walk is done); "[country-flat]" checks both answer alike for 1M random addresses
# and times a lookup in each. Best of
# ROUNDS (default 10) passes of 200,000 redirects, CPU time of the process. Single-threaded: run
# it on an otherwise idle machine and note the load it ran under.
set -euo pipefail

HERE="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)"
# shellcheck source-path=SCRIPTDIR source=../../deploy/local/lib.sh
source "$HERE/../../deploy/local/lib.sh"
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$HERE/lib.sh"

ROUNDS=10
while (($#)); do
  case $1 in
    --rounds) ROUNDS=${2:?--rounds needs a number}; shift ;;
    -h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0"; exit 0 ;;
    *) die "unknown argument: $1 (try --help)" ;;
  esac
  shift
done

BUILD="$ROOT/build/bench"
bench_build_release refgate_micro_bench refgate_scanner_data >/dev/null

log "load before the run: $(cut -d' ' -f1-3 /proc/loadavg)"
"$BUILD/refgate_micro_bench" "[rules-alloc]"
REFGATE_BENCH_COUNTRY_DB="$BUILD/country.mmdb" REFGATE_BENCH_ROUNDS="$ROUNDS" \
  "$BUILD/refgate_micro_bench" "[rules-cost]"
REFGATE_BENCH_COUNTRY_DB="$BUILD/country.mmdb" "$BUILD/refgate_micro_bench" "[country-flat]"
log "load after the run: $(cut -d' ' -f1-3 /proc/loadavg)"
