#!/usr/bin/env python3
"""The soak (issue 21): one Release refgate with a private PostgreSQL and Redis under a fixed
request rate for N minutes, rotating over many links, the partner's referral code changed every
few seconds through the admin API and /metrics scraped every second. Samples every second the
refgate's RSS and open file descriptors (/proc), Redis' used_memory and PostgreSQL's row counts;
writes a CSV and a plot, and fails when RSS or fds grow after the warm-up or when PostgreSQL's
final total differs from the clicks the client saw. Run through tests/bench/soak.sh, which builds
the binary and installs gnuplot.

  tests/bench/soak.py --minutes N [--rate R] [--links L] REFGATE_BIN
"""

import argparse
import csv
import datetime
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import types

sys.dont_write_bytecode = True

# The fault matrices' harness package (tests/harness), through the link beside this file.
from harness.faults import _admin  # noqa: E402
from harness.load import Load  # noqa: E402
from harness.topology import ROOT, SetupError, Topology, pg_user_default  # noqa: E402

RESULTS = os.path.join(ROOT, "tests", "bench", "results")
PARTNER = "soak-partner"
# Tolerances after the warm-up (the first WARMUP_FRACTION of the run, at least 60 s): RSS may
# grow by RSS_TOLERANCE of its post-warm-up level plus RSS_SLACK_KIB (allocator arenas and the
# page cache of the snapshot file settle in steps of a few hundred KiB; a leak of one allocation
# per request at 1,000 req/s would add tens of MiB in 30 minutes); fds by FD_SLACK (a scrape or
# an admin call in flight at the sample).
WARMUP_FRACTION = 0.2
RSS_TOLERANCE = 0.05
RSS_SLACK_KIB = 4096
FD_SLACK = 4


def documents(links):
    partner = {"slug": PARTNER, "name": "Soak partner", "ref_param": "ref", "ref_code": "c0",
               "allowed_domains": ["www.example.com"], "extra_params": {}}
    rows = [{"slug": f"soak-{k}", "partner": PARTNER,
             "destination": f"https://www.example.com/soak/{k}", "status": "active"}
            for k in range(links)]
    return {"partners": [partner], "links": rows}


def proc_sample(pid):
    with open(f"/proc/{pid}/status") as f:
        rss = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
    return rss, len(os.listdir(f"/proc/{pid}/fd"))


def redis_memory(redis):
    for line in redis.cli("info", "memory").splitlines():
        if line.startswith("used_memory:"):
            return int(line.split(":")[1])
    return -1


class CodeRotator(threading.Thread):
    """PATCHes the partner's referral code every `every` seconds until stopped."""

    def __init__(self, ctx, every):
        super().__init__(daemon=True)
        self.ctx, self.every = ctx, every
        self.changes, self.errors = 0, []
        self.stopping = threading.Event()

    def run(self):
        while not self.stopping.wait(self.every):
            try:
                etag, _ = _admin(self.ctx, "GET", f"/api/v1/partners/{PARTNER}")
                _admin(self.ctx, "PATCH", f"/api/v1/partners/{PARTNER}",
                       {"ref_code": f"c{self.changes + 1}"},
                       {"Content-Type": "application/merge-patch+json", "If-Match": etag})
                self.changes += 1
            except OSError as e:
                self.errors.append(str(e))


def start(topo, args):
    return topo.start_single(documents(args.links))


def sample_loop(t0, until, refgate, redis, pg, load, rows, stop):
    while not stop.is_set() and time.monotonic() < until:
        tick = time.monotonic()
        rss, fds = proc_sample(refgate.proc.pid)
        scraped = refgate.metric("refgate_http_requests_total")
        counts = pg.sql("SELECT (SELECT count(*) FROM refgate_click_counts), "
                        "(SELECT count(*) FROM refgate_flushed_buckets), "
                        "(SELECT coalesce(sum(human), 0) FROM refgate_click_counts)")[0]
        rows.append({"seconds": round(tick - t0, 1), "rss_kib": rss, "fds": fds,
                     "redis_used_memory": redis_memory(redis),
                     "pg_click_count_rows": int(counts[0]), "pg_flushed_buckets": int(counts[1]),
                     "pg_human_clicks": int(counts[2]), "client_sent": load.total_sent(),
                     "scrape_ok": int(scraped is not None)})
        stop.wait(max(0.0, 1.0 - (time.monotonic() - tick)))


def growth(rows, key, warmup_s):
    """Median of `key` over the minute after the warm-up and over the last minute."""
    after = [r[key] for r in rows if warmup_s <= r["seconds"] < warmup_s + 60]
    last_at = rows[-1]["seconds"]
    last = [r[key] for r in rows if r["seconds"] >= last_at - 60]
    return statistics.median(after), statistics.median(last)


def final_count(topo, pg):
    time.sleep(1.0)  # the sender's last rounds
    topo.run_refgate("flush", timeout=60)
    return int(pg.sql("SELECT coalesce(sum(clicks), 0) FROM refgate_clicks_daily "
                      "WHERE class = 'human' AND link LIKE 'soak-%'")[0][0])


def plot(csv_path, png_path, title):
    script = f"""
set datafile separator ','
set terminal pngcairo size 1200,900 font ',10'
set output '{png_path}'
set multiplot layout 3,1 title '{title}' noenhanced
set xlabel 'seconds'
set key bottom right noenhanced
set yrange [0:*]
set ylabel 'MiB'
plot '{csv_path}' using 1:($2/1024) every ::1 with lines title 'refgate RSS', \\
     '' using 1:($4/1048576) every ::1 with lines title 'Redis used_memory'
set ylabel 'open fds'
plot '{csv_path}' using 1:3 every ::1 with lines title 'refgate fds'
set ylabel 'rows'
plot '{csv_path}' using 1:5 every ::1 with lines title 'refgate_click_counts rows', \\
     '' using 1:6 every ::1 with lines title 'refgate_flushed_buckets rows'
unset multiplot
"""
    subprocess.run(["gnuplot"], input=script, text=True, check=True)


def run(args, topo):
    pg, redis, refgate = start(topo, args)
    ctx = types.SimpleNamespace(topo=topo)
    seconds = args.minutes * 60
    t0 = time.monotonic()
    load = Load(refgate.address, refgate.port, [f"soak-{k}" for k in range(args.links)],
                args.rate, args.threads, seconds, lambda: time.monotonic() - t0)
    rotator = CodeRotator(ctx, args.code_every)
    rows, stop = [], threading.Event()
    load.start()
    rotator.start()
    try:
        sample_loop(t0, t0 + seconds, refgate, redis, pg, load, rows, stop)
    finally:
        rotator.stopping.set()
        load.stop()
    elapsed = time.monotonic() - t0
    sent = load.total_sent()
    counted = final_count(topo, pg)
    return rows, {"sent": sent, "counted": counted, "failures": len(load.failures),
                  "code_changes": rotator.changes, "admin_errors": rotator.errors[:5],
                  "elapsed": elapsed, "alive": refgate.alive()}


def verdict(rows, outcome, args):
    warmup = max(60.0, WARMUP_FRACTION * args.minutes * 60)
    problems = []
    rss0, rss1 = growth(rows, "rss_kib", warmup)
    fd0, fd1 = growth(rows, "fds", warmup)
    if rss1 > rss0 * (1 + RSS_TOLERANCE) + RSS_SLACK_KIB:
        problems.append(f"RSS grew after the warm-up: {rss0:.0f} -> {rss1:.0f} KiB")
    if fd1 > fd0 + FD_SLACK:
        problems.append(f"open fds grew after the warm-up: {fd0:.0f} -> {fd1:.0f}")
    if outcome["counted"] != outcome["sent"]:
        problems.append(f"PostgreSQL counted {outcome['counted']} human clicks, "
                        f"the client saw {outcome['sent']} redirects")
    if outcome["failures"]:
        problems.append(f"{outcome['failures']} failed redirects")
    if not outcome["alive"]:
        problems.append("refgate exited during the soak")
    scrapes = sum(r["scrape_ok"] for r in rows)
    if scrapes < len(rows):
        problems.append(f"{len(rows) - scrapes} of {len(rows)} scrapes of /metrics failed")
    summary = {"warmup": warmup, "rss": (rss0, rss1), "fds": (fd0, fd1),
               "redis": growth(rows, "redis_used_memory", warmup), "scrapes": scrapes}
    return problems, summary


def write_results(rows, outcome, problems, summary, args):
    stem = os.path.join(RESULTS, "soak")
    with open(stem + ".csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        writer.writeheader()
        writer.writerows(rows)
    title = (f"refgate soak: {args.minutes} min at {args.rate} req/s over {args.links} links")
    plot(stem + ".csv", stem + ".png", title)
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip() or "unknown"
    rate = outcome["sent"] / outcome["elapsed"]
    lines = [
        f"- {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC, commit {commit}, "
        f"{platform.machine()} ({os.cpu_count()} shared CPUs): "
        f"{'PASS' if not problems else 'FAIL: ' + '; '.join(problems)}",
        f"  - {args.minutes} min, target {args.rate} req/s (achieved {rate:.0f}) over "
        f"{args.links} links, {args.threads} keep-alive connections; code changed "
        f"{outcome['code_changes']} times (every {args.code_every} s); "
        f"{summary['scrapes']} scrapes of /metrics",
        f"  - sent {outcome['sent']}, counted {outcome['counted']} (exact), "
        f"failed redirects {outcome['failures']}",
        f"  - after the {summary['warmup']:.0f} s warm-up, first minute -> last minute "
        f"(medians): RSS {summary['rss'][0] / 1024:.1f} -> {summary['rss'][1] / 1024:.1f} MiB, "
        f"fds {summary['fds'][0]:.0f} -> {summary['fds'][1]:.0f}, Redis used_memory "
        f"{summary['redis'][0] / 1048576:.2f} -> {summary['redis'][1] / 1048576:.2f} MiB; "
        f"refgate_click_counts rows {rows[-1]['pg_click_count_rows']} at the end",
    ]
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=30)
    parser.add_argument("--rate", type=int, default=1000, help="requests per second")
    parser.add_argument("--links", type=int, default=1000)
    parser.add_argument("--threads", type=int, default=8, help="keep-alive connections")
    parser.add_argument("--code-every", type=float, default=3.0, help="seconds")
    parser.add_argument("refgate")
    args = parser.parse_args()
    workdir = tempfile.mkdtemp(prefix="refgate-soak-")
    topo = Topology(os.path.abspath(args.refgate),
                    os.environ.get("REFGATE_TEST_PG_BINDIR", "/usr/lib/postgresql/15/bin"),
                    os.environ.get("REFGATE_TEST_PG_USER", pg_user_default()), workdir)
    try:
        rows, outcome = run(args, topo)
    except SetupError as e:
        print(f"soak: setup failed: {e} (logs in {workdir})", file=sys.stderr)
        return 2
    finally:
        topo.close()
    problems, summary = verdict(rows, outcome, args)
    text = write_results(rows, outcome, problems, summary, args)
    print(text)
    with open(os.path.join(RESULTS, "soak.md"), "a") as f:
        f.write(text + "\n")
    if not problems:
        subprocess.run(["rm", "-rf", workdir])
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
