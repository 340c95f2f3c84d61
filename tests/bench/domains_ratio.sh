#!/usr/bin/env bash
# The redirect with two branded domains against one (issue 46), as a ratio of refgate's CPU per
# redirect: the same binary and links, one server whose only domain is the default and one with
# a second domain holding the same slugs, under the same wrk load, rounds alternating.
#
#   tests/bench/domains_ratio.sh [--bin PATH] [--rounds N] [--seconds S] [--links N]
#
# Builds refgate Release in build/bench (as tests/bench/run.sh does) unless --bin names a binary.
# Private PostgreSQL (127.0.0.1:54393) and Redis (63863), two refgate servers (one I/O thread
# each, counting on) on 18411/18412 and 18413/18414, under .state/domains-bench, all stopped at
# the end however the script ends; REFGATE_BENCH_PORT_SHIFT=N adds N to each port. Database
# `one`: domain go.example.com (the default) with N links (default 5,000). Database `two`: that
# and de.example.com, the same N slugs on each (other destinations). wrk (one thread,
# 64 keep-alive connections, a browser User-Agent) spreads requests over the slugs; against `one`
# every request names go.example.com in `Host`, against `two` requests alternate between the two
# hosts. Rounds of S seconds (default 5) alternate one, two, one, two... (ROUNDS of each,
# default 5); with one CPU free the server is pinned to CPU 0 and wrk to CPU 1 (taskset).
# Prints each round's CPU per redirect (utime + stime of the server over the requests wrk saw),
# the medians and their ratio (goal: two/one within 1.05), and writes
# tests/bench/results/domains-ratio.json (git-ignored). Everything is bounded in count and time.
set -euo pipefail

HERE="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)"
# shellcheck source-path=SCRIPTDIR source=../../deploy/local/lib.sh
source "$HERE/../../deploy/local/lib.sh"
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$HERE/lib.sh"

BIN=""
ROUNDS=5
SECS=5
LINKS=5000
while (($#)); do
  case $1 in
    --bin) BIN=${2:?--bin needs a path}; shift ;;
    --rounds) ROUNDS=${2:?--rounds needs a number}; shift ;;
    --seconds) SECS=${2:?--seconds needs a number}; shift ;;
    --links) LINKS=${2:?--links needs a number}; shift ;;
    -h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0"; exit 0 ;;
    *) die "unknown argument: $1 (try --help)" ;;
  esac
  shift
done
((ROUNDS >= 1 && ROUNDS <= 20 && SECS >= 1 && SECS <= 60 && LINKS >= 1 && LINKS <= 20000)) ||
  die "--rounds 1-20, --seconds 1-60, --links 1-20000"

SHIFT=${REFGATE_BENCH_PORT_SHIFT:-0}
PG_PORT=$((54393 + SHIFT))
REDIS_PORT=$((63863 + SHIFT))
ONE_PORT=$((18411 + SHIFT))
TWO_PORT=$((18413 + SHIFT))
STATE="$ROOT/.state/domains-bench"
RESULTS="$ROOT/tests/bench/results"
mkdir -p "$STATE" "$RESULTS"

if [[ -z $BIN ]]; then
  bench_build_release refgate
  BIN="$ROOT/build/bench/refgate"
fi
[[ -x $BIN ]] || die "no refgate binary at $BIN"
command -v wrk >/dev/null || die "wrk is missing (apt-get install wrk)"

cleanup() {
  bench_stop_servers
  stop_all
}
trap cleanup EXIT
trap 'exit 143' TERM

wipe_state "$STATE/servers"
start_postgres "$STATE/servers" "$PG_PORT" on
start_redis "$STATE/servers" "$REDIS_PORT"
export REFGATE_LOG_LEVEL=warn REFGATE_LINKCHECK_INTERVAL=0

# documents DIR N: one.json (go.example.com only) and two.json (and de.example.com, the same
# slugs there).
python3 - "$STATE" "$LINKS" <<'PY'
import json, sys
state, n = sys.argv[1], int(sys.argv[2])
partner = {"slug": "shop", "name": "Shop", "ref_param": "ref", "ref_code": "bench",
           "allowed_domains": ["example.com"]}
go = {"host": "go.example.com", "default": True}
de = {"host": "de.example.com", "default": False}
links = [{"slug": f"l{i}", "partner": "shop", "destination": f"https://example.com/{i}"}
         for i in range(n)]
on_de = [{"slug": f"l{i}", "partner": "shop", "destination": f"https://example.com/de/{i}",
          "domain": "de.example.com"} for i in range(n)]
json.dump({"domains": [go], "partners": [partner], "links": links}, open(f"{state}/one.json", "w"))
json.dump({"domains": [go, de], "partners": [partner], "links": links + on_de},
          open(f"{state}/two.json", "w"))
PY

# serve NAME PORT REDIS_DB: database NAME migrated and imported, refgate serving it on PORT (admin
# PORT+1) and counting into Redis database REDIS_DB (each server flushes only its own clicks).
serve() {
  local name=$1 port=$2 url
  export REFGATE_REDIS_URL="redis://127.0.0.1:$REDIS_PORT/$3"
  ensure_database "$PG_PORT" "$name"
  url="postgresql://refgate@127.0.0.1:$PG_PORT/$name"
  REFGATE_DATABASE_URL=$url timeout 120 "$BIN" migrate >/dev/null
  REFGATE_DATABASE_URL=$url timeout 300 "$BIN" import "$STATE/$name.json" >/dev/null
  REFGATE_DATABASE_URL=$url bench_serve "$name" "$BIN" "$port" "$((port + 1))" "$STATE"
}
serve one "$ONE_PORT" 1
ONE_PID=${BENCH_PIDS[-1]}
serve two "$TWO_PORT" 2
TWO_PID=${BENCH_PIDS[-1]}

# wrk scripts: every request on go.example.com, or alternating go and de.
for hosts in one two; do
  if [[ $hosts == one ]]; then list='"go.example.com"'; else list='"go.example.com", "de.example.com"'; fi
  # wrk.format() takes the headers given in place of wrk.headers: each host's whole set, made once.
  cat >"$STATE/$hosts.lua" <<LUA
local agent = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0 Safari/537.36"
local headers = {}
for _, host in ipairs({$list}) do
  headers[#headers + 1] = {Host = host, ["User-Agent"] = agent, Accept = "text/html"}
end
local n = 0
request = function()
  n = n + 1
  return wrk.format("GET", "/go/l" .. math.random(0, $((LINKS - 1))), headers[n % #headers + 1])
end
LUA
done
# Both servers answer both ways before any round (a 302 on each host).
for check in "$ONE_PORT go.example.com" "$TWO_PORT go.example.com" "$TWO_PORT de.example.com"; do
  read -r port host <<<"$check"
  code=$(curl -s -o /dev/null -w '%{http_code}' -H "Host: $host" "http://127.0.0.1:$port/go/l0")
  [[ $code == 302 ]] || die "127.0.0.1:$port with Host $host answered $code, not 302"
done

pin_wrk=()
if (($(nproc) >= 2)); then
  pin_wrk=(taskset -c 1)
  taskset -pc 0 "$ONE_PID" >/dev/null
  taskset -pc 0 "$TWO_PID" >/dev/null
fi

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
log "load before the rounds: $LOAD_BEFORE"
: >"$STATE/rounds.txt"
for ((r = 1; r <= ROUNDS; r++)); do
  for name in one two; do
    if [[ $name == one ]]; then pid=$ONE_PID port=$ONE_PORT; else pid=$TWO_PID port=$TWO_PORT; fi
    # A second's warm-up, then the measured round.
    timeout 20 "${pin_wrk[@]}" wrk -t1 -c64 -d1s -s "$STATE/$name.lua" "http://127.0.0.1:$port" >/dev/null
    before=$(cpu_ticks "$pid")
    out=$(timeout $((SECS + 20)) "${pin_wrk[@]}" wrk -t1 -c64 -d"${SECS}s" --timeout 5s \
      -s "$STATE/$name.lua" "http://127.0.0.1:$port")
    after=$(cpu_ticks "$pid")
    requests=$(grep -Eo '^ *[0-9]+ requests in' <<<"$out" | grep -Eo '[0-9]+' | head -1)
    non2xx=$(grep -Eo 'Non-2xx or 3xx responses: [0-9]+' <<<"$out" | grep -Eo '[0-9]+$' || echo 0)
    [[ -n $requests && $requests -gt 0 ]] || die "no result from wrk against $name: $out"
    [[ $non2xx == 0 ]] || die "$name answered $non2xx responses that were not 3xx"
    echo "$r $name $requests $((after - before))" >>"$STATE/rounds.txt"
    log "round $r $name: $requests requests, $((after - before)) ticks"
  done
done
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)
log "load after the rounds: $LOAD_AFTER"

python3 - "$STATE/rounds.txt" "$RESULTS/domains-ratio.json" "$SECS" "$LINKS" "$LOAD_BEFORE" "$LOAD_AFTER" <<'PY'
import json, os, statistics, sys
rounds_file, out, secs, links, load_before, load_after = sys.argv[1:]
tick = os.sysconf("SC_CLK_TCK")
rows = [line.split() for line in open(rounds_file) if line.strip()]
per = {"one": [], "two": []}
reqs = {"one": [], "two": []}
print("round  server                              req/s    CPU/redirect")
for r, name, requests, ticks in rows:
    cpu = int(ticks) / tick / int(requests) * 1e6
    per[name].append(cpu)
    reqs[name].append(int(requests) / int(secs))
    label = "one domain" if name == "one" else "two domains, Host alternating"
    print(f"{r:>5}  {label:<32} {int(requests) / int(secs):>9,.0f}    {cpu:6.2f} us")
m1, m2 = statistics.median(per["one"]), statistics.median(per["two"])
print(f"median one domain: {m1:.2f} us/redirect ({statistics.median(reqs['one']):,.0f} req/s)")
print(f"median two domains: {m2:.2f} us/redirect ({statistics.median(reqs['two']):,.0f} req/s)")
print(f"ratio two/one (CPU per redirect): {m2 / m1:.3f}  (goal: within 1.05)")
paired = [b / a for a, b in zip(per["one"], per["two"])]
print("paired ratios, round by round: " + " ".join(f"{x:.3f}" for x in paired))
json.dump({"links_per_domain": int(links), "seconds": int(secs), "load_before": load_before,
           "load_after": load_after, "rounds": rows, "median_us": {"one": m1, "two": m2},
           "ratio": m2 / m1, "paired": paired}, open(out, "w"), indent=2)
PY
