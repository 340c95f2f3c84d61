#!/usr/bin/env python3
"""The postback load test (issue 43): one Release refgate with a private PostgreSQL and Redis.
Redirects at a fixed rate are measured by wrk alone (A) and while a second wrk sends postbacks
(B), alternating A B A B; every postback is a new commission (a new order_id), committed before
its 204. Reports the medians, the ratio of the redirect p99 with postbacks to without, and checks
that PostgreSQL holds every commission whose postback was answered 204. Run through
tests/bench/postback.sh, which builds the binary and installs wrk.

With --pin (the default) the two CPUs are split the way production splits machines: CPU 0 has
refgate (its I/O thread and every thread but the blocking pool's and the lane's) and the
redirects' wrk; CPU 1 has PostgreSQL, Redis, the postbacks' wrk, refgate's blocking-pool threads
(`rg-blocking`, which do a postback's SHA-256, parsing and libpq work) and its blocking lane
(`rg-lane`, the I/O thread that serves a connection from its first postback on: its reads,
parsing, the pool's wake-ups and the answers' sends), pinned by thread id. --no-pin leaves the
scheduler to place everything on both CPUs, as before.

  tests/bench/postback.py --bin REFGATE_BIN [--rounds N] [--seconds S] ...
"""

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.dont_write_bytecode = True

# The fault matrices' harness package (tests/harness), through the link beside this file.
from harness.topology import ROOT, SetupError, Topology, pg_user_default  # noqa: E402

RESULTS = os.path.join(ROOT, "tests", "bench", "results")
PARTNER = "pb-partner"
BROWSER_UA = ("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
              "Chrome/131.0.0.0 Safari/537.36")
# The goals of issue 43.
MIN_POSTBACKS_PER_SECOND = 1000
MAX_P99_RATIO = 1.1
# The partner's rate limit for the run: above what the load sends, so that no postback is 429.
POSTBACK_RATE_SETTING = 5000

# Appended to both scripts (after their % formatting): the totals of every wrk thread.
RESULT_LINE = r"""
function done(summary, latency, requests)
  local e = summary.errors
  local answered, other = 0, 0
  for _, t in ipairs(threads) do
    answered = answered + (t:get("answered") or 0)
    other = other + (t:get("other") or 0)
  end
  io.write(string.format(
    'WRK_RESULT {"requests":%d,"duration_us":%d,"rps":%.1f,"p50_us":%d,"p90_us":%d,' ..
    '"p99_us":%d,"max_us":%d,"answered":%d,"other":%d,' ..
    '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d}}\n',
    summary.requests, summary.duration, summary.requests / (summary.duration / 1e6),
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max,
    answered, other, e.connect, e.read, e.write, e.status, e.timeout))
end
"""

# Redirects over the links, each wrk thread from its own offset; every connection waits
# delay_ms after each answer (a fixed rate rather than as fast as the server goes).
REDIRECT_LUA = r"""
local n = %(links)d
local delay_ms = %(delay)d
local requests = {}
local next_index = 1
threads = {}
local thread_id = 0

function setup(thread)
  thread:set("id", thread_id)
  thread_id = thread_id + 1
  table.insert(threads, thread)
end

function init(args)
  answered, other = 0, 0
  for i = 1, n do
    requests[i] = wrk.format("GET", string.format("/go/pb-%%d", i - 1))
  end
  next_index = ((id or 0) * 7919) %% n + 1
end

function request()
  local r = requests[next_index]
  next_index = next_index + 1
  if next_index > n then next_index = 1 end
  return r
end

function delay()
  return delay_ms
end

function response(status, headers, body)
  if status == 302 then answered = answered + 1 else other = other + 1 end
end
"""

# Postbacks, each with an order_id of its own (round prefix, wrk thread, count): every one
# creates a commission and its first history row in one transaction.
POSTBACK_LUA = r"""
local delay_ms = %(delay)d
local prefix = "%(prefix)s"
local query = "&subid=pbsub1&status=pending&amount=1.25&currency=EUR" ..
  "&occurred_at=2026-12-01T10%%3A00%%3A00Z&secret=%(secret)s"
threads = {}
local thread_id = 0

function setup(thread)
  thread:set("id", thread_id)
  thread_id = thread_id + 1
  table.insert(threads, thread)
end

function init(args)
  answered, other, sent = 0, 0, 0
end

function request()
  sent = sent + 1
  return wrk.format("GET", string.format("/postback/%(partner)s?order_id=%%s-%%d-%%d%%s",
                                         prefix, id, sent, query))
end

function delay()
  return delay_ms
end

function response(status, headers, body)
  if status == 204 then answered = answered + 1 else other = other + 1 end
end
"""


# --pin: the redirect path's CPU, and the CPU of what stands for other machines (PostgreSQL,
# Redis, the networks sending postbacks) and of refgate's blocking pool.
REDIRECT_CPU = 0
OTHER_CPU = 1
# The blocking pool's thread name and the blocking lane's (src/http/server.cpp,
# become_background_thread).
POOL_THREAD = "rg-blocking"
LANE_THREAD = "rg-lane"
# --background: the CPUs refgate's pool and lane may run on.
BACKGROUND_CPUS = {"other": {OTHER_CPU}, "any": {REDIRECT_CPU, OTHER_CPU}}


def tasks(pid):
    """The thread ids of process `pid`, with each one's name (/proc/<pid>/task/*/comm)."""
    found = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                found[int(tid)] = f.read().strip()
        except FileNotFoundError:
            pass  # the thread ended meanwhile
    return found


def pin_threads(pid, cpus, only=None):
    """Every thread of `pid` (or those named `only`) onto `cpus` (a CPU or a set of them); the
    threads pinned, by name. A thread a pinned one starts later inherits its CPUs."""
    cpus = {cpus} if isinstance(cpus, int) else set(cpus)
    pinned = []
    for tid, name in sorted(tasks(pid).items()):
        if only is not None and name != only:
            continue
        try:
            os.sched_setaffinity(tid, cpus)
        except ProcessLookupError:
            continue
        pinned.append(name)
    return pinned


def postgres_pids(pg):
    with open(os.path.join(pg.data, "postmaster.pid")) as f:
        postmaster = int(f.readline())
    children = subprocess.run(["pgrep", "-P", str(postmaster)], capture_output=True,
                              text=True).stdout.split()
    return [postmaster] + [int(c) for c in children]


def pin(pg, redis, refgate, background_cpus):
    """--pin: PostgreSQL (the postmaster, so every backend it forks later, and the processes it
    has now) and Redis onto OTHER_CPU; refgate onto REDIRECT_CPU but its blocking pool and its
    blocking lane onto `background_cpus`. Raises SetupError when the CPUs are not there or the
    pool's or the lane's threads are not found."""
    if not {REDIRECT_CPU, OTHER_CPU} <= os.sched_getaffinity(0):
        raise SetupError(f"--pin needs CPUs {REDIRECT_CPU} and {OTHER_CPU} (--no-pin otherwise)")
    for pid in postgres_pids(pg):
        pin_threads(pid, OTHER_CPU)
    pin_threads(redis.proc.pid, OTHER_CPU)
    pin_threads(refgate.proc.pid, REDIRECT_CPU)
    for name in (POOL_THREAD, LANE_THREAD):
        if not pin_threads(refgate.proc.pid, background_cpus, only=name):
            raise SetupError(f"no '{name}' thread in refgate (pid {refgate.proc.pid})")


def placement(pg, redis, refgate):
    """Where each thread may run now: {"refgate": {"<name>": [cpus...]}, ...}, for the record."""
    def of(pids):
        seen = {}
        for pid in pids:
            for tid, name in tasks(pid).items():
                try:
                    cpus = sorted(os.sched_getaffinity(tid))
                except ProcessLookupError:
                    continue
                key = f"{name} {cpus}"
                seen[key] = seen.get(key, 0) + 1
        return {k: seen[k] for k in sorted(seen)}
    return {"refgate": of([refgate.proc.pid]), "redis": of([redis.proc.pid]),
            "postgres": of(postgres_pids(pg))}


STORED_SQL = (f"SELECT count(*) FROM refgate_commissions c JOIN refgate_partners p "
              f"ON p.id = c.partner_id WHERE p.slug = '{PARTNER}'")


def documents(links):
    partner = {"slug": PARTNER, "name": "Postback bench partner", "ref_param": "ref",
               "ref_code": "pb1", "allowed_domains": ["www.example.com"], "extra_params": {},
               "subid_param": "subid"}
    rows = [{"slug": f"pb-{k}", "partner": PARTNER,
             "destination": f"https://www.example.com/pb/{k}", "status": "active"}
            for k in range(links)]
    return {"partners": [partner], "links": rows}


def start(topo, args):
    return topo.start_single(documents(args.links),
                             {"REFGATE_THREADS": str(args.threads),
                              "REFGATE_POSTBACK_RATE": str(POSTBACK_RATE_SETTING)})


def make_secret(topo, refgate):
    request = urllib.request.Request(
        f"{refgate.admin_url()}/api/v1/partners/{PARTNER}/postback-secret", method="POST",
        headers={"Authorization": f"Bearer {topo.token}"}, data=b"")
    with urllib.request.urlopen(request, timeout=10) as r:
        return json.loads(r.read())["secret"]


def wrk_command(script, connections, seconds, url, headers=(), cpu=None):
    cmd = ["timeout", "-k", "5", str(seconds + 20), "wrk", "-t", "1", "-c", str(connections),
           "-d", f"{seconds}s", "--timeout", "5s", "-s", script]
    for h in headers:
        cmd += ["-H", h]
    if cpu is not None:
        cmd = ["taskset", "-c", str(cpu)] + cmd
    return cmd + [url]


def parse_result(out, what):
    for line in out.splitlines():
        if line.startswith("WRK_RESULT "):
            return json.loads(line.split(" ", 1)[1])
    raise SetupError(f"no result from wrk ({what}): {out[-500:]}")


CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def io_cpu_seconds(refgate, named=None):
    """CPU time so far, (user + system, user), of refgate's threads that have no name of their
    own (`named` None): the I/O thread, which parses every request, and the main thread, which
    waits; or of the threads called `named` (LANE_THREAD: the blocking lane). In clock ticks'
    resolution (/proc/<pid>/task/<tid>/stat). User time is refgate's own code (parsing, hashing,
    JSON, logging, allocation); system time the kernel's (sockets, wake-ups)."""
    total = user = 0
    for tid, name in tasks(refgate.proc.pid).items():
        counted = name == named if named is not None else not name.startswith("rg-")
        if not counted:
            continue
        try:
            with open(f"/proc/{refgate.proc.pid}/task/{tid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except FileNotFoundError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime: fields 14 and 15 of stat
        user += int(fields[11])
    return total / CLOCK_TICKS, user / CLOCK_TICKS


def run_redirects(args, workdir, refgate):
    """The redirects' wrk run, with the I/O thread's CPU seconds over it (`io_cpu_s`) and the
    blocking lane's (`lane_cpu_s`)."""
    cpu = io_cpu_seconds(refgate)
    lane = io_cpu_seconds(refgate, LANE_THREAD)
    out = subprocess.run(
        wrk_command(os.path.join(workdir, "redirect.lua"), args.redirect_connections,
                    args.seconds, refgate.public_url(), [f"User-Agent: {BROWSER_UA}"],
                    REDIRECT_CPU if args.pin else None),
        capture_output=True, text=True)
    result = parse_result(out.stdout, "redirects")
    after = io_cpu_seconds(refgate)
    result["io_cpu_s"] = after[0] - cpu[0]
    result["io_user_s"] = after[1] - cpu[1]
    lane_after = io_cpu_seconds(refgate, LANE_THREAD)
    result["lane_cpu_s"] = lane_after[0] - lane[0]
    result["lane_user_s"] = lane_after[1] - lane[1]
    return result


def run_round(args, workdir, refgate, secret, index, with_postbacks):
    """One A (redirects alone) or B (redirects while postbacks arrive) run."""
    if not with_postbacks:
        return {"round": index, "case": "A", "redirect": run_redirects(args, workdir, refgate)}
    script = os.path.join(workdir, f"postback-{index}.lua")
    with open(script, "w") as f:
        f.write(POSTBACK_LUA % {"delay": args.postback_delay_ms, "prefix": f"r{index}",
                                "secret": secret, "partner": PARTNER} + RESULT_LINE)
    # The postbacks start a second before the redirects and end two after them.
    seconds = args.seconds + 3
    command = wrk_command(script, args.postback_connections, seconds, refgate.public_url(),
                          cpu=OTHER_CPU if args.pin else None)
    if args.postback_nice:
        # A diagnosis, not the goal's set-up: the load generator shares the cores with refgate.
        command = ["nice", "-n", str(args.postback_nice)] + command
    postbacks = subprocess.Popen(
        command,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        time.sleep(1.0)
        redirect = run_redirects(args, workdir, refgate)
        out, _ = postbacks.communicate(timeout=seconds + 30)
    finally:
        if postbacks.poll() is None:
            postbacks.kill()
            postbacks.wait()
    postback = parse_result(out, "postbacks")
    postback["per_second"] = postback["answered"] / (postback["duration_us"] / 1e6)
    return {"round": index, "case": "B", "redirect": redirect, "postback": postback}


def run(args, topo, workdir):
    pg, redis, refgate = start(topo, args)
    if args.pin:
        pin(pg, redis, refgate, BACKGROUND_CPUS[args.background])
    secret = make_secret(topo, refgate)
    with open(os.path.join(workdir, "redirect.lua"), "w") as f:
        delay = max(0, round(args.redirect_connections * 1000 / args.redirect_rate))
        f.write(REDIRECT_LUA % {"links": args.links, "delay": delay} + RESULT_LINE)
    # A warm-up of each kind, not counted.
    warm = argparse.Namespace(**{**vars(args), "seconds": 2})
    run_round(warm, workdir, refgate, secret, 0, False)
    run_round(warm, workdir, refgate, secret, 0, True)
    # After the warm-up: the commissions' connection pool opens its backends on the first
    # postbacks, and a backend started after a renice would keep nice 0.
    if args.deps_nice:
        topo.deprioritize(pg, redis)
    time.sleep(1.0)
    warm_stored = int(pg.sql(STORED_SQL)[0][0])
    # The backends the warm-up opened, and every thread, where they may run (the record shows
    # that the pinning held).
    threads = placement(pg, redis, refgate)
    print("placement: " + json.dumps(threads), file=sys.stderr, flush=True)
    runs = []
    deadline = time.monotonic() + args.budget
    for index in range(1, args.rounds + 1):
        for with_postbacks in (False, True):
            if time.monotonic() > deadline:
                raise SetupError(f"the time budget of {args.budget} s is used up")
            r = run_round(args, workdir, refgate, secret, index, with_postbacks)
            red = r["redirect"]
            line = (f"round {index} {r['case']}: redirects {red['rps']:.0f}/s, p50 "
                    f"{red['p50_us'] / 1000:.2f} ms, p99 {red['p99_us'] / 1000:.2f} ms, "
                    f"I/O thread CPU {red['io_cpu_s']:.2f} s ({red['io_user_s']:.2f} s user), "
                    f"lane {red['lane_cpu_s']:.2f} s")
            if with_postbacks:
                pb = r["postback"]
                line += (f"; postbacks {pb['per_second']:.0f}/s answered 204 "
                         f"({pb['other']} other, p99 {pb['p99_us'] / 1000:.1f} ms)")
            print(line, file=sys.stderr, flush=True)
            runs.append(r)
            time.sleep(1.0)
    time.sleep(1.0)
    stored = int(pg.sql(STORED_SQL)[0][0])
    # The warm-up's postbacks, and the ones in flight when its wrk stopped, are left out.
    return runs, stored - warm_stored, refgate.alive(), threads


def summarize(args, runs, stored, alive):
    """`stored`: the commissions of the measured rounds (the warm-up's taken off)."""
    a = [r["redirect"]["p99_us"] for r in runs if r["case"] == "A"]
    b = [r["redirect"]["p99_us"] for r in runs if r["case"] == "B"]
    rates = [r["postback"]["per_second"] for r in runs if r["case"] == "B"]
    answered = sum(r["postback"]["answered"] for r in runs if r["case"] == "B")
    other = sum(r["postback"]["other"] for r in runs if r["case"] == "B")
    failed_redirects = sum(r["redirect"]["other"] + sum(r["redirect"]["errors"].values())
                           for r in runs)
    s = {"p99_a_us": statistics.median(a), "p99_b_us": statistics.median(b),
         "p50_a_us": statistics.median(r["redirect"]["p50_us"] for r in runs if r["case"] == "A"),
         "p50_b_us": statistics.median(r["redirect"]["p50_us"] for r in runs if r["case"] == "B"),
         "redirects_per_second": statistics.median(r["redirect"]["rps"] for r in runs),
         "postbacks_per_second_median": statistics.median(rates),
         "postbacks_per_second_min": min(rates), "postbacks_204": answered,
         "postbacks_other": other, "commissions_stored": stored,
         "failed_redirects": failed_redirects}
    s["p99_ratio"] = s["p99_b_us"] / s["p99_a_us"]
    # What a postback costs the I/O thread, estimated: its CPU time per redirect alone (A), and
    # over B's redirect window what is left after the redirects' share, per postback answered in
    # that window (the postbacks' rate times its length). Clock-tick resolution: meaningful over
    # full rounds, not a smoke run's.
    a_runs = [r["redirect"] for r in runs if r["case"] == "A"]
    b_runs = [r for r in runs if r["case"] == "B"]
    per_redirect = (sum(r["io_cpu_s"] for r in a_runs)
                    / max(1, sum(r["requests"] for r in a_runs)))
    extra = sum(r["redirect"]["io_cpu_s"] - per_redirect * r["redirect"]["requests"]
                for r in b_runs)
    in_window = sum(r["postback"]["per_second"] * r["redirect"]["duration_us"] / 1e6
                    for r in b_runs)
    s["io_cpu_us_per_redirect"] = per_redirect * 1e6
    s["io_cpu_us_per_postback"] = extra / max(1.0, in_window) * 1e6
    user_per_redirect = (sum(r["io_user_s"] for r in a_runs)
                         / max(1, sum(r["requests"] for r in a_runs)))
    user_extra = sum(r["redirect"]["io_user_s"] - user_per_redirect * r["redirect"]["requests"]
                     for r in b_runs)
    s["io_user_us_per_redirect"] = user_per_redirect * 1e6
    s["io_user_us_per_postback"] = user_extra / max(1.0, in_window) * 1e6
    # The blocking lane serves the postbacks' connections (and nothing in A): all its CPU over
    # B's redirect window, per postback answered in it.
    s["lane_cpu_us_per_postback"] = (sum(r["redirect"]["lane_cpu_s"] for r in b_runs)
                                     / max(1.0, in_window) * 1e6)
    s["lane_user_us_per_postback"] = (sum(r["redirect"]["lane_user_s"] for r in b_runs)
                                      / max(1.0, in_window) * 1e6)
    problems = []
    if s["postbacks_per_second_median"] < MIN_POSTBACKS_PER_SECOND:
        problems.append(f"{s['postbacks_per_second_median']:.0f} postbacks a second (median), "
                        f"goal {MIN_POSTBACKS_PER_SECOND}")
    if s["p99_ratio"] > MAX_P99_RATIO:
        problems.append(f"redirect p99 ratio {s['p99_ratio']:.2f}, goal <= {MAX_P99_RATIO}")
    # wrk stops with a postback in flight on each connection: those are recorded, unseen.
    unseen = args.postback_connections * args.rounds
    if not answered <= stored <= answered + unseen:
        problems.append(f"{answered} postbacks answered 204 but {stored} commissions stored "
                        f"(expected {answered} to {answered + unseen})")
    if other:
        problems.append(f"{other} postbacks answered other than 204")
    if failed_redirects:
        problems.append(f"{failed_redirects} redirects failed or answered other than 302")
    if not alive:
        problems.append("refgate exited during the run")
    return s, problems


def load_average():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin", required=True, help="the refgate binary (Release)")
    parser.add_argument("--rounds", type=int, default=4, help="A B pairs")
    parser.add_argument("--seconds", type=int, default=10, help="per run")
    parser.add_argument("--links", type=int, default=1000)
    parser.add_argument("--threads", type=int, default=1, help="REFGATE_THREADS")
    parser.add_argument("--redirect-connections", type=int, default=8)
    parser.add_argument("--redirect-rate", type=int, default=1000,
                        help="about this many redirects a second (a wait per connection)")
    parser.add_argument("--postback-connections", type=int, default=32)
    parser.add_argument("--postback-delay-ms", type=int, default=25,
                        help="each postback connection's wait after an answer")
    parser.add_argument("--budget", type=int, default=600, help="seconds for all the rounds")
    parser.add_argument("--pin", dest="pin", action="store_true", default=True,
                        help=f"(the default) refgate and the redirects' wrk on CPU "
                             f"{REDIRECT_CPU}; PostgreSQL, Redis, the postbacks' wrk and "
                             f"refgate's blocking pool and lane on CPU {OTHER_CPU}")
    parser.add_argument("--no-pin", dest="pin", action="store_false",
                        help="place nothing: everything shares both CPUs (the old topology)")
    parser.add_argument("--background", choices=sorted(BACKGROUND_CPUS), default="other",
                        help="with --pin, where refgate's blocking pool and lane run: 'other' "
                             f"(the default: CPU {OTHER_CPU}, with PostgreSQL and the networks) "
                             "or 'any' (either CPU, as the kernel places them beside the I/O "
                             "thread at their background priority)")
    parser.add_argument("--deps-nice", dest="deps_nice", action="store_true", default=None,
                        help="PostgreSQL and Redis at nice 19 (the default without --pin)")
    parser.add_argument("--no-deps-nice", dest="deps_nice", action="store_false",
                        help="leave PostgreSQL and Redis at their priority (the default with "
                             "--pin: they have a CPU of their own)")
    parser.add_argument("--postback-nice", type=int, default=0,
                        help="run the postbacks' wrk at this nice value (0-19; a diagnosis of "
                             "what the redirect tail waits for)")
    args = parser.parse_args()
    if args.deps_nice is None:
        args.deps_nice = not args.pin
    if not (1 <= args.rounds <= 20 and 1 <= args.seconds <= 60 and 1 <= args.links <= 100000
            and 0 <= args.postback_nice <= 19):
        parser.error("--rounds 1-20, --seconds 1-60, --links 1-100000, --postback-nice 0-19")
    load_before = load_average()
    workdir = tempfile.mkdtemp(prefix="refgate-postback-bench-")
    topo = Topology(os.path.abspath(args.bin),
                    os.environ.get("REFGATE_TEST_PG_BINDIR", "/usr/lib/postgresql/15/bin"),
                    os.environ.get("REFGATE_TEST_PG_USER", pg_user_default()), workdir)
    started = datetime.datetime.utcnow()
    try:
        runs, stored, alive, threads = run(args, topo, workdir)
    except SetupError as e:
        print(f"postback bench: setup failed: {e} (logs in {workdir})", file=sys.stderr)
        return 2
    finally:
        topo.close()
    summary, problems = summarize(args, runs, stored, alive)
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip() or "unknown"
    meta = {"date": f"{started:%Y-%m-%d %H:%M} UTC", "commit": commit,
            "machine": f"{platform.machine()}, {os.cpu_count()} shared CPUs",
            "load_average_before": load_before, "load_average_after": load_average(),
            "settings": vars(args), "placement": threads,
            "postback_rate_setting": POSTBACK_RATE_SETTING}
    os.makedirs(RESULTS, exist_ok=True)
    with open(os.path.join(RESULTS, "postback.json"), "w") as f:
        json.dump({"meta": meta, "summary": summary, "problems": problems, "runs": runs}, f,
                  indent=2)
    verdict = "PASS" if not problems else "FAIL: " + "; ".join(problems)
    if not args.pin:
        topology = "not pinned"
    elif args.background == "other":
        topology = (f"pinned (CPU {REDIRECT_CPU}: refgate, redirects; CPU {OTHER_CPU}: "
                    f"PostgreSQL, Redis, postbacks, refgate's pool and lane)")
    else:
        topology = (f"pinned (CPU {REDIRECT_CPU}: refgate's I/O thread, redirects; CPU "
                    f"{OTHER_CPU}: PostgreSQL, Redis, postbacks; refgate's pool and lane on "
                    f"either)")
    print(f"- {meta['date']}, commit {commit}, {meta['machine']}, {topology}, load average "
          f"{load_before} before, {meta['load_average_after']} after: {verdict}")
    print(f"  - redirect p99 {summary['p99_a_us'] / 1000:.2f} ms alone (A), "
          f"{summary['p99_b_us'] / 1000:.2f} ms with postbacks (B): ratio "
          f"**{summary['p99_ratio']:.2f}** (medians of {args.rounds} runs each, A B alternating; "
          f"p50 {summary['p50_a_us'] / 1000:.2f} / {summary['p50_b_us'] / 1000:.2f} ms)")
    print(f"  - postbacks answered 204: {summary['postbacks_per_second_median']:.0f}/s median, "
          f"{summary['postbacks_per_second_min']:.0f}/s lowest; {summary['postbacks_204']} in "
          f"all, {summary['commissions_stored']} commissions stored; redirects "
          f"{summary['redirects_per_second']:.0f}/s")
    print(f"  - refgate's I/O thread CPU: {summary['io_cpu_us_per_redirect']:.1f} us a redirect "
          f"(A; {summary['io_user_us_per_redirect']:.1f} us user), about "
          f"{summary['io_cpu_us_per_postback']:.1f} us a postback (B's rest; "
          f"{summary['io_user_us_per_postback']:.1f} us user; clock-tick resolution); its "
          f"blocking lane's: {summary['lane_cpu_us_per_postback']:.1f} us a postback "
          f"({summary['lane_user_us_per_postback']:.1f} us user)")
    if not problems:
        subprocess.run(["rm", "-rf", workdir])
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
