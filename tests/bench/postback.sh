#!/usr/bin/env bash
# The postback load test (issue 43): one Release refgate with a private PostgreSQL and Redis;
# redirects at a fixed rate measured alone (A) and while postbacks arrive at over 1,000 a second
# (B), alternating A B A B in one run:
#
#   tests/bench/postback.sh [--rounds N] [--seconds S] [--postback-connections C]
#                           [--postback-delay-ms D] [--redirect-rate R] [--bin REFGATE]
#                           [--no-deps-nice] [--postback-nice N]
#
# Defaults: 4 rounds of 10 s each; redirects from 8 keep-alive connections at about 1,000 req/s
# over 1,000 links; postbacks from 32 connections, each waiting 25 ms after every answer (at most
# 1,280 a second). REFGATE_POSTBACK_RATE is raised to 5,000 for the run (default 50 a second per
# partner). Prints the medians and the ratio of the redirect p99 with postbacks to without, writes
# tests/bench/results/postback.json, and exits 1 when fewer than 1,000 postbacks a second were
# recorded or the p99 ratio is above 1.1; 2 on a setup error. Everything is on 127.0.0.1, every
# wrk run bounded by `timeout`, and every server stops with the script. Without --bin it builds
# Release into build/bench (refgate only). --postback-nice runs the postbacks' wrk at that nice
# value, to tell what the redirect tail waits for (the load generator shares the cores).
set -euo pipefail

HERE="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)"
# shellcheck source-path=SCRIPTDIR source=../../deploy/local/lib.sh
source "$HERE/../../deploy/local/lib.sh"

case " $* " in *" -h "* | *" --help "*) awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0"; exit 0 ;; esac

lock_state postback-bench
ensure_packages wrk
if [[ " $* " != *" --bin "* ]]; then
  npm_ci_build_inputs
  BUILD="$ROOT/build/bench"
  log "building Release in build/bench (refgate)"
  cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DREFGATE_BUILD_TESTS=OFF \
    -DREFGATE_BUILD_BENCH=ON >/dev/null
  cmake --build "$BUILD" --target refgate
  set -- "$@" --bin "$BUILD/refgate"
fi

export REFGATE_TEST_PG_BINDIR="$PG_BINDIR"
if ((EUID == 0)); then export REFGATE_TEST_PG_USER="$PG_OS_USER"; fi
exec python3 "$HERE/postback.py" "$@"
