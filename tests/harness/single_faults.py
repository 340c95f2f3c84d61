"""The single-instance faults (issue 21): each is injected by run_phase (faults.py)
under load, and sets the loss it may cause with the window docs/architecture.md states for it.

Clients talk to the one instance directly, so while it is down (killed, or restarted by the
fault) they cannot connect: those connection errors are expected (Outcome.excused), every other
failed redirect fails the fault.
"""

import math
import os
import random
import signal
import subprocess
import time
import urllib.request

from .faults import _admin, _NoRedirect
from .topology import wait_until

ROTATE_PARTNER = "sf-rotate"
ROTATE_LINK = "sf-rotate-link"


def _instance(ctx):
    return ctx.topo.refgates[0]


def _restart(ctx, out, r):
    """kill -9 and a start; the time between is excused."""
    down_at = ctx.clock() - 0.05
    r.kill9()
    r.start()
    out.excused.append((down_at, ctx.clock() + 0.5))


def _window(ctx):
    """The documented kill -9 window at the load's rate: the last aggregation window plus the
    send round in flight, plus a click in flight per client connection."""
    p = ctx.profile
    return math.ceil(2 * ctx.window_s * p["rate"]) + p["threads"]


KILL_WINDOW = ("at most the last aggregation window per kill (guarantee 4: \"A `kill -9` loses "
               "at most the last aggregation window\")")
REDIS_WINDOW = ("none (guarantee 4: \"counts kept in memory up to a bound while Redis is down\"; "
                "the bound, max_pending_keys, is far above these links)")
PG_WINDOW = ("none (guarantee 3: \"every count that Redis kept reaches PostgreSQL\"; the flusher "
             "deletes a bucket only after its COMMIT)")


def refgate_kill(ctx, out, struck):
    r = _instance(ctx)
    rounds = ctx.profile["kill_rounds"]
    for n in range(rounds):
        # A random point of the send and flush cycles.
        time.sleep(random.uniform(0.0, ctx.profile["kill_spread"]))
        if n == 0:
            down_at = ctx.clock() - 0.05
            r.kill9()
            struck(restarting=[r.name])
            r.start()
            out.excused.append((down_at, ctx.clock() + 0.5))
        else:
            _restart(ctx, out, r)
    out.notes.append(f"{rounds} rounds of kill -9 at a random point, then a restart")
    out.allowed_loss = rounds * _window(ctx)
    out.window = KILL_WINDOW


def _redis(ctx):
    return ctx.topo.redis[0]


def redis_stop(ctx, out, struck):
    node = _redis(ctx)
    node.cli("shutdown")
    node.proc.wait(10)
    struck()
    time.sleep(ctx.profile["down"])
    node.start()
    out.allowed_loss, out.window = 0, REDIS_WINDOW


def redis_kill(ctx, out, struck):
    node = _redis(ctx)
    node.kill9()
    struck()
    time.sleep(ctx.profile["down"])
    node.start()
    out.allowed_loss = 0
    out.window = (REDIS_WINDOW + "; \"A Redis process killed loses what it acknowledged but had "
                  "not written to its AOF: nothing with `appendfsync always`\")")


def redis_freeze(ctx, out, struck):
    node = _redis(ctx)
    node.proc.send_signal(signal.SIGSTOP)
    try:
        struck()
        time.sleep(ctx.profile["down"])
    finally:
        node.proc.send_signal(signal.SIGCONT)
    out.allowed_loss, out.window = 0, REDIS_WINDOW


def pg_stop(ctx, out, struck):
    pg = ctx.topo.postgres[0]
    pg.stop("fast")
    struck()
    time.sleep(ctx.profile["down"])
    pg.start()
    out.allowed_loss, out.window = 0, PG_WINDOW


def _pg_pids(pg):
    with open(os.path.join(pg.data, "postmaster.pid")) as f:
        postmaster = int(f.readline())
    children = subprocess.run(["pgrep", "-P", str(postmaster)], capture_output=True,
                              text=True).stdout.split()
    return [postmaster] + [int(c) for c in children]


def pg_freeze(ctx, out, struck):
    pids = _pg_pids(ctx.topo.postgres[0])
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
    try:
        struck()
        time.sleep(ctx.profile["down"])
    finally:
        for pid in pids:
            os.kill(pid, signal.SIGCONT)
    out.notes.append(f"SIGSTOP to the postmaster and its {len(pids) - 1} processes")
    out.allowed_loss, out.window = 0, PG_WINDOW


def served_location(r, slug):
    opener = urllib.request.build_opener(_NoRedirect)
    req = urllib.request.Request(f"{r.public_url()}/go/{slug}", method="HEAD")
    try:
        with opener.open(req, timeout=1) as resp:
            return resp.headers.get("Location") or ""
    except OSError:
        return ""


def change_code(ctx, code):
    etag, _ = _admin(ctx, "GET", f"/api/v1/partners/{ROTATE_PARTNER}")
    _admin(ctx, "PATCH", f"/api/v1/partners/{ROTATE_PARTNER}", {"ref_code": code},
           {"Content-Type": "application/merge-patch+json", "If-Match": etag})


def _fill(path):
    """Writes zeros to path until the file system is full."""
    chunk = b"\0" * 4096
    with open(path, "wb", buffering=0) as f:
        try:
            while True:
                f.write(chunk)
        except OSError:
            pass


def _log_has(r, event):
    log = os.path.join(r.dir, f"serve-{r.starts}.log")
    with open(log, errors="replace") as f:
        return f'"{event}"' in f.read()


def disk_full(ctx, out, struck):
    r, node = _instance(ctx), _redis(ctx)
    filler = os.path.join(ctx.small_dir, "filler")
    _fill(filler)
    try:
        code = f"full{int(time.time()) % 100000}"
        change_code(ctx, code)
        wait_until("the new code served with the snapshot file's disk full",
                   lambda: f"ref={code}" in served_location(r, ROTATE_LINK), 3, 0.02)
        wait_until("snapshot_file_write_failed in the log",
                   lambda: _log_has(r, "snapshot_file_write_failed"), 5, 0.1)
        out.notes.append("disk full: a code change is served, the snapshot file's write fails "
                         "and is logged (snapshot_file_write_failed)")
        node.cli("shutdown")
        node.proc.wait(10)
        struck(restarting=[r.name])
        sent_before = ctx.load.total_sent()
        time.sleep(ctx.profile["down"])
        down_at = ctx.clock()
        rc = r.terminate()
        held = ctx.load.total_sent() - sent_before
        if rc != 0:
            out.errors.append(f"{r.name} exited {rc} on SIGTERM")
        if not _log_has(r, "clicks_lost_at_stop"):
            out.errors.append("SIGTERM with Redis down and the disk full: no clicks_lost_at_stop")
        else:
            out.notes.append(f"SIGTERM with Redis down: the spill file cannot be written, "
                             f"clicks_lost_at_stop logged ({held} clicks answered meanwhile)")
    finally:
        os.unlink(filler)
    left = [n for n in os.listdir(ctx.small_dir) if n.endswith(".tmp")]
    if left:
        out.errors.append(f"left on the full disk: {', '.join(left)}")
    node.start()
    r.start()
    out.excused.append((down_at, ctx.clock() + 0.5))
    out.allowed_loss = held + _window(ctx)
    out.window = ("the clicks held in memory while Redis was down (\"A spill file that cannot be "
                  "written (the disk full) loses those counts, logged as `clicks_lost_at_stop`\")")


def _offset_to(target_unix):
    return f"{target_unix - time.time():+.0f}s"


def clock_steps(ctx, out, struck):
    midnight = (int(time.time()) // 86400 + 1) * 86400

    def step(to, settle):
        with open(ctx.faketime_spec, "w") as f:
            f.write(_offset_to(to) + "\n")
        time.sleep(settle)

    # The instance runs under libfaketime from its start, at an offset of zero until now.
    hold = ctx.profile["clock_hold"]
    step(midnight - 3, hold)
    struck()
    # Forward across midnight by a step, back across it, forward again; each holds `hold`
    # seconds (libfaketime re-reads the file every second).
    step(midnight + 5, hold)
    step(midnight - 2, hold)
    step(midnight + 10, hold)
    out.notes.append(f"fake midnight {time.strftime('%Y-%m-%d %H:%M', time.gmtime(midnight))} "
                     f"UTC: a step to 23:59:57, then to 00:00:05, back to 23:59:58, on to 00:00:10")
    out.allowed_loss = 0
    out.window = ("none (\"a clock step across midnight moves clicks between two days and never "
                  "loses or doubles one\")")


FAULTS = [
    (1, "kill -9 of refgate at random points, then its restart", refgate_kill),
    (2, "Redis stopped (SHUTDOWN), then started", redis_stop),
    (3, "Redis killed (kill -9), then started", redis_kill),
    (4, "Redis frozen (SIGSTOP, then SIGCONT)", redis_freeze),
    (5, "PostgreSQL stopped (fast), then started", pg_stop),
    (6, "PostgreSQL frozen (SIGSTOP of every process, then SIGCONT)", pg_freeze),
    (7, "disk full for the snapshot and spill files (tmpfs)", disk_full),
    (8, "clock steps forward and back across midnight UTC (libfaketime)", clock_steps),
]
