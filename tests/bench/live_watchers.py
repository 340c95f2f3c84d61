#!/usr/bin/env python3
"""The live endpoint under watchers (issue 45), driven by tests/bench/live_watchers.sh.

Alternates rounds without and with WATCHERS editors polling GET /api/v1/stats/live (each once a
second, a third of the console's 3 s: a harder case) while wrk sends the same redirect load, and
reports refgate's CPU per redirect in each (utime + stime of the whole process, watchers' answers
included), their ratio, the live answers' latency and Redis' CPU. Everything on 127.0.0.1; every
loop is bounded in count and in time.
"""
import argparse
import http.client
import json
import os
import re
import statistics
import subprocess
import sys
import threading
import time

CLK_TCK = os.sysconf("SC_CLK_TCK")


def process_cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def redis_cpu_seconds(port):
    out = subprocess.run(["redis-cli", "-h", "127.0.0.1", "-p", str(port), "INFO", "cpu"],
                         capture_output=True, text=True, timeout=10).stdout
    values = dict(line.split(":", 1) for line in out.splitlines() if ":" in line)
    return float(values["used_cpu_sys"]) + float(values["used_cpu_user"])


class Watcher(threading.Thread):
    """One editor's console: GET /api/v1/stats/live every `interval` s over keep-alive."""

    def __init__(self, admin_port, token, interval, stop, deadline):
        super().__init__(daemon=True)
        self.admin_port, self.token, self.interval = admin_port, token, interval
        self.stop, self.deadline = stop, deadline
        self.latencies, self.errors, self.links_seen = [], 0, 0

    def run(self):
        conn = http.client.HTTPConnection("127.0.0.1", self.admin_port, timeout=5)
        headers = {"Authorization": f"Bearer {self.token}"}
        # Bounded: at most one request per interval until stopped or past the deadline.
        while not self.stop.is_set() and time.monotonic() < self.deadline:
            started = time.monotonic()
            try:
                conn.request("GET", "/api/v1/stats/live", headers=headers)
                response = conn.getresponse()
                body = response.read()
                if response.status != 200:
                    self.errors += 1
                else:
                    self.latencies.append(time.monotonic() - started)
                    self.links_seen = max(self.links_seen, len(json.loads(body)["links"]))
            except (OSError, http.client.HTTPException):
                self.errors += 1
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", self.admin_port, timeout=5)
            self.stop.wait(max(0.0, self.interval - (time.monotonic() - started)))
        conn.close()


def wrk_round(public_url, seconds, connections, script):
    out = subprocess.run(["wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "-s", script, public_url],
                         capture_output=True, text=True, timeout=seconds + 30).stdout
    match = re.search(r"(\d+) requests in", out)
    if not match:
        sys.exit(f"wrk printed no request count:\n{out}")
    return int(match.group(1))


def one_round(args, watchers):
    stop = threading.Event()
    deadline = time.monotonic() + args.seconds + 5
    threads = [Watcher(args.admin_port, args.token, args.interval, stop, deadline) for _ in range(watchers)]
    for t in threads:
        t.start()
    if watchers:
        time.sleep(1.0)  # every watcher polling before the measured part
    cpu0, redis0, wall0 = process_cpu_seconds(args.pid), redis_cpu_seconds(args.redis_port), time.monotonic()
    requests = wrk_round(args.public_url, args.seconds, args.connections, args.script)
    cpu1, redis1, wall1 = process_cpu_seconds(args.pid), redis_cpu_seconds(args.redis_port), time.monotonic()
    stop.set()
    for t in threads:
        t.join(timeout=10)
    latencies = sorted(x for t in threads for x in t.latencies)
    return {
        "watchers": watchers,
        "redirects": requests,
        "redirects_per_s": requests / (wall1 - wall0),
        "cpu_us_per_redirect": (cpu1 - cpu0) / requests * 1e6,
        "redis_cpu_ms_per_s": (redis1 - redis0) / (wall1 - wall0) * 1e3,
        "live_answers": len(latencies),
        "live_errors": sum(t.errors for t in threads),
        "live_p50_ms": latencies[len(latencies) // 2] * 1e3 if latencies else None,
        "live_p99_ms": latencies[int(len(latencies) * 0.99)] * 1e3 if latencies else None,
        "live_links_max": max((t.links_seen for t in threads), default=0),
    }


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--pid", type=int, required=True)
    p.add_argument("--public-url", required=True)
    p.add_argument("--admin-port", type=int, required=True)
    p.add_argument("--redis-port", type=int, required=True)
    p.add_argument("--token", required=True)
    p.add_argument("--script", required=True)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--watchers", type=int, default=50)
    p.add_argument("--interval", type=float, default=1.0)
    p.add_argument("--seconds", type=int, default=10)
    p.add_argument("--connections", type=int, default=16)
    p.add_argument("--json", required=True)
    args = p.parse_args()
    if not 1 <= args.rounds <= 20 or not 1 <= args.seconds <= 120 or not 0 <= args.watchers <= 200:
        sys.exit("rounds 1-20, seconds 1-120, watchers 0-200")

    wrk_round(args.public_url, 2, args.connections, args.script)  # warm-up
    runs = []
    for r in range(args.rounds):
        for watchers in (0, args.watchers):
            result = one_round(args, watchers)
            result["round"] = r + 1
            runs.append(result)
            print(json.dumps(result), file=sys.stderr)

    def median(key, watchers):
        return statistics.median(x[key] for x in runs if x["watchers"] == watchers)

    without = median("cpu_us_per_redirect", 0)
    with_w = median("cpu_us_per_redirect", args.watchers)
    w = [x for x in runs if x["watchers"] == args.watchers]
    summary = {
        "load_average": open("/proc/loadavg").read().split()[:3],
        "watchers": args.watchers,
        "poll_interval_s": args.interval,
        "cpu_us_per_redirect_without": without,
        "cpu_us_per_redirect_with": with_w,
        "ratio": with_w / without,
        "redirects_per_s_without": median("redirects_per_s", 0),
        "redirects_per_s_with": median("redirects_per_s", args.watchers),
        "redis_cpu_ms_per_s_without": median("redis_cpu_ms_per_s", 0),
        "redis_cpu_ms_per_s_with": median("redis_cpu_ms_per_s", args.watchers),
        "live_answers_per_s": statistics.median(x["live_answers"] for x in w) / args.seconds,
        "live_p50_ms": statistics.median(x["live_p50_ms"] for x in w if x["live_p50_ms"] is not None),
        "live_p99_ms": max(x["live_p99_ms"] for x in w if x["live_p99_ms"] is not None),
        "live_errors": sum(x["live_errors"] for x in w),
        "runs": runs,
    }
    with open(args.json, "w") as f:
        json.dump(summary, f, indent=2)
    print("| | without watchers | with %d watchers |" % args.watchers)
    print("|---|---|---|")
    print("| refgate CPU per redirect (µs, median of %d rounds) | %.2f | %.2f |" % (args.rounds, without, with_w))
    print("| ratio with / without | | %.3f |" % summary["ratio"])
    print("| redirects/s (wrk, %d connections) | %.0f | %.0f |" % (
        args.connections, summary["redirects_per_s_without"], summary["redirects_per_s_with"]))
    print("| Redis CPU (ms per s) | %.1f | %.1f |" % (
        summary["redis_cpu_ms_per_s_without"], summary["redis_cpu_ms_per_s_with"]))
    print("| live answers per s; p50 / max p99 (ms); errors | | %.1f; %.2f / %.2f; %d |" % (
        summary["live_answers_per_s"], summary["live_p50_ms"], summary["live_p99_ms"], summary["live_errors"]))


if __name__ == "__main__":
    main()
