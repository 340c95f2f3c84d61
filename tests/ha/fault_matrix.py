#!/usr/bin/env python3
"""The multi-instance fault matrix (issue 17): 3 refgate instances behind HAProxy, Redis primary +
replica + 3 sentinels, PostgreSQL primary + synchronous streaming standby, all on 127.0.0.x in
one temp dir. Under a bounded load of browser-like clicks through HAProxy it runs, one at a
time: kill -9 of the Redis primary, promotion of the PostgreSQL standby, kill -9 and restart of
one instance, a rolling restart, and a referral code change; then compares, per fault, the 302s
the clients saw with the human clicks PostgreSQL counted after a final `refgate flush`.

  tests/ha/fault_matrix.py [--short | --long] [--keep] [REFGATE_BIN]

--short (default; the suite's form, about a minute) or --long (minutes, more load; writes its
table to tests/bench/results/ha-fault-matrix.md). The refgate binary: the argument or
REFGATE_BIN. PostgreSQL: REFGATE_TEST_PG_BINDIR (default /usr/lib/postgresql/15/bin), run as
REFGATE_TEST_PG_USER (default: postgres for root, else yourself). Exit 0 when every fault passed,
1 when one failed, 77 when haproxy, redis-server or PostgreSQL is missing, 2 on a setup error.
A fault this refgate cannot take (no redis+sentinel:// support) is reported SKIPPED.
"""

import argparse
import datetime
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
from harness.faults import FAULTS, ROTATE_SLUG, Outcome, run_phase  # noqa: E402
from harness.report import render, write_long_results  # noqa: E402
from harness.topology import (ROOT, SetupError, Topology, have_tools,  # noqa: E402
                              pg_user_default)

WINDOW_MS = 250
PROFILES = {
    # links per fault, clicks/s in total, client threads; seconds of load before the fault,
    # at most during it, after it resumed; seconds an instance stays down (fault 3); at most
    # for the final flushes; the whole run's hard limit; at most for a fault's injection (the
    # rolling restart), which the load must outlast.
    # short: 0.5 s before a fault is 100 clicks, 25 per link; 0.5 s after it resumed and 0.5 s
    # down are two aggregation windows and several HAProxy health checks (200 ms).
    "short": dict(links=4, rate=200, threads=4, before=0.5, max_fault=15, after=0.5,
                  down=0.5, settle=10, limit=230, max_inject=60),
    "long": dict(links=8, rate=400, threads=8, before=10, max_fault=40, after=20,
                 down=5.0, settle=30, limit=900, max_inject=120),
}


class Context:
    link_prefix = "ha"

    def __init__(self, topo, profile):
        self.topo, self.profile = topo, profile
        self.window_s = WINDOW_MS / 1000
        self.started = time.monotonic()
        self.pids_at_fault = set()

    def clock(self):
        return time.monotonic() - self.started

    def entry(self):
        """Where the clients send their clicks: HAProxy."""
        return "127.0.0.1", self.topo.haproxy_port

    def log(self, text):
        print(f"[ha {self.clock():6.1f}s] {text}", file=sys.stderr, flush=True)

    def counted(self, links):
        """Human clicks PostgreSQL holds per link (the primary, whichever it is now)."""
        names = ",".join(f"'{link}'" for link in links)
        rows = self.topo.query(
            "SELECT link, sum(clicks) FROM refgate_clicks_daily "
            f"WHERE class = 'human' AND link IN ({names}) GROUP BY link")
        return {link: int(n) for link, n in rows}


def documents(profile):
    partner = {"slug": "ha-partner", "name": "HA partner", "ref_param": "ref",
               "ref_code": "ha-code", "allowed_domains": ["www.example.com"], "extra_params": {}}
    rotate = dict(partner, slug=ROTATE_SLUG, name="HA rotated code", ref_code="before")
    links = [{"slug": f"ha-f{n}-{k}", "partner": "ha-partner",
              "destination": f"https://www.example.com/ha/{n}/{k}", "status": "active"}
             for n, _, _ in FAULTS for k in range(profile["links"])]
    links.append({"slug": ROTATE_SLUG, "partner": ROTATE_SLUG,
                  "destination": "https://www.example.com/rotate", "status": "active"})
    return [{"partners": [partner, rotate], "links": links}]


def configure(topo, ctx):
    """Settings for every refgate; sentinel:// and WAIT where this refgate takes them."""
    primary = topo.redis[0]
    topo.refgate_env = {
        "REFGATE_DATABASE_URL": topo.database_url(),
        "REFGATE_REDIS_URL": f"redis://{primary.address}:{primary.port}/0",
        "REFGATE_DRAIN_MS": "1000", "REFGATE_FLUSH_INTERVAL_MS": "1000",
        "REFGATE_BUCKET_SECONDS": "1", "REFGATE_AGGREGATION_WINDOW_MS": str(WINDOW_MS),
        "REFGATE_THREADS": "1", "REFGATE_LOG_LEVEL": "warn",
        "REFGATE_TRUSTED_PROXIES": "127.0.0.1/32",
    }
    sentinel = {"REFGATE_REDIS_URL": topo.sentinel_url()}
    wait = {"REFGATE_REDIS_MIN_REPLICAS_ACKED": "1", "REFGATE_REDIS_WAIT_TIMEOUT_MS": "500"}
    if topo.accepts({**sentinel, **wait}):
        topo.refgate_env.update({**sentinel, **wait})
        topo.sentinel, topo.redis_wait_acks = True, 1
    elif topo.accepts(sentinel):
        topo.refgate_env.update(sentinel)
        topo.sentinel = True
    ctx.log(f"Redis: {topo.refgate_env['REFGATE_REDIS_URL']} "
            f"(WAIT for {topo.redis_wait_acks} replica); PostgreSQL: {topo.database_url()}")


def _catch(fn, errors):
    try:
        fn()
    except Exception as e:  # re-raised by the main thread
        errors.append(e)


def run(args, workdir):
    profile = PROFILES[args.form]
    pg_bindir = os.environ.get("REFGATE_TEST_PG_BINDIR", "/usr/lib/postgresql/15/bin")
    topo = Topology(args.refgate, pg_bindir,
                    os.environ.get("REFGATE_TEST_PG_USER", pg_user_default()), workdir)
    ctx = Context(topo, profile)
    try:
        ctx.log(f"starting PostgreSQL, Redis and sentinels under {workdir}")
        # The two stores start side by side: each spends seconds waiting (initdb and the base
        # backup; the sentinels discovering each other).
        pg_error = []
        pg = threading.Thread(target=lambda: _catch(topo.start_postgres, pg_error))
        pg.start()
        try:
            topo.start_redis()
        finally:
            pg.join()
        if pg_error:
            raise pg_error[0]
        ctx.log("PostgreSQL and Redis ready")
        configure(topo, ctx)
        topo.start_refgates(3, documents(profile))
        topo.start_haproxy()
        ctx.log("3 instances ready behind HAProxy on 127.0.0.1:%d" % topo.haproxy_port)
        outcomes = []
        for number, title, inject in FAULTS:
            if number not in args.faults:
                continue
            if number == 1 and not topo.sentinel:
                outcome = Outcome(number, title)
                outcome.skipped = "this refgate does not accept redis+sentinel:// URLs"
            else:
                try:
                    outcome = run_phase(ctx, number, title, inject)
                except SetupError as e:
                    # The topology is in an unknown state: report, and run no further fault.
                    outcome = Outcome(number, title)
                    outcome.errors.append(f"the fault could not complete: {e}")
                    outcomes.append(outcome)
                    ctx.log(f"fault {number}: FAIL ({e}); no further faults run")
                    break
            outcomes.append(outcome)
            ctx.log(f"fault {number}: {'PASS' if outcome.passed() else 'FAIL'}")
        return topo, ctx, outcomes
    except BaseException:
        topo.close()
        raise


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    form = parser.add_mutually_exclusive_group()
    form.add_argument("--short", dest="form", action="store_const", const="short")
    form.add_argument("--long", dest="form", action="store_const", const="long")
    parser.add_argument("--keep", action="store_true", help="keep the temp dir (logs, data)")
    parser.add_argument("--faults", default="1,2,3,4,5", help="which faults, e.g. 3,4,5")
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
    missing = have_tools(os.environ.get("REFGATE_TEST_PG_BINDIR", "/usr/lib/postgresql/15/bin"))
    if missing:
        print(f"SKIP: missing {', '.join(missing)}", file=sys.stderr)
        return 77
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    limit = PROFILES[args.form]["limit"]
    watchdog = threading.Timer(limit, lambda: os.kill(os.getpid(), signal.SIGTERM))
    watchdog.daemon = True
    watchdog.start()
    began = time.monotonic()
    workdir = tempfile.mkdtemp(prefix="refgate-ha-")
    topo = None
    try:
        topo, ctx, outcomes = run(args, workdir)
        commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                                capture_output=True, text=True).stdout.strip() or "unknown"
        meta = {"form": args.form, "profile": PROFILES[args.form], "commit": commit,
                "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                "machine": f"{platform.node()}, {os.cpu_count()} cores, {platform.machine()}",
                "redis_url": topo.refgate_env["REFGATE_REDIS_URL"],
                "wait": topo.redis_wait_acks, "seconds": ctx.clock()}
        text = render(outcomes, meta)
        print(text)
        if args.form == "long":
            write_long_results(text, meta, outcomes)
        return 0 if all(o.passed() for o in outcomes) else 1
    except SetupError as e:
        print(f"setup failed: {e} (logs under {workdir})", file=sys.stderr)
        args.keep = True
        return 2
    finally:
        watchdog.cancel()
        if topo is not None:
            topo.close()
        print(f"[ha] stopped everything; {time.monotonic() - began:.0f} s in all", file=sys.stderr)
        if args.keep:
            print(f"kept {workdir}", file=sys.stderr)
        else:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
