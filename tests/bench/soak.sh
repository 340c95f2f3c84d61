#!/usr/bin/env bash
# The soak (issue 21): one Release refgate, a private PostgreSQL and Redis, a fixed request rate
# for N minutes over rotating links, the referral code changed every few seconds and /metrics
# scraped every second:
#
#   tests/bench/soak.sh --minutes N [--rate R] [--links L] [--threads T] [--code-every S]
#
# Defaults: 30 minutes, 1,000 req/s over 1,000 links on 8 keep-alive connections, a code change
# every 3 s. Samples every second (RSS and open fds of refgate, Redis used_memory, PostgreSQL row
# counts) into tests/bench/results/soak.csv, plots them to soak.png (gnuplot) and appends the
# run's summary to soak.md. Exit 1 when RSS or fds grow after the warm-up (the tolerances are in
# tests/bench/soak.py), a redirect fails or PostgreSQL's total differs from the clicks sent;
# 2 on a setup error. Every server is on 127.0.0.1 on a free port and stops with the script.
set -euo pipefail

HERE="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)"
# shellcheck source-path=SCRIPTDIR source=../../deploy/local/lib.sh
source "$HERE/../../deploy/local/lib.sh"
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$HERE/lib.sh"

[[ " $* " == *" --minutes "* ]] || set -- --minutes 30 "$@"
case " $* " in *" -h "* | *" --help "*) awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0"; exit 0 ;; esac

lock_state soak
ensure_packages gnuplot-nox
BUILD="$ROOT/build/bench"
bench_build_release refgate

export REFGATE_TEST_PG_BINDIR="$PG_BINDIR"
if ((EUID == 0)); then export REFGATE_TEST_PG_USER="$PG_OS_USER"; fi
exec python3 "$HERE/soak.py" "$@" "$BUILD/refgate"
