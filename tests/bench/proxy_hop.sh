#!/usr/bin/env bash
# The cost of the TLS proxy hop: the same redirect under the same wrk load, served by refgate
# directly (plain HTTP) and through each shipped proxy of deploy/proxy/ (TLS terminated there,
# keep-alive to refgate), with the ratio of each to the direct figure.
#
#   tests/bench/proxy_hop.sh                 10 s per run (about 1.5 minutes)
#   tests/bench/proxy_hop.sh --seconds 2     shorter
#
# Options: --seconds N (per run, default 10), --connections N (wrk, default 32). Needs
# build/release/refgate (deploy/local/run.sh or `cmake --build build/release` builds it; or
# REFGATE_BIN). Runs everything on 127.0.0.1 with servers of its own under .state/bench-proxy
# (PostgreSQL 54389, Redis 63859; REFGATE_BENCH_PORT_SHIFT=N adds N), all stopped at the end.
# Order: direct, each proxy, direct again; the direct figure is the mean of its two runs. refgate
# runs one I/O thread; wrk one thread. Everything shares the machine's two cores, so the ratios
# include the proxy's CPU next to refgate's, as on a one-machine deployment.
set -euo pipefail

HERE="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)"
# shellcheck source-path=SCRIPTDIR source=../../deploy/local/lib.sh
source "$HERE/../../deploy/local/lib.sh"
# shellcheck source-path=SCRIPTDIR source=../deploy/proxy_lib.sh
source "$HERE/../deploy/proxy_lib.sh"

SECONDS_PER_RUN=10
CONNECTIONS=32
while (($#)); do
  case $1 in
    --seconds) SECONDS_PER_RUN=${2:?--seconds needs a number} && shift ;;
    --connections) CONNECTIONS=${2:?--connections needs a number} && shift ;;
    -h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0" && exit 0 ;;
    *) die "unknown argument: $1 (try --help)" ;;
  esac
  shift
done
BIN=${REFGATE_BIN:-$ROOT/build/release/refgate}
[[ -x $BIN ]] || die "no $BIN: build it first (cmake --build build/release) or set REFGATE_BIN"
fail() { die "$*"; }

SHIFT=${REFGATE_BENCH_PORT_SHIFT:-0}
STATE="$ROOT/.state/bench-proxy"
WORK="$STATE/work"
PROXY_PIDS=()
REFGATE_PID=""
declare -A PORT
lock_state bench-proxy
stop_everything() {
  local pid
  for pid in "${PROXY_PIDS[@]}" $REFGATE_PID; do
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  stop_all
}
trap stop_everything EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

ensure_packages wrk nginx haproxy openssl
wipe_state "$STATE"
mkdir -p "$WORK"
chmod 755 "$STATE" "$WORK"
start_postgres "$STATE" $((54389 + SHIFT)) off
start_redis "$STATE" $((63859 + SHIFT))
ensure_database $((54389 + SHIFT)) refgate
export REFGATE_DATABASE_URL="postgresql://refgate@127.0.0.1:$((54389 + SHIFT))/refgate"
export REFGATE_REDIS_URL="redis://127.0.0.1:$((63859 + SHIFT))/0"
cat >"$WORK/links.json" <<'EOF'
{"partners": [{"slug": "example-hosting", "name": "Example Hosting", "ref_param": "ref",
               "ref_code": "picks42", "allowed_domains": ["www.example.com"], "extra_params": {}}],
 "links": [{"slug": "bench", "partner": "example-hosting",
            "destination": "https://www.example.com/pricing?plan=pro#teams"}]}
EOF
"$BIN" migrate >/dev/null 2>>"$WORK/refgate.log"
"$BIN" import "$WORK/links.json" >/dev/null 2>>"$WORK/refgate.log"

RG_PORT=$(free_port)
REFGATE_LISTEN=127.0.0.1:$RG_PORT REFGATE_ADMIN_LISTEN=127.0.0.1:$(free_port) \
  REFGATE_THREADS=1 REFGATE_DRAIN_MS=0 REFGATE_TRUSTED_PROXIES=127.0.0.1/32 \
  REFGATE_STATE_DIR="$WORK" REFGATE_LOG_LEVEL=warn "$BIN" serve 2>>"$WORK/refgate.log" &
REFGATE_PID=$!
wait_port "$RG_PORT" refgate

make_certificate
proxies=(nginx haproxy)
command -v caddy >/dev/null && proxies+=(caddy)
for p in "${proxies[@]}"; do
  start_proxy "$p"
done

# run NAME URL [wrk args...] -> "req/s p99_ms"
run() {
  local name=$1 url=$2 out rps p99
  shift 2
  out=$(wrk -t1 -c"$CONNECTIONS" -d"${SECONDS_PER_RUN}s" --latency "$@" "$url")
  rps=$(awk '/^Requests\/sec:/ {print $2}' <<<"$out")
  p99=$(awk '$1 == "99%" {v = $2; if (v ~ /us$/) {sub(/us$/, "", v); v /= 1000}
                          else if (v ~ /ms$/) sub(/ms$/, "", v);
                          else if (v ~ /s$/) {sub(/s$/, "", v); v *= 1000} print v}' <<<"$out")
  if grep -q 'Non-2xx or 3xx\|Socket errors' <<<"$out" || [[ ${rps%%.*} == 0 ]]; then
    die "$name: wrk saw errors: $out"
  fi
  log "$name: $rps req/s, p99 $p99 ms"
  echo "$rps $p99"
}

declare -A RPS P99
read -r a_rps a_p99 < <(run direct "http://127.0.0.1:$RG_PORT/go/bench")
for p in "${proxies[@]}"; do
  read -r "RPS[$p]" "P99[$p]" < <(run "$p" "https://127.0.0.1:${PORT[$p]}/go/bench" \
    -H "Host: picks.example.com:${PORT[$p]}")
done
read -r b_rps b_p99 < <(run direct "http://127.0.0.1:$RG_PORT/go/bench")
direct_rps=$(awk -v a="$a_rps" -v b="$b_rps" 'BEGIN {printf "%.0f", (a + b) / 2}')
direct_p99=$(awk -v a="$a_p99" -v b="$b_p99" 'BEGIN {printf "%.2f", (a + b) / 2}')

printf '\nproxy hop: %s s per run, wrk -t1 -c%s, refgate REFGATE_THREADS=1, keep-alive everywhere\n' \
  "$SECONDS_PER_RUN" "$CONNECTIONS"
printf '%-28s %10s %9s %12s\n' path req/s p99_ms "ratio req/s"
printf '%-28s %10s %9s %12s\n' "direct (http)" "$direct_rps" "$direct_p99" 1.00
for p in "${proxies[@]}"; do
  printf '%-28s %10.0f %9.2f %12.2f\n' "through $p (https)" "${RPS[$p]}" "${P99[$p]}" \
    "$(awk -v x="${RPS[$p]}" -v d="$direct_rps" 'BEGIN {print x / d}')"
done
