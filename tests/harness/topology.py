"""The servers of the fault matrix, on loopback addresses only, every file under one temp dir.

Addresses (all 127.0.0.x, ports chosen free at start): HAProxy 127.0.0.1, refgate instances
127.0.0.11-13 (public and admin listener each), Redis primary 127.0.0.21 and replica 127.0.0.22,
sentinels 127.0.0.31-33, PostgreSQL primary 127.0.0.41 and standby 127.0.0.42. Everything a
Topology starts, it stops in close(), which runs on exit, on failure and on Ctrl-C.
"""

import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request

# realpath: the scripts reach this package through the links tests/ha/harness, tests/faults/harness
# and tests/bench/harness.
HERE = os.path.dirname(os.path.realpath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MASTER_NAME = "refgate"


class SetupError(Exception):
    pass


def free_port(address):
    """A TCP port nothing listens on at address now (the kernel's pick for port 0)."""
    with socket.socket() as s:
        s.bind((address, 0))
        return s.getsockname()[1]


def wait_until(what, check, timeout, step=0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except OSError:
            pass
        time.sleep(step)
    raise SetupError(f"timed out after {timeout} s waiting for {what}")


def listening(address, port):
    try:
        with socket.create_connection((address, port), timeout=0.5):
            return True
    except OSError:
        return False


def http_status(url, timeout=1.0, method="GET"):
    try:
        req = urllib.request.Request(url, method=method)
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code
    except OSError:
        return None


def psql(pg_bindir, url, statement, timeout=10.0):
    """One statement through psql; its rows as lists of text, or raises SetupError."""
    try:
        out = subprocess.run([os.path.join(pg_bindir, "psql"), "-X", "-qtA", "-F", "\t",
                              "-v", "ON_ERROR_STOP=1", "-c", statement, url],
                             capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise SetupError(f"psql {url.split('@')[-1]}: no answer within {timeout} s") from None
    if out.returncode != 0:
        raise SetupError(f"psql {url.split('@')[-1]}: {out.stderr.strip()}")
    return [line.split("\t") for line in out.stdout.splitlines() if line]


class Redis:
    """A redis-server or a sentinel, in the foreground, with its own config file."""

    def __init__(self, topo, name, address, sentinel=False):
        self.topo, self.name, self.address = topo, name, address
        self.port = free_port(address)
        self.sentinel = sentinel
        self.dir = os.path.join(topo.dir, name)
        os.makedirs(self.dir)
        self.conf = os.path.join(self.dir, "redis.conf")
        self.proc = None

    def write_conf(self, lines):
        base = [f"bind {self.address}", f"port {self.port}", f"dir {self.dir}",
                "protected-mode no", "daemonize no", f"logfile {self.dir}/log",
                "loglevel warning"]
        with open(self.conf, "w") as f:
            f.write("\n".join(base + lines) + "\n")

    def start(self, *extra):
        args = ["redis-server", self.conf] + (["--sentinel"] if self.sentinel else []) + list(extra)
        self.proc = self.topo.spawn(args, self.dir)
        wait_until(f"{self.name} on {self.address}:{self.port}",
                   lambda: listening(self.address, self.port), 10)

    def kill9(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def cli(self, *args, timeout=2.0):
        """redis-cli's answer, empty when the server does not answer in time."""
        try:
            out = subprocess.run(["redis-cli", "-h", self.address, "-p", str(self.port)]
                                 + list(args), capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return ""
        return out.stdout.strip()


class Postgres:
    """A PostgreSQL 15 cluster run as the test user (initdb refuses root)."""

    def __init__(self, topo, name, address):
        self.topo, self.name, self.address = topo, name, address
        self.port = free_port(address)
        self.dir = os.path.join(topo.dir, name)
        self.data = os.path.join(self.dir, "data")
        os.makedirs(self.dir)
        topo.give_to_pg_user(self.dir)
        self.running = False

    def run(self, *args, timeout=60):
        self.run_as_pg_user([os.path.join(self.topo.pg_bindir, args[0])] + list(args[1:]),
                            " ".join(args[:2]), timeout)

    def run_as_pg_user(self, cmd, what, timeout=60):
        if self.topo.pg_user != pwd.getpwuid(os.geteuid()).pw_name:
            cmd = ["runuser", "-u", self.topo.pg_user, "--"] + cmd
        with open(os.path.join(self.dir, "cmd.log"), "a") as log:
            rc = subprocess.run(cmd, cwd="/", stdout=log, stderr=log, timeout=timeout).returncode
        if rc != 0:
            raise SetupError(f"{self.name}: {what} failed (see {self.dir}/cmd.log)")

    def initdb(self, data):
        self.run("initdb", "-D", data, "-U", "refgate", "--auth=trust", "-E", "UTF8",
                 "--locale=C.UTF-8", "-N")

    def template(self):
        """The suite's initdb'd cluster in REFGATE_TEST_PG_TEMPLATE (deploy/local/test.sh), made
        here when no test has made it yet, as tests/support/private_postgres.cpp does; None
        when unset."""
        root = os.environ.get("REFGATE_TEST_PG_TEMPLATE")
        if not root:
            return None
        cluster = os.path.join(root, "data")
        if not os.path.exists(os.path.join(cluster, "PG_VERSION")):
            aside = tempfile.mkdtemp(prefix="new-", dir=root)
            self.topo.give_to_pg_user(aside)
            self.initdb(os.path.join(aside, "data"))
            try:
                os.rename(os.path.join(aside, "data"), cluster)
            except OSError:
                pass  # another test made it first
            shutil.rmtree(aside, ignore_errors=True)
        return cluster

    def init_primary(self):
        cluster = self.template()
        if cluster is None:
            self.initdb(self.data)
        else:
            self.run_as_pg_user(["cp", "-a", cluster, self.data], "copying the template cluster")
        with open(os.path.join(self.data, "postgresql.conf"), "a") as f:
            # Throwaway data: fsync off. Synchronous replication is switched on once the
            # standby streams (a commit before that would wait for it forever).
            f.write("fsync = off\nwal_level = replica\nmax_wal_senders = 5\n"
                    "wal_keep_size = 64MB\nhot_standby = on\nlog_min_messages = warning\n")
        with open(os.path.join(self.data, "pg_hba.conf"), "a") as f:
            f.write("host all all 127.0.0.0/8 trust\nhost replication all 127.0.0.0/8 trust\n")

    def init_standby(self, primary):
        conninfo = (f"host={primary.address} port={primary.port} user=refgate "
                    f"application_name={self.name}")
        self.run("pg_basebackup", "-d", conninfo, "-D", self.data, "-R", "-X", "stream",
                 "-c", "fast", "--no-sync")
        with open(os.path.join(self.data, "postgresql.auto.conf"), "a") as f:
            f.write(f"primary_conninfo = '{conninfo}'\n")

    def start(self):
        opts = (f"-p {self.port} -c listen_addresses={self.address} "
                f"-c unix_socket_directories={self.dir}")
        self.run("pg_ctl", "-D", self.data, "-w", "-t", "30", "-l",
                 os.path.join(self.dir, "server.log"), "-o", opts, "start")
        self.running = True

    def stop(self, mode="fast"):
        if self.running:
            self.run("pg_ctl", "-D", self.data, "-w", "-t", "30", "-m", mode, "stop")
            self.running = False

    def promote(self):
        self.run("pg_ctl", "-D", self.data, "-w", "-t", "30", "promote")

    def url(self, db="refgate"):
        return f"postgresql://refgate@{self.address}:{self.port}/{db}"

    def sql(self, statement, db="refgate"):
        return psql(self.topo.pg_bindir, self.url(db), statement)


class Refgate:
    """One `refgate serve`, with its own listeners, snapshot and spill files."""

    def __init__(self, topo, index):
        self.topo, self.index = topo, index
        self.name = f"refgate{index}"
        self.address = f"127.0.0.{10 + index}"
        self.port = free_port(self.address)
        self.admin_port = free_port(self.address)
        self.dir = os.path.join(topo.dir, self.name)
        os.makedirs(self.dir)
        self.proc = None
        self.starts = 0
        self.extra_env = {}  # settings of this instance alone (a fault's LD_PRELOAD)
        self.pids = []  # of every start

    def env(self):
        env = dict(self.topo.refgate_env)
        env.update({
            "REFGATE_LISTEN": f"{self.address}:{self.port}",
            "REFGATE_ADMIN_LISTEN": f"{self.address}:{self.admin_port}",
            "REFGATE_STATE_DIR": self.dir,
            "REFGATE_SNAPSHOT_FILE": os.path.join(self.dir, "snapshot.json"),
            "REFGATE_SPILL_FILE": os.path.join(self.dir, "spill.json"),
        })
        env.update(self.extra_env)
        return env

    def start(self, wait=True):
        self.starts += 1
        log = os.path.join(self.dir, f"serve-{self.starts}.log")
        self.proc = self.topo.spawn([self.topo.refgate_bin, "serve"], self.dir, self.env(), log)
        self.pids.append(self.proc.pid)
        if wait:
            self.wait_ready()

    def wait_ready(self, timeout=30):
        def ready():
            if self.proc.poll() is not None:
                raise SetupError(f"{self.name} exited with {self.proc.returncode} ({self.dir})")
            return http_status(f"{self.admin_url()}/readyz") == 200
        wait_until(f"{self.name} /readyz 200", ready, timeout)

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def kill9(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def terminate(self, timeout=30):
        """SIGTERM, then the exit (drain, then the aggregator's last send); its exit code."""
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout)

    def admin_url(self):
        return f"http://{self.address}:{self.admin_port}"

    def public_url(self):
        return f"http://{self.address}:{self.port}"

    def metric(self, name):
        """The sum of every sample of metric `name` on /metrics, or None when unreachable."""
        try:
            with urllib.request.urlopen(f"{self.admin_url()}/metrics", timeout=1) as r:
                text = r.read().decode()
        except OSError:
            return None
        total = 0.0
        for line in text.splitlines():
            if line.startswith(name + " ") or line.startswith(name + "{"):
                total += float(line.rsplit(" ", 1)[1])
        return total


class Topology:
    """Owns every process and the temp dir; close() is safe to call twice."""

    def __init__(self, refgate_bin, pg_bindir, pg_user, workdir):
        self.refgate_bin, self.pg_bindir, self.pg_user = refgate_bin, pg_bindir, pg_user
        self.dir = workdir
        os.chmod(self.dir, 0o755)  # the PostgreSQL user walks into its own subfolders
        self.procs = []
        self.postgres = []
        self.refgate_env = {}
        self.sentinel = False
        self.redis_wait_acks = 0
        self.closed = False

    def give_to_pg_user(self, path):
        if os.geteuid() == 0:
            pw = pwd.getpwnam(self.pg_user)
            os.chown(path, pw.pw_uid, pw.pw_gid)

    def spawn(self, args, cwd, env=None, log=None):
        out = open(log or os.path.join(cwd, "stdout.log"), "ab")
        full_env = dict(os.environ)
        full_env.update(env or {})
        # A child dies with the matrix even when ctest SIGKILLs it (setpriv sets
        # PR_SET_PDEATHSIG before it execs; a preexec_fn is unsafe beside the load's threads).
        if shutil.which("setpriv"):
            args = ["setpriv", "--pdeathsig", "KILL", "--"] + args
        proc = subprocess.Popen(args, cwd=cwd, env=full_env, stdout=out, stderr=out,
                                stdin=subprocess.DEVNULL, start_new_session=True)
        out.close()
        self.procs.append(proc)
        return proc

    def close(self):
        if self.closed:
            return
        self.closed = True
        for proc in self.procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
        for proc in self.procs:
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                pass
        for pg in self.postgres:
            try:
                pg.stop("immediate")
            except (SetupError, subprocess.TimeoutExpired):
                pass

    # ---------------------------------------------------------------- the stores

    def start_redis(self):
        self.redis = [Redis(self, "redis-a", "127.0.0.21"), Redis(self, "redis-b", "127.0.0.22")]
        primary, replica = self.redis
        # repl-diskless-sync-delay 0: a replica's full sync (at the start, and the old primary's
        # after fault 1) begins at once, not after Redis' default 5 s wait for more replicas.
        common = ["appendonly yes", "appendfsync everysec", "maxmemory-policy noeviction",
                  'save ""', "repl-diskless-sync-delay 0"]
        primary.write_conf(common + [f"replica-announce-ip {primary.address}"])
        replica.write_conf(common + [f"replica-announce-ip {replica.address}",
                                     f"replicaof {primary.address} {primary.port}"])
        for node in self.redis:
            node.start()
        wait_until("the Redis replica in sync",
                   lambda: "master_link_status:up" in replica.cli("info", "replication"), 10)
        self.sentinels = [Redis(self, f"sentinel{i}", f"127.0.0.{30 + i}", sentinel=True)
                          for i in (1, 2, 3)]
        for s in self.sentinels:
            s.write_conf([f"sentinel announce-ip {s.address}",
                          f"sentinel monitor {MASTER_NAME} {primary.address} {primary.port} 2",
                          f"sentinel down-after-milliseconds {MASTER_NAME} 1000",
                          f"sentinel failover-timeout {MASTER_NAME} 5000",
                          f"sentinel parallel-syncs {MASTER_NAME} 1"])
            s.start()
        wait_until("3 sentinels that know each other and the replica",
                   lambda: all(self.sentinel_sees_all(s) for s in self.sentinels), 15, 0.2)

    def sentinel_sees_all(self, s):
        info = s.cli("sentinel", "master", MASTER_NAME).split("\n")
        fields = dict(zip(info[::2], info[1::2]))
        return fields.get("num-other-sentinels") == "2" and fields.get("num-slaves") == "1"

    def redis_master(self):
        """The master address the sentinels agree on, as 'host:port' (None when they do not)."""
        answers = set()
        for s in self.sentinels:
            lines = s.cli("sentinel", "get-master-addr-by-name", MASTER_NAME).split("\n")
            answers.add(":".join(lines))
        return answers.pop() if len(answers) == 1 else None

    def sentinel_url(self):
        hosts = ",".join(f"{s.address}:{s.port}" for s in self.sentinels)
        return f"redis+sentinel://{hosts}/{MASTER_NAME}/0"

    def start_postgres(self):
        primary = Postgres(self, "pg_a", "127.0.0.41")
        standby = Postgres(self, "pg_b", "127.0.0.42")
        self.postgres = [primary, standby]
        primary.init_primary()
        primary.start()
        primary.sql("CREATE DATABASE refgate", db="postgres")
        standby.init_standby(primary)
        standby.start()
        primary.sql("ALTER SYSTEM SET synchronous_standby_names = 'pg_b'")
        primary.sql("SELECT pg_reload_conf()")
        wait_until("the standby streaming synchronously",
                   lambda: primary.sql("SELECT sync_state FROM pg_stat_replication") == [["sync"]],
                   15, 0.1)

    def database_url(self):
        hosts = ",".join(f"{pg.address}:{pg.port}" for pg in self.postgres)
        return f"postgresql://refgate@{hosts}/refgate?target_session_attrs=read-write"

    def query(self, statement):
        """Rows of one statement on the current primary (libpq picks it from the host list)."""
        return psql(self.pg_bindir, self.database_url() + "&connect_timeout=2", statement)

    def pg_primary(self):
        for pg in self.postgres:
            if pg.running and pg.sql("SELECT pg_is_in_recovery()") == [["f"]]:
                return pg
        raise SetupError("no PostgreSQL primary")

    # ----------------------------------------------------------------- refgate

    def run_refgate(self, *args, stdin=None, timeout=60):
        env = dict(os.environ)
        env.update(self.refgate_env)
        out = subprocess.run([self.refgate_bin] + list(args), env=env, input=stdin,
                             capture_output=True, text=True, timeout=timeout, cwd=self.dir)
        if out.returncode != 0:
            raise SetupError(f"refgate {args[0]}: exit {out.returncode}: {out.stderr.strip()}")
        return out.stdout

    def accepts(self, env):
        """True when `refgate check-config` accepts these extra settings."""
        full = dict(os.environ)
        full.update(self.refgate_env)
        full.update(env)
        return subprocess.run([self.refgate_bin, "check-config"], env=full, cwd=self.dir,
                              capture_output=True, timeout=30).returncode == 0

    def start_refgates(self, count, documents):
        self.run_refgate("migrate")
        for doc in documents:
            self.run_refgate("import", "-", stdin=json.dumps(doc))
        self.token = self.run_refgate("token", "create", "--name", "fault-matrix",
                                      "--role", "admin").strip().splitlines()[-1]
        self.refgates = [Refgate(self, i) for i in range(1, count + 1)]
        for r in self.refgates:
            r.start(wait=False)
        for r in self.refgates:
            r.wait_ready()

    def start_single(self, documents, env=None):
        """One refgate over one local PostgreSQL (database `refgate`) and one Redis (AOF every
        second, no eviction), with `documents` imported: the single-instance benches' set-up.
        `env` adds to (or overrides) the refgate's environment. Returns (pg, redis, refgate)."""
        pg = Postgres(self, "pg", "127.0.0.1")
        self.postgres = [pg]
        pg.init_primary()
        pg.start()
        pg.sql("CREATE DATABASE refgate", db="postgres")
        redis = Redis(self, "redis", "127.0.0.1")
        redis.write_conf(["appendonly yes", "appendfsync everysec",
                          "maxmemory-policy noeviction", 'save ""'])
        redis.start()
        self.refgate_env = {
            "REFGATE_DATABASE_URL": pg.url(),
            "REFGATE_REDIS_URL": f"redis://{redis.address}:{redis.port}/0",
            "REFGATE_THREADS": "1", "REFGATE_LOG_LEVEL": "warn", **(env or {}),
        }
        self.start_refgates(1, [documents])
        return pg, redis, self.refgates[0]

    def deprioritize(self, pg, redis):
        """nice 19 for PostgreSQL (the postmaster and every backend it has now, by pid) and
        Redis: they stand in for servers of their own, as in tests/bench/run.sh; refgate and wrk
        keep their priority. Backends started later keep nice 0: call it again once the
        connection pools are open."""
        with open(os.path.join(pg.data, "postmaster.pid")) as f:
            postmaster = int(f.readline())
        children = subprocess.run(["pgrep", "-P", str(postmaster)], capture_output=True,
                                  text=True).stdout.split()
        for pid in [str(postmaster), str(redis.proc.pid)] + children:
            subprocess.run(["renice", "-n", "19", "-p", pid], capture_output=True)

    def start_haproxy(self):
        self.haproxy_port = free_port("127.0.0.1")
        env = {"REFGATE_HA_BIND": f"127.0.0.1:{self.haproxy_port}"}
        for r in self.refgates:
            env[f"REFGATE_HA_SERVER{r.index}"] = f"{r.address}:{r.port}"
        cfg = os.path.join(ROOT, "deploy", "proxy", "haproxy-ha.cfg")
        hdir = os.path.join(self.dir, "haproxy")
        os.makedirs(hdir)
        check = subprocess.run(["haproxy", "-c", "-q", "-f", cfg], env={**os.environ, **env},
                               capture_output=True, text=True)
        if check.returncode != 0:
            raise SetupError(f"haproxy -c refuses {cfg}: {check.stdout}{check.stderr}")
        self.haproxy = self.spawn(["haproxy", "-db", "-f", cfg], hdir, env)
        wait_until("HAProxy", lambda: listening("127.0.0.1", self.haproxy_port), 10)
        url = f"http://127.0.0.1:{self.haproxy_port}/readyz"
        wait_until("HAProxy seeing a ready backend", lambda: http_status(url) == 200, 10)


def pg_user_default():
    if os.geteuid() != 0:
        return pwd.getpwuid(os.geteuid()).pw_name
    return "postgres"


def have_tools(pg_bindir):
    missing = [t for t in ("haproxy", "redis-server", "redis-cli") if shutil.which(t) is None]
    for t in ("initdb", "pg_ctl", "pg_basebackup", "psql"):
        if not os.access(os.path.join(pg_bindir, t), os.X_OK):
            missing.append(os.path.join(pg_bindir, t))
    return missing
