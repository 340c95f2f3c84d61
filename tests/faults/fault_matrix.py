#!/usr/bin/env python3
"""The single-instance fault matrix (issue 21): one refgate with its own PostgreSQL and Redis on
127.0.0.x, all in one temp dir. Under a bounded load of browser-like clicks it runs, one at a
time: kill -9 of refgate at random points (rounds), Redis stopped, killed and frozen, PostgreSQL
stopped and frozen, the disk full for the snapshot and spill files (a small tmpfs), and the clock
stepping across midnight UTC (libfaketime); then compares, per fault, the 302s the clients saw
with the human clicks PostgreSQL counted after a final `refgate flush`. Each fault has links of
its own, so one settle at the end (a flush until PostgreSQL has every click, or nothing more
moves) compares them all: a phase ends once the instance has handed its counts to Redis, and its
counts must then also outlast the faults after it. The phases and the comparison are the
harness's, shared with tests/ha (tests/harness/faults.py: run_phase, settle_phases); the faults are
in tests/harness/single_faults.py.

  tests/faults/fault_matrix.py [--short | --long] [--keep] [--faults 1,2,...] [REFGATE_BIN]

--short (default; the suite's form, under a minute) or --long (20 kill rounds, longer faults, more
load; writes tests/bench/results/fault-matrix.md). PostgreSQL: REFGATE_TEST_PG_BINDIR and
REFGATE_TEST_PG_USER as in tests/ha. Exit 0 when every fault passed, 1 when one failed, 77 when
redis-server or PostgreSQL is missing, 2 on a setup error. The disk-full fault is SKIPPED when
a tmpfs cannot be mounted (not root), the clock fault when libfaketime is missing.
"""

import argparse
import contextlib
import datetime
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

# The suite runs this from the source tree: leave no __pycache__ there.
sys.dont_write_bytecode = True

# The harness package (tests/harness), through the link beside this file.
from harness.faults import Outcome, run_phase, settle_phases  # noqa: E402
from harness.report import render, write_long_results  # noqa: E402
from harness.single_faults import (FAULTS, ROTATE_LINK, ROTATE_PARTNER,  # noqa: E402
                                   served_location)
from harness.topology import (ROOT, Postgres, Redis, Refgate, SetupError,  # noqa: E402
                              Topology, pg_user_default, wait_until)

WINDOW_MS = 250
RESULTS = os.path.join(ROOT, "tests", "bench", "results", "fault-matrix.md")
FAKETIME_LIB = "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1"
PROFILES = {
    # links per fault, clicks/s, client connections; seconds of load before a fault, at most
    # until counting resumed, after it; seconds a dependency stays down, stopped or frozen;
    # kill -9 rounds; seconds per clock step; at most for the final flushes; the run's limit;
    # at most for a fault's injection (the kill rounds), which the load must outlast; the
    # seconds over which a kill's moment is spread (the send rounds are 0.25 s, the flushes 0.5 s).
    "short": dict(links=2, rate=150, threads=3, before=0.2, max_fault=8, after=0.1, down=0.6,
                  kill_rounds=2, clock_hold=1.2, settle=8, limit=200, max_inject=60,
                  kill_spread=0.5),
    "long": dict(links=6, rate=400, threads=6, before=5, max_fault=40, after=5, down=5.0,
                 kill_rounds=20, clock_hold=4, settle=30, limit=1200, max_inject=240,
                 kill_spread=1.0),
}
DEFINITIONS = """\
- *failed redirects*: requests that got no 302, as the clients saw them; "while down" are
  connection errors while the one instance was down (killed, or restarted by the fault), which
  a client of a single instance cannot avoid; any other failure fails the fault.
- *sent*, *counted*, *lost*, *over-counted*, *resumed*: as in ha-fault-matrix.md (the fault's
  own links; PostgreSQL's human clicks after the final `refgate flush`).
- *allowed loss*: the window docs/architecture.md states for the fault, at this load.
"""


class Context:
    link_prefix = "sf"

    def __init__(self, topo, profile):
        self.topo, self.profile = topo, profile
        self.window_s = WINDOW_MS / 1000
        self.started = time.monotonic()
        self.pids_at_fault = set()
        self.small_dir = self.small_reason = None
        self.faketime = os.path.exists(FAKETIME_LIB)
        self.faketime_spec = os.path.join(topo.dir, "faketime")

    def clock(self):
        return time.monotonic() - self.started

    def log(self, text):
        print(f"[faults {self.clock():6.1f}s] {text}", file=sys.stderr, flush=True)

    def entry(self):
        r = self.topo.refgates[0]
        return r.address, r.port

    def counted(self, links):
        names = ",".join(f"'{link}'" for link in links)
        rows = self.topo.postgres[0].sql(
            "SELECT link, sum(clicks) FROM refgate_clicks_daily "
            f"WHERE class = 'human' AND link IN ({names}) GROUP BY link")
        return {link: int(n) for link, n in rows}

    def faketime_env(self):
        env = {"LD_PRELOAD": FAKETIME_LIB, "FAKETIME_TIMESTAMP_FILE": self.faketime_spec,
               "FAKETIME_CACHE_DURATION": "1", "FAKETIME_DONT_FAKE_MONOTONIC": "1"}
        # An ASan build wants its runtime first; libfaketime only wraps the clock calls.
        asan = os.environ.get("ASAN_OPTIONS", "")
        env["ASAN_OPTIONS"] = (asan + ":" if asan else "") + "verify_asan_link_order=0"
        return env


def documents(profile):
    partner = {"slug": "sf-partner", "name": "Fault partner", "ref_param": "ref",
               "ref_code": "sf-code", "allowed_domains": ["www.example.com"], "extra_params": {}}
    rotate = dict(partner, slug=ROTATE_PARTNER, name="Rotated code", ref_code="before")
    links = [{"slug": f"sf-f{n}-{k}", "partner": "sf-partner",
              "destination": f"https://www.example.com/sf/{n}/{k}", "status": "active"}
             for n, _, _ in FAULTS for k in range(profile["links"])]
    links.append({"slug": ROTATE_LINK, "partner": ROTATE_PARTNER,
                  "destination": "https://www.example.com/rotate", "status": "active"})
    return {"partners": [partner, rotate], "links": links}


def mount_small(ctx):
    """A 256 KiB tmpfs for the snapshot and spill files; the reason when it cannot be had."""
    path = os.path.join(ctx.topo.dir, "small")
    os.makedirs(path)
    out = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k,mode=0700", "tmpfs", path],
                         capture_output=True, text=True)
    if out.returncode != 0:
        ctx.small_reason = f"cannot mount a tmpfs: {out.stderr.strip() or out.returncode}"
        return
    ctx.small_dir = path


def in_parallel(*steps, here=None):
    """Runs the steps at once, `here` in this thread; the first error raised. A server that
    outlives its step must be started `here`: topology.spawn's children die with the thread that
    started them (PR_SET_PDEATHSIG is per thread)."""
    errors = []

    def run(step):
        try:
            step()
        except Exception as e:  # noqa: BLE001 - handed to the caller below
            errors.append(e)
    threads = [threading.Thread(target=run, args=(step,)) for step in steps]
    for t in threads:
        t.start()
    if here:
        run(here)
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


def start(topo, ctx):
    pg = Postgres(topo, "pg", "127.0.0.41")
    topo.postgres = [pg]
    redis = Redis(topo, "redis", "127.0.0.21")
    # appendfsync always: Redis writes and fsyncs what it acknowledged before it replies, so a
    # click lost to its kill -9 is refgate's doing. (Under everysec Redis postpones the write
    # while a slow background fsync runs, up to 2 s, and replies meanwhile: a kill then loses
    # what it acknowledged in those seconds, Redis' own window.)
    redis.write_conf(["appendonly yes", "appendfsync always", "maxmemory-policy noeviction",
                      'save ""'])
    topo.redis = [redis]

    def start_postgres():
        pg.init_primary()
        pg.start()
        pg.sql("CREATE DATABASE refgate", db="postgres")
    in_parallel(start_postgres, lambda: mount_small(ctx), here=redis.start)
    ctx.log("PostgreSQL and Redis started")
    topo.refgate_env = {
        "REFGATE_DATABASE_URL": pg.url(), "REFGATE_REDIS_URL": f"redis://{redis.address}:"
        f"{redis.port}/0", "REFGATE_DRAIN_MS": "500", "REFGATE_FLUSH_INTERVAL_MS": "500",
        "REFGATE_BUCKET_SECONDS": "1", "REFGATE_AGGREGATION_WINDOW_MS": str(WINDOW_MS),
        "REFGATE_THREADS": "1", "REFGATE_LOG_LEVEL": "warn",
    }
    topo.run_refgate("migrate")
    ctx.log("migrated")
    r = Refgate(topo, 1)
    topo.refgates = [r]
    if ctx.small_dir:
        r.extra_env.update({
            "REFGATE_SNAPSHOT_FILE": os.path.join(ctx.small_dir, "snapshot.json"),
            "REFGATE_SPILL_FILE": os.path.join(ctx.small_dir, "spill.json")})
    if ctx.faketime:
        # From its start, so that the clock fault steps the clock without a restart.
        with open(ctx.faketime_spec, "w") as f:
            f.write("+0s\n")
        r.extra_env.update(ctx.faketime_env())

    def make_token():
        topo.token = topo.run_refgate("token", "create", "--name", "fault-matrix", "--role",
                                      "admin").strip().splitlines()[-1]
    in_parallel(lambda: topo.run_refgate("import", "-", stdin=json.dumps(documents(ctx.profile))),
                make_token)
    ctx.log("imported, token made")
    r.start()
    first = f"{Context.link_prefix}-f{min(n for n, _, _ in FAULTS)}-0"
    wait_until(f"{r.name} serving the imported links", lambda: served_location(r, first), 10,
               0.05)


def skip_reason(ctx, number):
    if number == 7 and not ctx.small_dir:
        return ctx.small_reason
    if number == 8 and not ctx.faketime:
        return f"libfaketime not found ({FAKETIME_LIB}; Debian package faketime)"
    return None


def run(args, topo, ctx):
    ctx.log(f"starting PostgreSQL, Redis and refgate under {topo.dir}")
    start(topo, ctx)
    ctx.log(f"ready; the snapshot and spill files on "
            f"{'a 256 KiB tmpfs' if ctx.small_dir else 'the temp dir (' + ctx.small_reason + ')'}")
    outcomes = []
    for number, title, inject in FAULTS:
        if number not in args.faults:
            continue
        reason = skip_reason(ctx, number)
        if reason:
            outcome = Outcome(number, title)
            outcome.skipped = reason
        else:
            try:
                # Compared at the end, in one settle for every fault (settle_phases).
                outcome = run_phase(ctx, number, title, inject, settle_now=False)
            except SetupError as e:
                outcome = Outcome(number, title)
                outcome.errors.append(f"the fault could not complete: {e}")
                outcomes.append(outcome)
                ctx.log(f"fault {number}: FAIL ({e}); no further faults run")
                break
        outcomes.append(outcome)
        ctx.log(f"fault {number}: done: {len(outcome.unexcused_failures())} failures, resumed "
                f"{outcome.resume_redis}/{outcome.resume_pg}; {outcome.errors[:2]}")
    ctx.log("flushing and counting every fault's clicks")
    settle_phases(ctx, outcomes)
    for outcome in outcomes:
        if outcome.number == 8 and not outcome.skipped:
            days = topo.postgres[0].sql("SELECT DISTINCT day FROM refgate_clicks_daily "
                                        "WHERE link LIKE 'sf-f8-%' ORDER BY day")
            outcome.notes.append(f"days counted: {', '.join(d[0] for d in days)}")
            if len(days) < 2:
                outcome.errors.append("the clicks did not land on both sides of midnight")
        verdict = "SKIPPED" if outcome.skipped else "PASS" if outcome.passed() else "FAIL"
        ctx.log(f"fault {outcome.number}: {verdict}: sent {outcome.sent}, counted "
                f"{outcome.counted}, lost {outcome.lost} (allowed {outcome.allowed_loss}), "
                f"over {outcome.over}; {outcome.errors[:2]}")
    return outcomes


def report(args, ctx, outcomes):
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip() or "unknown"
    meta = {"form": args.form, "profile": PROFILES[args.form], "commit": commit,
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "machine": f"{platform.node()}, {os.cpu_count()} cores, {platform.machine()}",
            "setup": (f"One refgate (1 thread, {os.path.basename(args.refgate)} "
                      f"{'ASan ' if 'test' in args.refgate else ''}build), one PostgreSQL, one "
                      f"Redis (appendonly, appendfsync always); kill -9 rounds: "
                      f"{PROFILES[args.form]['kill_rounds']}; a dependency down or frozen "
                      f"{PROFILES[args.form]['down']} s."),
            "definitions": DEFINITIONS, "seconds": ctx.clock()}
    text = render(outcomes, meta)
    print(text)
    if args.form == "long":
        head = ("# Single-instance fault matrix: latest long run\n\n"
                "Written by `tests/faults/fault_matrix.py --long` (issue 21; the short form is "
                "a ctest); the table below is the latest run, the history keeps one line per "
                "run.\n\n")
        write_long_results(text, meta, outcomes, RESULTS, head)


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    form = parser.add_mutually_exclusive_group()
    form.add_argument("--short", dest="form", action="store_const", const="short")
    form.add_argument("--long", dest="form", action="store_const", const="long")
    parser.add_argument("--keep", action="store_true", help="keep the temp dir (logs, data)")
    parser.add_argument("--faults", default=",".join(str(n) for n, _, _ in FAULTS))
    parser.add_argument("refgate", nargs="?", default=os.environ.get("REFGATE_BIN"))
    args = parser.parse_args()
    args.form = args.form or "short"
    args.faults = {int(f) for f in args.faults.split(",")}
    if not args.refgate:
        parser.error("give the refgate binary as an argument or in REFGATE_BIN")
    args.refgate = os.path.abspath(args.refgate)
    return args


def main():
    args = parse_args()
    pg_bindir = os.environ.get("REFGATE_TEST_PG_BINDIR", "/usr/lib/postgresql/15/bin")
    missing = [t for t in ("redis-server", "redis-cli") if shutil.which(t) is None]
    missing += [t for t in ("initdb", "pg_ctl", "psql")
                if not os.access(os.path.join(pg_bindir, t), os.X_OK)]
    if missing:
        print(f"SKIP: missing {', '.join(missing)}", file=sys.stderr)
        return 77
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    watchdog = threading.Timer(PROFILES[args.form]["limit"],
                               lambda: os.kill(os.getpid(), signal.SIGTERM))
    watchdog.daemon = True
    watchdog.start()
    workdir = tempfile.mkdtemp(prefix="refgate-faults-")
    topo = Topology(args.refgate, pg_bindir,
                    os.environ.get("REFGATE_TEST_PG_USER", pg_user_default()), workdir)
    ctx = Context(topo, PROFILES[args.form])
    try:
        outcomes = run(args, topo, ctx)
        report(args, ctx, outcomes)
        return 0 if all(o.passed() for o in outcomes) else 1
    except SetupError as e:
        print(f"setup failed: {e} (logs under {workdir})", file=sys.stderr)
        args.keep = True
        return 2
    finally:
        watchdog.cancel()
        topo.close()
        if ctx.faketime:
            # libfaketime keeps a shared memory segment and a semaphore per process in /dev/shm,
            # which a process killed with SIGKILL leaves behind.
            for r in getattr(topo, "refgates", []):
                for pid in r.pids:
                    for name in (f"faketime_shm_{pid}", f"sem.faketime_sem_{pid}"):
                        with contextlib.suppress(FileNotFoundError):
                            os.unlink(os.path.join("/dev/shm", name))
        if ctx.small_dir:
            subprocess.run(["umount", "-l", ctx.small_dir], capture_output=True)
        ctx.log("stopped everything")
        if args.keep:
            print(f"kept {workdir}", file=sys.stderr)
        else:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
