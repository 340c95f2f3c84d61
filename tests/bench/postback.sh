#!/usr/bin/env bash
# The postback load test (issue 43): one Release refgate with a private PostgreSQL and Redis;
# redirects at a fixed rate measured alone (A) and while postbacks arrive at over 1,000 a second
# (B), alternating A B A B in one run:
#
#   tests/bench/postback.sh [--rounds N] [--seconds S] [--postback-connections C]
#                           [--postback-delay-ms D] [--redirect-rate R] [--bin REFGATE]
#                           [--pin | --no-pin] [--deps-nice | --no-deps-nice]
#                           [--postback-nice N] [--background other|any]
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
# --background any lets refgate's pool and lane run on either CPU under --pin (the default,
# other, keeps them on CPU 1), to tell whether their CPU is what limits the postbacks.
#
# Topology. --pin (the default) splits the machine's two CPUs the way production splits machines:
#   CPU 0: refgate (its I/O thread, which answers redirects, and its background threads) and
#          the redirects' wrk (the readers);
#   CPU 1: PostgreSQL (the postmaster and so every backend), Redis, the postbacks' wrk (the
#          networks), refgate's blocking pool (the `rg-blocking` threads: they hash the secret,
#          read the query, and wait on libpq and the batcher) and its blocking lane (the `rg-lane`
#          thread: an I/O thread that takes over each connection at its first postback and serves
#          it from then on: its reads, parsing, the pool's wake-ups and the answers' sends), both
#          found by name in /proc/<pid>/task/*/comm and pinned by thread id.
# So the I/O thread on CPU 0 parses a postback connection's first header and hands the
# connection over (the postbacks' wrk keeps its connections: their later postbacks never reach
# it); the report gives its CPU per postback beside the lane's.
# In production PostgreSQL, Redis and the networks are other machines, and a refgate host has
# cores to spare beside its I/O threads, where the kernel runs the pool and the lane; on two
# shared cores they would otherwise all take turns on the I/O thread's CPU, and the tail measured
# would be the scheduler's, not refgate's. The pinning is done by this harness (taskset,
# sched_setaffinity), not by a refgate setting. Not modelled: the network between the machines
# (loopback here). Harsher than production, for the postbacks only: their pool and lane share
# CPU 1 with PostgreSQL and with their own load generator. With --pin PostgreSQL and Redis keep
# their priority (they are off the redirect CPU); without it they run at nice 19 unless
# --no-deps-nice. --no-pin is the topology of the runs in RESULTS.md from before --pin: nothing
# placed, everything on both CPUs.
set -euo pipefail

HERE="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)"
# shellcheck source-path=SCRIPTDIR source=../../deploy/local/lib.sh
source "$HERE/../../deploy/local/lib.sh"
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$HERE/lib.sh"

case " $* " in *" -h "* | *" --help "*) awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0"; exit 0 ;; esac

lock_state postback-bench
ensure_packages wrk
if [[ " $* " != *" --bin "* ]]; then
  bench_build_release refgate
  set -- "$@" --bin "$ROOT/build/bench/refgate"
fi

export REFGATE_TEST_PG_BINDIR="$PG_BINDIR"
if ((EUID == 0)); then export REFGATE_TEST_PG_USER="$PG_OS_USER"; fi
exec python3 "$HERE/postback.py" "$@"
