"""The five faults and the phase that runs each one under load, then checks the counts.

A phase has links of its own (<prefix>-f<N>-<k>: ha-f<N>-<k> in tests/ha, sf-f<N>-<k> in
tests/faults), so the clicks its clients saw and the clicks PostgreSQL counted for it are compared
link by link, whatever the other phases did.
"""

import json
import math
import threading
import time
import urllib.error
import urllib.request

from .load import Load
from .topology import SetupError, wait_until

ROTATE_SLUG = "ha-rotate"


class Outcome:
    """What one fault did to the clients and the counts."""

    def __init__(self, number, title):
        self.number, self.title = number, title
        self.skipped = None  # the reason, when the fault could not run
        self.failures = []
        self.sent = self.counted = self.lost = self.over = 0
        self.allowed_loss = 0
        self.window = ""
        self.resume_redis = self.resume_pg = None
        self.propagation = {}  # fault 5: instance name -> seconds, None when never seen
        self.notes = []
        self.errors = []  # anything else that fails the fault
        self.per_link = []  # (link, sent, counted)
        # (from, to) in matrix seconds: the only instance was down, so clients could not connect
        # (single-instance faults); a connection error within one is expected, nothing else is.
        self.excused = []

    def unexcused_failures(self):
        def excused(f):
            return not f.what.startswith("HTTP ") and any(a <= f.at <= b for a, b in self.excused)
        return [f for f in self.failures if not excused(f)]

    def passed(self):
        if self.skipped:
            return True
        ok = not self.unexcused_failures() and not self.errors and self.over == 0
        ok = ok and self.lost <= self.allowed_loss
        ok = ok and self.resume_redis is not None and self.resume_pg is not None
        return ok and all(v is not None and v <= 1.0 for v in self.propagation.values())


class Watcher(threading.Thread):
    """Polls, from the fault on, until counting has resumed through Redis and PostgreSQL.

    Redis: every running instance has had a send round confirmed after the fault
    (`refgate_click_batches_sent_total` above its value at the fault; a restarted instance from
    zero). PostgreSQL: the phase's human count is above the 302s its clients had seen at the
    fault, so a click answered after the fault is counted there."""

    def __init__(self, ctx, links, sent_at_fault, t_fault, base):
        super().__init__(daemon=True)
        self.ctx, self.links, self.threshold, self.t_fault = ctx, links, sent_at_fault, t_fault
        self.base = base
        self.resume_redis = self.resume_pg = None
        self.stopping = threading.Event()

    def run(self):
        while not self.stopping.is_set() and (self.resume_redis is None or self.resume_pg is None):
            if self.resume_redis is None and self._redis_resumed():
                self.resume_redis = self.ctx.clock() - self.t_fault
            if self.resume_pg is None:
                try:
                    if sum(self.ctx.counted(self.links).values()) > self.threshold:
                        self.resume_pg = self.ctx.clock() - self.t_fault
                except SetupError:
                    pass
            time.sleep(0.1)

    def _redis_resumed(self):
        for r in self.ctx.topo.refgates:
            if not r.alive():
                return False
            pid, value = self.base[r.name]
            now = r.metric("refgate_click_batches_sent_total")
            if pid is None and r.proc.pid in self.ctx.pids_at_fault:
                return False  # an instance the fault restarts, not restarted yet
            if now is None or now <= (value if r.proc.pid == pid else 0):
                return False
        return True

    def done(self):
        return self.resume_redis is not None and self.resume_pg is not None


def run_phase(ctx, number, title, inject, settle_now=True):
    """Load before, during and after the fault; then the final flush and the comparison. With
    settle_now=False the phase ends once every instance has handed its counts to Redis, and the
    caller compares later (settle_phases), after the faults that follow: the phase's counts then
    also have to outlast those faults."""
    out = Outcome(number, title)
    p = ctx.profile
    links = [f"{ctx.link_prefix}-f{number}-{k}" for k in range(p["links"])]
    host, port = ctx.entry()
    # The load outlasts the fault's own injection (restarts take seconds each under ASan on a
    # loaded machine); stop() ends it as soon as the phase is done.
    load = Load(host, port, links, p["rate"], p["threads"],
                p["before"] + p["max_inject"] + p["max_fault"] + p["after"] + 5, ctx.clock)
    load.start()
    ctx.load = load
    try:
        time.sleep(p["before"])
        t_fault = ctx.clock()
        sent_at_fault = load.total_sent()
        refgates = ctx.topo.refgates
        ctx.pids_at_fault = {r.proc.pid for r in refgates}
        watchers = []

        def struck(restarting=()):
            """Called by the fault right after its instant part (a kill, a stop)."""
            base = {r.name: (None if r.name in restarting else r.proc.pid,
                             r.metric("refgate_click_batches_sent_total") or 0) for r in refgates}
            watchers.append(Watcher(ctx, links, sent_at_fault, t_fault, base))
            watchers[0].start()

        ctx.log(f"fault {number}: {title}")
        inject(ctx, out, struck)
        watcher = watchers[0]
        deadline = time.monotonic() + p["max_fault"]
        while not watcher.done() and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(p["after"])
        watcher.stopping.set()
        watcher.join(5)
        out.resume_redis, out.resume_pg = watcher.resume_redis, watcher.resume_pg
    finally:
        load.stop()
    out.failures = load.failures
    if settle_now:
        settle(ctx, out, links, dict(load.sent))
    else:
        out.sent_per_link = dict(load.sent)
        handed_to_redis(ctx)
    return out


def handed_to_redis(ctx, timeout=5):
    """Waits (at most `timeout`) until no running instance holds counts for Redis: the senders'
    last rounds after the load stopped."""
    def nothing_pending():
        return not any(r.metric("refgate_clicks_pending_keys") for r in ctx.topo.refgates
                       if r.alive())
    time.sleep(2 * ctx.window_s)  # the aggregators' last windows reach the senders
    deadline = time.monotonic() + timeout
    while not nothing_pending() and time.monotonic() < deadline:
        time.sleep(0.05)


def settle_phases(ctx, outcomes):
    """The comparison of every phase run with settle_now=False, from one settle at the end."""
    phases = [o for o in outcomes if getattr(o, "sent_per_link", None) is not None]
    sent = {link: n for o in phases for link, n in o.sent_per_link.items()}
    counted = _settled_counts(ctx, phases[0] if phases else Outcome(0, ""), list(sent), sent)
    for o in phases:
        _record(o, list(o.sent_per_link), o.sent_per_link, counted)


def settle(ctx, out, links, sent):
    """`refgate flush` until PostgreSQL has every click the clients saw, or the time is up."""
    time.sleep(2 * ctx.window_s + 0.3)  # the senders' last rounds
    _record(out, links, sent, _settled_counts(ctx, out, links, sent))


def _settled_counts(ctx, out, links, sent):
    """PostgreSQL's counts of `links` once it has every click in `sent`, or nothing more moves,
    or the time is up; a flush or count that failed is noted on `out`."""
    deadline = time.monotonic() + ctx.profile["settle"]
    counted, previous, flushes = {}, None, 0
    while True:
        # `refgate flush` first and whenever the count stalls short of what was sent; the
        # instances' own flushers (every second) move the rest meanwhile.
        stalled = counted == previous
        try:
            if flushes == 0 or stalled:
                ctx.topo.run_refgate("flush", timeout=30)
                flushes += 1
            previous, counted = counted, ctx.counted(links)
        except SetupError as e:
            out.notes.append(f"flush/count failed: {e}")
        if sum(counted.values()) >= sum(sent.values()) or time.monotonic() > deadline:
            break
        # Short of what was sent: done once nothing is left to move (no instance holds
        # counts for Redis, and a flush moved nothing more).
        if stalled and counted == previous and flushes >= 2 and not any(
                r.metric("refgate_clicks_pending_keys") for r in ctx.topo.refgates if r.alive()):
            break
        time.sleep(0.3)
    return counted


def _record(out, links, sent, counted):
    for link in links:
        s, c = sent.get(link, 0), counted.get(link, 0)
        out.per_link.append((link, s, c))
        out.sent += s
        out.counted += c
        out.lost += max(0, s - c)
        out.over += max(0, c - s)


def instance_window(ctx):
    """One instance's last aggregation window plus the round in flight, at its share of the
    load, plus a click in flight per client connection."""
    p = ctx.profile
    share = p["rate"] / len(ctx.topo.refgates)
    return math.ceil(2 * ctx.window_s * share) + p["threads"]


# ------------------------------------------------------------------------------------ faults


def redis_primary_kill(ctx, out, struck):
    topo = ctx.topo
    old = topo.redis_master()
    node = next((n for n in topo.redis if f"{n.address}:{n.port}" == old), None)
    if node is None:
        raise SetupError(f"the sentinels do not agree on a master ({old})")
    node.kill9()
    struck()
    t0 = ctx.clock()
    wait_until("the sentinels to promote the replica",
               lambda: topo.redis_master() not in (None, old), 20, 0.1)
    out.notes.append(f"Sentinel switched the master {old} -> {topo.redis_master()} "
                     f"{ctx.clock() - t0:.1f} s after the kill")
    # Back as a replica of the new master, as an operator or HA manager restarts it (the
    # sentinels would convert it too, but only after their 10 s INFO period), so the next
    # faults run with a replica again and WAIT can be satisfied.
    node.start("--replicaof", *topo.redis_master().split(":"))
    try:
        wait_until("the old primary to resync as a replica",
                   lambda: "master_link_status:up" in node.cli("info", "replication"), 20, 0.2)
        out.notes.append(f"the old primary restarted and in sync as a replica "
                         f"{ctx.clock() - t0:.1f} s after the kill")
    except SetupError as e:
        out.notes.append(str(e))
    if topo.redis_wait_acks > 0:
        out.allowed_loss = 0
        out.window = f"none (WAIT for {topo.redis_wait_acks} replica)"
    else:
        out.allowed_loss = math.ceil(2 * ctx.window_s * ctx.profile["rate"])
        out.window = "unreplicated writes: one send round of every instance"


def pg_promote(ctx, out, struck):
    topo = ctx.topo
    old = topo.pg_primary()
    new = next(pg for pg in topo.postgres if pg is not old and pg.running)
    t0 = ctx.clock()
    struck()
    old.stop("fast")
    new.promote()
    # What an HA manager does next: the new primary has no standby to wait for.
    new.sql("ALTER SYSTEM SET synchronous_standby_names = ''")
    new.sql("SELECT pg_reload_conf()")
    out.notes.append(f"{new.name} promoted {ctx.clock() - t0:.1f} s after {old.name} was stopped")
    out.allowed_loss = 0
    out.window = "none (synchronous standby; DEL after commit)"


def instance_kill(ctx, out, struck):
    victim = ctx.topo.refgates[1]
    victim.kill9()
    struck(restarting=[victim.name])
    time.sleep(ctx.profile["down"])
    t0 = ctx.clock()
    victim.start()
    out.notes.append(f"{victim.name} ready {ctx.clock() - t0:.1f} s after its restart")
    out.allowed_loss = instance_window(ctx)
    out.window = "the killed instance's last aggregation window"


def rolling_restart(ctx, out, struck):
    struck(restarting=[r.name for r in ctx.topo.refgates])
    for r in ctx.topo.refgates:
        t0 = ctx.clock()
        rc = r.terminate()
        if rc != 0:
            out.errors.append(f"{r.name} exited {rc} on SIGTERM")
        r.start()
        out.notes.append(f"{r.name}: SIGTERM to ready again {ctx.clock() - t0:.1f} s")
    out.allowed_loss = 0
    out.window = "none (SIGTERM drains)"


def _admin(ctx, method, path, body=None, headers=None):
    r = ctx.topo.refgates[0]
    h = {"Authorization": f"Bearer {ctx.topo.token}"}
    h.update(headers or {})
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(r.admin_url() + path, data=data, method=method, headers=h)
    with urllib.request.urlopen(req, timeout=5) as resp:
        return resp.headers.get("ETag"), resp.read()


class _NoRedirect(urllib.request.HTTPErrorProcessor):
    def http_response(self, request, response):
        return response


def _served_code(instance):
    opener = urllib.request.build_opener(_NoRedirect)
    req = urllib.request.Request(f"{instance.public_url()}/go/{ROTATE_SLUG}", method="HEAD")
    try:
        with opener.open(req, timeout=1) as resp:
            return resp.headers.get("Location") or ""
    except OSError:
        return ""


def code_change(ctx, out, struck):
    struck()
    etag, _ = _admin(ctx, "GET", f"/api/v1/partners/{ROTATE_SLUG}")
    code = f"rotated{int(time.time() * 1000) % 10**9}"
    seen = {}
    t0 = time.monotonic()

    def poll(instance):
        while time.monotonic() - t0 < 10:
            if f"ref={code}" in _served_code(instance):
                seen[instance.name] = time.monotonic() - t0
                return
            time.sleep(0.01)

    pollers = [threading.Thread(target=poll, args=(r,)) for r in ctx.topo.refgates]
    for t in pollers:
        t.start()
    _admin(ctx, "PATCH", f"/api/v1/partners/{ROTATE_SLUG}", {"ref_code": code},
           {"Content-Type": "application/merge-patch+json", "If-Match": etag})
    for t in pollers:
        t.join(12)
    out.propagation = {r.name: seen.get(r.name) for r in ctx.topo.refgates}
    out.allowed_loss = 0
    out.window = "none (no fault to counting)"


FAULTS = [
    (1, "kill -9 of the Redis primary (Sentinel fails over)", redis_primary_kill),
    (2, "PostgreSQL primary stopped, standby promoted", pg_promote),
    (3, "kill -9 of one refgate instance, then its restart", instance_kill),
    (4, "rolling restart of all three (SIGTERM, drain, start)", rolling_restart),
    (5, "referral code changed through one instance's admin API", code_change),
]
