#!/usr/bin/env bash
# The shipped TLS proxy configurations (deploy/proxy/), run for real in front of a refgate of the
# test's own: nginx and HAProxy (Debian packages), and Caddy when it is installed, each with a
# self-signed certificate made here and only its listen address, certificate paths and backend
# port changed. refgate runs with REFGATE_TRUSTED_PROXIES=127.0.0.1/32 as the files say. Through
# each proxy, readers connect from their own loopback addresses (127.0.0.3, 127.0.0.4):
#   - the 302 and its headers are refgate's own (Location, Cache-Control, X-Robots-Tag,
#     Referrer-Policy), and every click is counted exactly once;
#   - the proxy keeps its connection to refgate open across readers' requests (keep-alive);
#   - two readers are two uniques, and a reader's own X-Forwarded-For changes nothing;
# and a reader that reaches refgate directly (127.0.0.5, not a trusted proxy) with forged
# X-Forwarded-For values is one unique.
#
# Needs REFGATE_BIN and REFGATE_TEST_DATABASE_URL (deploy/local/test.sh exports them); a database
# and a redis-server of its own. Usage: proxy_test.sh
set -euo pipefail

HERE="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)"
# shellcheck source-path=SCRIPTDIR source=../../deploy/local/lib.sh
source "$HERE/../../deploy/local/lib.sh"
# shellcheck source-path=SCRIPTDIR source=proxy_lib.sh
source "$HERE/proxy_lib.sh"

: "${REFGATE_BIN:?REFGATE_BIN must name the refgate binary}"
: "${REFGATE_TEST_DATABASE_URL:?REFGATE_TEST_DATABASE_URL must name the test PostgreSQL}"
PSQL="${REFGATE_TEST_PG_BINDIR:-$PG_BINDIR}/psql"
UA='Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36'

WORK=$(mktemp -d "${TMPDIR:-/tmp}/refgate-proxy.XXXXXX")
chmod 755 "$WORK"
DB="refgate_proxy_$$"
PROXY_PIDS=()
REDIS_PID=""
REFGATE_PID=""
declare -A PORT
cleanup() {
  local rc=$? pid
  if ((rc != 0)); then
    for f in "$WORK"/*.log; do
      [[ -s $f ]] && printf -- '--- %s (last 15 lines)\n' "${f##*/}" >&2 && tail -n 15 "$f" >&2
    done
  fi
  for pid in "${PROXY_PIDS[@]}" $REFGATE_PID $REDIS_PID; do
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  "$PSQL" -X -q "$REFGATE_TEST_DATABASE_URL" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" \
    >/dev/null 2>&1 || true
  rm -rf -- "$WORK"
  exit "$rc"
}
trap cleanup EXIT
fail() {
  printf 'FAIL: %s\n' "$*" >&2
  exit 1
}
sql() { "$PSQL" -X -qtA -v ON_ERROR_STOP=1 "$REFGATE_DATABASE_URL" -c "$1"; }

for tool in nginx haproxy openssl perl; do
  command -v "$tool" >/dev/null || fail "$tool is not installed (deploy/local/test.sh installs it)"
done
proxies=(nginx haproxy)
if command -v caddy >/dev/null; then proxies+=(caddy); else log "caddy not installed: Caddyfile untested"; fi

# ------------------------------------------------------------------ refgate, its data and Redis
"$PSQL" -X -q -v ON_ERROR_STOP=1 "$REFGATE_TEST_DATABASE_URL" -c "CREATE DATABASE $DB"
export REFGATE_DATABASE_URL="${REFGATE_TEST_DATABASE_URL%/*}/$DB"
REDIS_PORT=$(free_port)
redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --dir "$WORK" --save '' \
  --appendonly yes --maxmemory-policy noeviction >"$WORK/redis.log" 2>&1 &
REDIS_PID=$!
wait_port "$REDIS_PORT" redis-server
export REFGATE_REDIS_URL="redis://127.0.0.1:$REDIS_PORT/0"
cat >"$WORK/links.json" <<'EOF'
{"partners": [{"slug": "example-hosting", "name": "Example Hosting", "ref_param": "ref",
               "ref_code": "picks42", "allowed_domains": ["www.example.com"], "extra_params": {}}],
 "links": [
  {"slug": "via-nginx", "partner": "example-hosting", "destination": "https://www.example.com/a"},
  {"slug": "via-haproxy", "partner": "example-hosting", "destination": "https://www.example.com/b"},
  {"slug": "via-caddy", "partner": "example-hosting", "destination": "https://www.example.com/c"},
  {"slug": "direct", "partner": "example-hosting", "destination": "https://www.example.com/d"}]}
EOF
"$REFGATE_BIN" migrate >/dev/null 2>>"$WORK/refgate.log"
"$REFGATE_BIN" import "$WORK/links.json" >/dev/null 2>>"$WORK/refgate.log"

RG_PORT=$(free_port)
RG_ADMIN=$(free_port)
REFGATE_LISTEN=127.0.0.1:$RG_PORT REFGATE_ADMIN_LISTEN=127.0.0.1:$RG_ADMIN REFGATE_DRAIN_MS=0 \
  REFGATE_TRUSTED_PROXIES=127.0.0.1/32 REFGATE_STATE_DIR="$WORK" \
  "$REFGATE_BIN" serve 2>>"$WORK/refgate.log" &
REFGATE_PID=$!
wait_port "$RG_PORT" refgate
for ((i = 0; i < 100; i++)); do
  [[ $(redis-cli -p "$REDIS_PORT" exists "refgate:salt:$(date -u +%F)") == 1 ]] && break
  sleep 0.1
done
sleep 0.6 # the sender hands the day's salt to the I/O threads within two windows

# ------------------------------------------------------------------ the proxies
make_certificate
for p in "${proxies[@]}"; do
  start_proxy "$p"
done

# through PROXY FROM [curl args...]: a request through the proxy from the loopback address FROM.
through() {
  local proxy=$1 from=$2
  shift 2
  curl -sS -k --interface "$from" -A "$UA" -o /dev/null -D - \
    --resolve "picks.example.com:${PORT[$proxy]}:127.0.0.1" "$@" | tr -d '\r'
}
# Local ports of the proxy's established connections to refgate.
backend_ports() {
  ss -Htnp state established "( dport = :$RG_PORT )" | grep -F "\"$1\"" | awk '{print $3}' |
    sed 's/.*://' | sort -u
}
header() { sed -n "s/^$1: *//Ip" <<<"$2"; }

# refgate's own headers, from a HEAD (a bot click: it changes no human count or unique).
direct=$(curl -sS -I -A "$UA" "http://127.0.0.1:$RG_PORT/go/via-nginx" | tr -d '\r')
[[ $(header location "$direct") == "https://www.example.com/a?ref=picks42" ]] ||
  fail "refgate itself answers: $direct"
for p in "${proxies[@]}"; do
  url="https://picks.example.com:${PORT[$p]}/go/via-$p"
  resp=$(through "$p" 127.0.0.3 "$url")
  [[ $resp =~ ^HTTP/[0-9.]+\ 302 ]] || fail "$p: not a 302: $resp"
  for h in cache-control x-robots-tag referrer-policy; do
    [[ -n $(header "$h" "$resp") && $(header "$h" "$resp") == $(header "$h" "$direct") ]] ||
      fail "$p: $h is '$(header "$h" "$resp")', refgate says '$(header "$h" "$direct")'"
  done
  case $p in
    nginx) want=a ;;
    haproxy) want=b ;;
    caddy) want=c ;;
  esac
  [[ $(header location "$resp") == "https://www.example.com/$want?ref=picks42" ]] ||
    fail "$p: Location is '$(header location "$resp")'"
  [[ -z $(header set-cookie "$resp") ]] || fail "$p: a cookie was set"

  # Readers 127.0.0.3 and 127.0.0.4, one connection each per request; the second also forges
  # X-Forwarded-For. Each request must find a kept-alive connection from the proxy to refgate.
  seen=()
  for ((i = 0; i < 8; i++)); do
    from=127.0.0.$((3 + i % 2))
    forged=()
    ((i % 4 == 1)) && forged=(-H "X-Forwarded-For: 198.51.100.$i")
    resp=$(through "$p" "$from" "${forged[@]}" "$url")
    [[ $resp =~ ^HTTP/[0-9.]+\ 302 ]] || fail "$p: request $i was not a 302: $resp"
    mapfile -t open < <(backend_ports "$p")
    ((${#open[@]} > 0)) || fail "$p: no connection to refgate stayed open after request $i (no keep-alive)"
    seen+=("${open[@]}")
  done
  distinct=$(printf '%s\n' "${seen[@]}" | sort -u | wc -l)
  ((distinct <= 4)) || fail "$p: 9 requests used $distinct connections to refgate (no keep-alive)"
  log "$p: 302 with refgate's headers; 9 requests over $distinct kept-alive connection(s) to refgate"
done

# A reader that reaches refgate directly: its X-Forwarded-For is not believed.
for n in 1 2 3; do
  curl -sS -o /dev/null --interface 127.0.0.5 -A "$UA" -H "X-Forwarded-For: 198.51.100.$n" \
    "http://127.0.0.1:$RG_PORT/go/direct"
done

sleep 0.6
kill -TERM "$REFGATE_PID"
wait "$REFGATE_PID" || fail "refgate did not stop with exit 0"
REFGATE_PID=""
REFGATE_STATE_DIR="$WORK" "$REFGATE_BIN" flush >"$WORK/flush.log" 2>&1 || fail "refgate flush failed"
for p in "${proxies[@]}"; do
  clicks=$(sql "SELECT coalesce(sum(clicks), 0) FROM refgate_clicks_daily WHERE link = 'via-$p' AND class = 'human'")
  [[ $clicks == 9 ]] || fail "$p: $clicks human clicks counted for 9 requests"
  uniques=$(sql "SELECT unique_estimate FROM refgate_uniques_daily WHERE link = 'via-$p'")
  [[ $uniques == 2 ]] || fail "$p: two readers (one forging X-Forwarded-For) gave $uniques uniques, not 2"
done
uniques=$(sql "SELECT unique_estimate FROM refgate_uniques_daily WHERE link = 'direct'")
[[ $uniques == 1 ]] ||
  fail "forged X-Forwarded-For from an untrusted peer was believed: $uniques uniques, not 1"
echo "through ${proxies[*]}: 302s with refgate's headers, kept-alive backend connections, two readers = two uniques; forged X-Forwarded-For ignored"
