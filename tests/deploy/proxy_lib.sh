# shellcheck shell=bash
# Starts the shipped TLS proxy configurations (deploy/proxy/) in front of a refgate on
# 127.0.0.1:$RG_PORT, each changed only in its listen address, certificate paths and backend port.
# Sourced by tests/deploy/proxy_test.sh and tests/bench/proxy_hop.sh after deploy/local/lib.sh.
#
# The caller sets WORK (a scratch folder), RG_PORT and PROXY_PIDS=() and declares `declare -A
# PORT`; make_certificate writes WORK/cert.pem, key.pem and combined.pem; start_proxy NAME (nginx,
# haproxy, caddy) sets PORT[NAME] and appends the server's pid to PROXY_PIDS. Failures call
# `fail` (the caller's).

PROXY_DIR="$ROOT/deploy/proxy"

# wait_port PORT WHAT
wait_port() {
  local port=$1 what=$2 i
  for ((i = 0; i < 100; i++)); do
    _port_in_use "$port" && return 0
    sleep 0.1
  done
  fail "$what did not listen on $port"
}

# replace FILE FROM TO: a literal replacement that must happen, so that a change to the shipped
# file's adapted lines is noticed.
replace() {
  local file=$1 from=$2 to=$3
  grep -qF -- "$from" "$file" || fail "${file##*/}: no line '$from' to adapt"
  FROM=$from TO=$to perl -0pi -e 's/\Q$ENV{FROM}\E/$ENV{TO}/g' "$file"
}

make_certificate() {
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=picks.example.com \
    -addext subjectAltName=DNS:picks.example.com -keyout "$WORK/key.pem" -out "$WORK/cert.pem" \
    >/dev/null 2>&1 || fail "openssl could not make a certificate"
  cat "$WORK/cert.pem" "$WORK/key.pem" >"$WORK/combined.pem"
}

_start_nginx() {
  local site="$WORK/nginx-site.conf"
  cp "$PROXY_DIR/nginx.conf" "$site"
  replace "$site" "listen 443 ssl http2;" "listen 127.0.0.1:${PORT[nginx]} ssl http2;"
  replace "$site" "listen [::]:443 ssl http2;" ""
  replace "$site" "listen 80;" "listen 127.0.0.1:$(free_port);"
  replace "$site" "listen [::]:80;" ""
  replace "$site" "/etc/ssl/certs/picks.example.com.pem" "$WORK/cert.pem"
  replace "$site" "/etc/ssl/private/picks.example.com.key" "$WORK/key.pem"
  replace "$site" "server 127.0.0.1:8080;" "server 127.0.0.1:$RG_PORT;"
  mkdir -p "$WORK/nginx"
  cat >"$WORK/nginx.conf" <<EOF
worker_processes 1;
pid $WORK/nginx.pid;
error_log $WORK/nginx.log warn;
events {}
http {
    access_log off;
    client_body_temp_path $WORK/nginx; proxy_temp_path $WORK/nginx;
    fastcgi_temp_path $WORK/nginx; uwsgi_temp_path $WORK/nginx; scgi_temp_path $WORK/nginx;
    include $site;
}
EOF
  nginx -t -q -c "$WORK/nginx.conf" -p "$WORK" 2>>"$WORK/nginx.log" ||
    fail "nginx -t refuses deploy/proxy/nginx.conf"
  nginx -c "$WORK/nginx.conf" -p "$WORK" -g 'daemon off;' 2>>"$WORK/nginx.log" &
  PROXY_PIDS+=($!)
}

_start_haproxy() {
  local cfg="$WORK/haproxy.cfg"
  cp "$PROXY_DIR/haproxy.cfg" "$cfg"
  replace "$cfg" "bind :443 ssl crt /etc/haproxy/certs/picks.example.com.pem" \
    "bind 127.0.0.1:${PORT[haproxy]} ssl crt $WORK/combined.pem"
  replace "$cfg" "bind :80" "bind 127.0.0.1:$(free_port)"
  replace "$cfg" "server refgate1 127.0.0.1:8080" "server refgate1 127.0.0.1:$RG_PORT"
  haproxy -c -q -f "$cfg" >>"$WORK/haproxy.log" 2>&1 || fail "haproxy -c refuses deploy/proxy/haproxy.cfg"
  haproxy -db -f "$cfg" >>"$WORK/haproxy.log" 2>&1 &
  PROXY_PIDS+=($!)
}

_start_caddy() {
  local cfg="$WORK/Caddyfile"
  {
    printf '{\n\tadmin off\n\tauto_https disable_redirects\n\tskip_install_trust\n}\n'
    cat "$PROXY_DIR/Caddyfile"
  } >"$cfg"
  # The address too: wrk sends it as the TLS server name when it connects by address.
  replace "$cfg" "picks.example.com {" "https://picks.example.com:${PORT[caddy]}, https://127.0.0.1:${PORT[caddy]} {
	bind 127.0.0.1
	tls $WORK/cert.pem $WORK/key.pem"
  replace "$cfg" "reverse_proxy 127.0.0.1:8080" "reverse_proxy 127.0.0.1:$RG_PORT"
  HOME="$WORK" XDG_DATA_HOME="$WORK/caddy" XDG_CONFIG_HOME="$WORK/caddy" \
    caddy run --config "$cfg" --adapter caddyfile >>"$WORK/caddy.log" 2>&1 &
  PROXY_PIDS+=($!)
}

# start_proxy NAME: starts it and waits until it listens on PORT[NAME].
start_proxy() {
  local name=$1
  PORT["$name"]=$(free_port)
  "_start_$name"
  wait_port "${PORT[$name]}" "$name"
}
