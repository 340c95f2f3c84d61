# shellcheck shell=bash
# Shared helpers for deploy/local/run.sh and deploy/local/test.sh.
# Sourced, not executed: the caller sets `set -euo pipefail`.
#
# Provides: ROOT, log/die, ensure_packages, ensure_node, npm_ci_if_stale, npm_ci_build_inputs,
# build, lock_state, check_format, cpu_now, part_done, free_port, start_postgres, ensure_database,
# start_redis, wipe_state, stop_all, nolock, write_env_file.

# Repo root from this file's location, so the scripts work from any cwd.
ROOT="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd -P)"

PG_BINDIR=/usr/lib/postgresql/15/bin
# initdb refuses to run as root, so root delegates the cluster to this user.
PG_OS_USER=postgres

REFGATE_APT_PACKAGES=(
  build-essential cmake ninja-build pkg-config g++
  libboost1.81-all-dev libboost-url1.81-dev libhiredis-dev libpqxx-dev
  nlohmann-json3-dev catch2 prometheus-cpp-dev libssl-dev libidn2-dev libsodium-dev
  libqrencode-dev zlib1g-dev libmaxminddb-dev libcurl4-openssl-dev liburing-dev
  postgresql redis-server redis-tools clang-format-14
  publicsuffix
)
# Only the test suite needs these (promtool and a real Prometheus; the fuzz targets; the container image's build and run; the TLS proxies in
# front of refgate and the manifests' parser; the link checker's test HTTPS server and its CA; zbarimg, which reads the QR codes back; the browsers
# of tests/browser: Chromium, Firefox ESR, and WebKitGTK's WebDriver with the Xvfb display its
# MiniBrowser draws on; libfaketime, for the fault matrix's clock steps; html5lib, the HTML5 parser
# that reads the disclosure sanitiser's output as a browser would; shellcheck and flake8, the
# linters of the shell scripts and the Python, tests/lint; lld, the linker of the suite's build and the fuzz targets). On a systemd machine the prometheus, nginx, haproxy and caddy packages also start their services (on
# :9090, :80), so run.sh does not install them.
# shellcheck disable=SC2034 # read by test.sh, which sources this file
REFGATE_TEST_APT_PACKAGES=(prometheus clang-14 libfuzzer-14-dev
  podman runc debootstrap nginx haproxy caddy openssl python3-yaml python3-cryptography zbar-tools chromium
  firefox-esr webkit2gtk-driver xvfb faketime python3-html5lib shellcheck flake8 lld)

# What we started in this shell; stop_all walks these.
_STARTED_PG_DATA=()
_STARTED_REDIS_PIDFILES=()
_LOCK_FD=""

log() { printf '[refgate] %s\n' "$*" >&2; }
die() {
  printf '[refgate] ERROR: %s\n' "$*" >&2
  exit 1
}

# Runs a command with the state lock's fd closed, so daemons and anything the
# command leaves behind do not keep holding the lock after we are gone.
nolock() {
  if [[ -n $_LOCK_FD ]]; then
    "$@" {_LOCK_FD}>&-
  else
    "$@"
  fi
}

# One run.sh / test.sh per state dir at a time: a second one would stop or
# wipe the first one's servers.
lock_state() {
  local name=$1
  (umask 022 && mkdir -p "$ROOT/.state")
  # State is never meant for git, even if the repo .gitignore lacks it.
  [[ -e $ROOT/.state/.gitignore ]] || printf '*\n' >"$ROOT/.state/.gitignore"
  exec {_LOCK_FD}>>"$ROOT/.state/$name.lock"
  flock -n "$_LOCK_FD" ||
    die "another deploy/local script is already using .state/$name (lock $ROOT/.state/$name.lock)"
}

# ------------------------------------------------------------------ timing

# cpu_now: sets CPU_NOW to the CPU milliseconds (user + sys) of this shell's children that have
# ended and been waited for, from bash's `times`; called without a subshell, which would read its
# own. Detached daemons (PostgreSQL, Redis) are not counted.
CPU_NOW=0
cpu_now() {
  local times_file child_user child_sys total=0 t minutes seconds
  times_file=$(mktemp)
  times >"$times_file"
  { read -r _ && read -r child_user child_sys; } <"$times_file"
  rm -f "$times_file"
  for t in "$child_user" "$child_sys"; do
    t=${t%s}                     # e.g. 12m3.456s
    minutes=${t%%m*} seconds=${t#*m}
    total=$((total + (10#$minutes * 60 + 10#${seconds%.*}) * 1000 + 10#${seconds#*.}))
  done
  CPU_NOW=$total
}

# part_done NAME: logs NAME's wall and CPU seconds since the previous part_done (or the start).
_PART_WALL=0
_PART_CPU=0
part_done() {
  cpu_now
  log "$1: $((SECONDS - _PART_WALL)) s wall, $(((CPU_NOW - _PART_CPU + 500) / 1000)) s CPU (user + sys)"
  _PART_WALL=$SECONDS
  _PART_CPU=$CPU_NOW
}

# ---------------------------------------------------------------- packages

# ensure_packages [extra packages...]: the common list plus the extras.
ensure_packages() {
  local -A installed=()
  local pkg status missing=()
  local wanted=("${REFGATE_APT_PACKAGES[@]}" "$@")
  # One dpkg-query for all packages keeps the all-present path fast; unknown
  # packages only print to stderr, so ignore its exit code.
  while IFS=' ' read -r pkg status; do
    [[ $status == "install ok installed" ]] && installed[$pkg]=1
  done < <(dpkg-query -W -f='${Package} ${Status}\n' "${wanted[@]}" 2>/dev/null || true)
  for pkg in "${wanted[@]}"; do
    [[ -n ${installed[$pkg]:-} ]] || missing+=("$pkg")
  done
  ((${#missing[@]} == 0)) && return 0

  local sudo=()
  ((EUID == 0)) || sudo=(sudo)
  log "installing missing packages: ${missing[*]}"
  "${sudo[@]}" apt-get update
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y --no-install-recommends "${missing[@]}"
}

# -------------------------------------------------------------------- node

# The console (src/console/web) is built with Node and npm; Debian's packages do, unless a Node
# is already on PATH (any npm that reads package-lock.json v3).
ensure_node() {
  command -v npm >/dev/null && command -v node >/dev/null && return 0
  local sudo=()
  ((EUID == 0)) || sudo=(sudo)
  log "installing Node.js and npm (the console's build)"
  "${sudo[@]}" apt-get update
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends nodejs npm
}

# npm_ci_if_stale DIR: `npm ci` in DIR when its node_modules is missing or older than its
# package-lock.json (npm ci writes node_modules/.package-lock.json last).
npm_ci_if_stale() {
  local dir=$1 stamp=$1/node_modules/.package-lock.json
  if [[ -e $stamp && ! $dir/package-lock.json -nt $stamp ]]; then
    return 0
  fi
  log "npm ci in ${dir#"$ROOT"/}"
  (cd "$dir" && nolock npm ci --no-audit --no-fund)
}

# npm_ci_build_inputs: the npm packages every build of refgate reads: the console's toolchain
# (src/console/web) and the data sets, all pinned in one lock file (third_party/package-lock.json:
# the crawler patterns, the common passwords, the ASN and country ranges; third_party/README.md).
npm_ci_build_inputs() {
  ensure_node
  npm_ci_if_stale "$ROOT/src/console/web"
  npm_ci_if_stale "$ROOT/third_party"
}

# ------------------------------------------------------------------- build

# build NAME TYPE [cmake args...] -> $ROOT/build/NAME/refgate
build() {
  local name=$1 type=$2
  shift 2
  cmake -S "$ROOT" -B "$ROOT/build/$name" -G Ninja -DCMAKE_BUILD_TYPE="$type" "$@"
  cmake --build "$ROOT/build/$name"
}

# Fails on unformatted tracked C++ sources; skipped outside a git checkout.
check_format() {
  [[ -e $ROOT/.git ]] || return 0
  local files=() f
  while IFS= read -r -d '' f; do
    [[ -f $ROOT/$f ]] && files+=("$ROOT/$f")
  done < <(git -C "$ROOT" ls-files -z -- '*.cpp' '*.hpp')
  ((${#files[@]} == 0)) && return 0
  if ! clang-format-14 --dry-run -Werror "${files[@]}"; then
    die "unformatted sources; fix with: git ls-files -z '*.cpp' '*.hpp' | xargs -0 clang-format-14 -i"
  fi
}

# ------------------------------------------------------------------ helpers

# True if something accepts TCP connections on 127.0.0.1:PORT.
_port_in_use() {
  # shellcheck disable=SC2016 # $1 is expanded by the inner bash
  timeout 2 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1"' _ "$1" 2>/dev/null
}

# free_port: a TCP port on 127.0.0.1 that nothing listens on now, for a test's private server.
free_port() {
  local port i low
  # Below the kernel's ephemeral range: a port from it can be taken as the local end of any
  # outgoing connection (the suite makes many) between this pick and the server's bind.
  low=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
  ((low > 12000)) || low=32768
  for ((i = 0; i < 100; i++)); do
    port=$((10000 + RANDOM % (low - 10000)))
    _port_in_use "$port" || {
      echo "$port"
      return 0
    }
  done
  die "no free port found"
}

_port_owner() {
  ss -Hltnp "sport = :$1" 2>/dev/null || true
}

_require_free_port() {
  local port=$1 what=$2
  if _port_in_use "$port"; then
    die "port $port (for $what) is already in use by a process that is not ours:
$(_port_owner "$port")
stop it, or stop the other refgate run that owns it"
  fi
}

# True if PID is alive and its command name is COMM (guards against PID reuse).
# Zombies count as dead: some container inits never reap daemons' corpses.
_pid_is() {
  local pid=$1 comm=$2 stat
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  [[ $(cat "/proc/$pid/comm" 2>/dev/null) == "$comm" ]] || return 1
  stat=$(cat "/proc/$pid/stat" 2>/dev/null) || return 1
  stat=${stat##*) }
  [[ ${stat%% *} != Z ]]
}

# ---------------------------------------------------------------- postgres

_pg_user() {
  if ((EUID == 0)); then echo "$PG_OS_USER"; else id -un; fi
}

# Runs a command as the cluster's OS user, from / so an unreadable cwd (e.g.
# under /root) does not trip the postgres tools.
_pg_run() {
  if ((EUID == 0)); then
    (cd / && runuser -u "$PG_OS_USER" -- "$@")
  else
    (cd / && "$@")
  fi
}

_pg_fallback_home() {
  local state=$1 hash
  hash=$(printf '%s' "$ROOT" | sha256sum | cut -c1-10)
  echo "/var/tmp/refgate-$hash-$(basename -- "$state")"
}

# Where the cluster of STATE lives: STATE/pg when the postgres user can reach
# it (and the socket path fits the 107-byte limit), else a /var/tmp folder.
_pg_home() {
  local state=$1 port=${2:-65535}
  local sock="$state/pg/sock/.s.PGSQL.$port"
  if ((${#sock} <= 100)) && _pg_run test -x "$state"; then
    echo "$state/pg"
  else
    _pg_fallback_home "$state"
  fi
}

_pg_alive() {
  local data=$1 pid
  [[ -r $data/postmaster.pid ]] || return 1
  read -r pid <"$data/postmaster.pid" || return 1
  _pid_is "$pid" postgres
}

_pg_stop() {
  local data=$1
  if ! _pg_alive "$data"; then
    # A crashed postmaster's pid file; postgres would take a zombie or reused
    # pid in it for a live server and refuse to start.
    if [[ -e $data/postmaster.pid ]]; then
      log "removing stale $data/postmaster.pid"
      _pg_run rm -f "$data/postmaster.pid"
    fi
    return 0
  fi
  log "stopping PostgreSQL ($data)"
  _pg_run "$PG_BINDIR/pg_ctl" -D "$data" -m fast -w -t 60 stop >/dev/null ||
    _pg_run "$PG_BINDIR/pg_ctl" -D "$data" -m immediate -w -t 30 stop >/dev/null ||
    log "WARNING: could not stop PostgreSQL in $data"
}

# start_postgres STATE_DIR PORT [FSYNC=on|off]
# Private cluster, superuser `refgate`, trust auth, 127.0.0.1:PORT only.
start_postgres() {
  local state=$1 port=$2 fsync=${3:-on}
  [[ $fsync == on || $fsync == off ]] || die "start_postgres: FSYNC must be on or off"
  [[ -x $PG_BINDIR/initdb ]] || die "PostgreSQL 15 not found in $PG_BINDIR (package postgresql)"
  if ((EUID == 0)) && ! id -u "$PG_OS_USER" >/dev/null 2>&1; then
    die "OS user '$PG_OS_USER' missing (it comes with the postgresql package)"
  fi
  local user home data sock
  user=$(_pg_user)
  (umask 022 && mkdir -p "$state")
  home=$(_pg_home "$state" "$port")
  data="$home/data"
  sock="$home/sock"
  if [[ $home != "$state/pg" ]]; then
    log "note: $user cannot reach $state; PostgreSQL data lives in $home"
    # Leave a pointer where people will look for it.
    printf '%s\n' "$home" >"$state/pg.location"
    # Never reuse a /var/tmp folder that someone else made.
    if [[ -e $home && $(stat -c %U "$home") != "$user" ]]; then
      die "$home exists but is not owned by $user; remove it"
    fi
  else
    rm -f "$state/pg.location"
  fi

  # Data dir and socket dir must belong to the cluster user, mode 700.
  mkdir -p "$home"
  if ((EUID == 0)); then
    [[ $(stat -c %U "$home") == "$user" ]] || chown -R "$user:" "$home"
  fi
  chmod 700 "$home"
  _pg_run mkdir -p "$sock"

  # Stop a postmaster left running by a crashed earlier run of this state.
  _pg_stop "$data"
  _require_free_port "$port" "PostgreSQL"

  if [[ -e $data && ! -e $data/PG_VERSION ]]; then
    log "removing half-initialised cluster in $data"
    rm -rf "$data"
  fi
  if [[ ! -e $data/PG_VERSION ]]; then
    local nosync=()
    [[ $fsync == off ]] && nosync=(--no-sync)
    log "initdb $data (as $user)"
    _pg_run "$PG_BINDIR/initdb" -D "$data" -U refgate --auth=trust -E UTF8 \
      --locale=C.UTF-8 "${nosync[@]}" >"$home/initdb.log" 2>&1 ||
      die "initdb failed; see $home/initdb.log"
    printf "\ninclude_if_exists 'refgate.conf'\n" |
      _pg_run tee -a "$data/postgresql.conf" >/dev/null
  fi
  [[ $(cat "$data/PG_VERSION") == 15 ]] || die "$data is not a PostgreSQL 15 cluster; remove it"
  chmod 700 "$data"

  # Written on every start so port/fsync follow the arguments; a config file
  # also avoids shell-quoting paths through pg_ctl -o.
  printf "listen_addresses = '127.0.0.1'\nport = %s\nunix_socket_directories = '%s'\nfsync = %s\n" \
    "$port" "${sock//\'/\'\'}" "$fsync" | _pg_run tee "$data/refgate.conf" >/dev/null
  # Stale socket lock files from a killed postmaster would block startup.
  _pg_run find "$sock" -mindepth 1 -delete

  _STARTED_PG_DATA+=("$data")
  log "starting PostgreSQL on 127.0.0.1:$port (fsync=$fsync, log $home/postgres.log)"
  if ! nolock _pg_run "$PG_BINDIR/pg_ctl" -D "$data" -l "$home/postgres.log" -w -t 30 start >/dev/null; then
    tail -n 20 "$home/postgres.log" >&2 || true
    die "PostgreSQL did not start; see $home/postgres.log"
  fi
  local i
  for ((i = 0; i < 30; i++)); do
    "$PG_BINDIR/pg_isready" -q -h 127.0.0.1 -p "$port" -U refgate -d postgres -t 1 && return 0
    sleep 1
  done
  die "PostgreSQL on port $port not ready after 30 s; see $home/postgres.log"
}

# ensure_database PORT NAME: create database NAME on our cluster if missing.
ensure_database() {
  local port=$1 name=$2 exists
  exists=$("$PG_BINDIR/psql" -X -qtA -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U refgate \
    -d postgres -v name="$name" <<<"SELECT 1 FROM pg_database WHERE datname = :'name'")
  [[ $exists == 1 ]] && return 0
  log "creating database $name"
  "$PG_BINDIR/createdb" -h 127.0.0.1 -p "$port" -U refgate "$name"
}

# ------------------------------------------------------------------- redis

_redis_stop() {
  local pidfile=$1 pid i
  [[ -r $pidfile ]] || return 0
  read -r pid <"$pidfile" || return 0
  if _pid_is "$pid" redis-server; then
    log "stopping Redis (pid $pid)"
    # By pid, never by port: cannot hit someone else's server. SIGTERM makes
    # Redis flush the AOF and exit cleanly.
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 100; i++)); do
      _pid_is "$pid" redis-server || break
      sleep 0.1
    done
    if _pid_is "$pid" redis-server; then
      log "WARNING: Redis pid $pid ignored SIGTERM; killing it"
      kill -KILL "$pid" 2>/dev/null || true
    fi
  fi
  rm -f "$pidfile"
}

# start_redis STATE_DIR PORT
start_redis() {
  local state=$1 port=$2
  local dir="$state/redis"
  mkdir -p "$dir"
  _redis_stop "$dir/redis.pid"
  _require_free_port "$port" "Redis"
  _STARTED_REDIS_PIDFILES+=("$dir/redis.pid")
  log "starting Redis on 127.0.0.1:$port (log $dir/redis.log)"
  nolock redis-server --bind 127.0.0.1 --port "$port" --dir "$dir" \
    --appendonly yes --appendfsync everysec --maxmemory-policy noeviction \
    --save '' --daemonize yes --pidfile "$dir/redis.pid" --logfile "$dir/redis.log"
  local i
  for ((i = 0; i < 60; i++)); do
    [[ $(redis-cli -h 127.0.0.1 -p "$port" ping 2>/dev/null) == PONG ]] && return 0
    sleep 0.5
  done
  tail -n 20 "$dir/redis.log" >&2 || true
  die "Redis on port $port not ready after 30 s; see $dir/redis.log"
}

# ---------------------------------------------------------------- lifecycle

# Stops whatever a previous run left in STATE_DIR and deletes it (and its
# /var/tmp fallback), for a clean test run.
wipe_state() {
  local state=$1 fallback
  fallback=$(_pg_fallback_home "$state")
  _pg_stop "$state/pg/data"
  _pg_stop "$fallback/data"
  _redis_stop "$state/redis/redis.pid"
  rm -rf -- "$state" "$fallback"
}

# memory_scratch NAME: prints a folder for NAME's throwaway files in memory (one per checkout,
# refgate-<hash>-NAME under /dev/shm, a tmpfs), or nothing when /dev/shm is no tmpfs or has less
# than 2 GiB free. REFGATE_TEST_SCRATCH=disk prints nothing; an absolute path is the folder to
# make it under instead of /dev/shm.
memory_scratch() {
  local name=$1 base=/dev/shm hash free
  case ${REFGATE_TEST_SCRATCH:-} in
  disk) return 0 ;;
  "")
    [[ $(stat -f -c %T "$base" 2>/dev/null) == tmpfs && -w $base ]] || return 0
    free=$(df -k --output=avail "$base" | tail -n 1)
    ((free >= 2 * 1024 * 1024)) || return 0
    ;;
  /*)
    base=$REFGATE_TEST_SCRATCH
    [[ -d $base && -w $base ]] || die "REFGATE_TEST_SCRATCH=$base: not a folder this user can write"
    ;;
  *) die "REFGATE_TEST_SCRATCH must be disk or an absolute path, not '$REFGATE_TEST_SCRATCH'" ;;
  esac
  hash=$(printf '%s' "$ROOT" | sha256sum | cut -c1-10)
  echo "${base%/}/refgate-$hash-$name"
}

# prune_memory_scratch: removes this user's folders of memory_scratch (in /dev/shm) whose checkout
# is gone. A failed run keeps its folder for its logs; a CI clone's is then deleted with the
# clone's files, and its folder would hold memory until the next boot.
prune_memory_scratch() {
  local other checkout
  for other in /dev/shm/refgate-*-*; do
    [[ -d $other && -O $other && -r $other/checkout ]] || continue
    checkout=$(<"$other/checkout")
    [[ -d $checkout ]] || rm -rf -- "$other" 2>/dev/null || true
  done
}

# claim_memory_scratch DIR: makes DIR (memory_scratch's folder) this checkout's, with an empty
# DIR/tmp for any user's temporary files.
claim_memory_scratch() {
  local dir=$1
  mkdir -p "$dir"
  chmod 755 "$dir"
  printf '%s\n' "$ROOT" >"$dir/checkout"
  rm -rf -- "$dir/tmp"
  mkdir -m 1777 "$dir/tmp"
}

# Stops the servers this shell started. Idempotent and never fails: it runs
# from EXIT traps, possibly more than once.
stop_all() {
  local d p
  for d in "${_STARTED_PG_DATA[@]}"; do
    _pg_stop "$d" || true
  done
  for p in "${_STARTED_REDIS_PIDFILES[@]}"; do
    _redis_stop "$p" || true
  done
  return 0
}

# ------------------------------------------------------------- second terminal

# write_env_file FILE BIN_DIR: what a second terminal needs to talk to a running refgate, for
# deploy/local/env.sh to source: the database and Redis URLs (for the refgate CLI), P and A (the
# public and admin base URLs, from REFGATE_LISTEN and REFGATE_ADMIN_LISTEN) and PATH with BIN_DIR.
write_env_file() {
  local file=$1 bin_dir=$2
  {
    printf '# Written by refgate for deploy/local/env.sh while it serves; removed when it stops.\n'
    printf 'export REFGATE_DATABASE_URL=%q\n' "$REFGATE_DATABASE_URL"
    printf 'export REFGATE_REDIS_URL=%q\n' "$REFGATE_REDIS_URL"
    printf 'P=%q\n' "http://$REFGATE_LISTEN"
    printf 'A=%q\n' "http://$REFGATE_ADMIN_LISTEN"
    # shellcheck disable=SC2016 # $PATH is expanded when the file is sourced
    printf 'export PATH=%q:"$PATH"\n' "$bin_dir"
  } >"$file.tmp"
  mv -f "$file.tmp" "$file"
}

# classifier_namespace SOURCE_ROOT: the namespace the click classifier's names live in at
# SOURCE_ROOT (refgate::domain since issue 40, refgate before it), for the benches that compile a
# baseline tree's classifier beside this tree's (classifier_cost.sh, classifier_accuracy.sh).
classifier_namespace() {
  if grep -q '^namespace refgate::domain' "$1/include/domain/refgate/domain/click_classifier.hpp"; then
    echo refgate::domain
  else
    echo refgate
  fi
}
