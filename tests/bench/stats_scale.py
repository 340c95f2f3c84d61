#!/usr/bin/env python3
"""Helpers of tests/bench/stats_scale.sh (issue 41): times the stats API's answers over one
keep-alive connection, writes click buckets into Redis the way the click sender leaves them, and
prints the report. Standard library only; every loop is bounded in count and in time."""

import argparse
import datetime
import http.client
import json
import statistics
import sys
import time


def cmd_answers(args):
    # Cases are timed round-robin (run 1 of every case, then run 2, ...) so that a slow moment
    # of this shared machine spreads over all of them instead of one.
    with open(args.cases) as f:
        cases = json.load(f)
    deadline = time.monotonic() + args.budget
    conn = http.client.HTTPConnection("127.0.0.1", args.port, timeout=args.budget)
    times = {c["name"]: [] for c in cases}
    cut = {c["name"]: 0 for c in cases}
    status = {}
    sizes = {}
    for run in range(args.warmup + args.runs):
        if time.monotonic() > deadline:
            break
        for c in cases:
            if cut[c["name"]]:
                continue  # the admin listener closed it once: it takes too long
            headers = {"Authorization": "Bearer " + args.token, "Accept": c.get("accept", "application/json")}
            start = time.perf_counter()
            try:
                conn.request("GET", c["target"], headers=headers)
                r = conn.getresponse()
                body = r.read()
            except (http.client.HTTPException, ConnectionError) as e:
                if not args.tolerate_cuts:
                    sys.exit("%s: %s: %r" % (c["name"], c["target"], e))
                cut[c["name"]] = time.perf_counter() - start
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", args.port, timeout=args.budget)
                continue
            took = time.perf_counter() - start
            if r.status == 503 and args.tolerate_cuts:
                # The admin API gave up waiting for PostgreSQL: what editors would see.
                cut[c["name"]] = took
                status[c["name"]] = r.status
                continue
            if r.status != 200:
                sys.exit("%s: %s answered %d: %s" % (c["name"], c["target"], r.status, body[:300]))
            if run >= args.warmup:
                times[c["name"]].append(took * 1000)
            sizes[c["name"]] = len(body)
    out = []
    for c in cases:
        t = times[c["name"]]
        if cut[c["name"]]:
            out.append({"name": c["name"], "target": c["target"], "runs": 0,
                        "cut_after_ms": cut[c["name"]] * 1000,
                        "status": status.get(c["name"], "closed")})
        elif t:
            out.append({"name": c["name"], "target": c["target"], "runs": len(t),
                        "median_ms": statistics.median(t), "min_ms": min(t), "max_ms": max(t),
                        "bytes": sizes[c["name"]]})
    json.dump(out, sys.stdout)


def resp(*parts):
    out = ["*%d\r\n" % len(parts)]
    for p in parts:
        b = str(p)
        out.append("$%d\r\n%s\r\n" % (len(b.encode()), b))
    return "".join(out)


def cmd_fill(args):
    # Buckets as ClickSender leaves them (hash refgate:bucket:<id>, a "batch:<id>" field of lines
    # "link|YYYY-MM-DD|channel|class clicks", the id in refgate:buckets, refgate:bucket:last),
    # ids an hour in the past so that `refgate flush` closes them all. A bucket holds what a
    # busy publisher's links get in 10 s: consecutive links (from --first, wrapping at --last),
    # each with human clicks on its three channels and bot clicks on one, on --day (default today).
    now = int(time.time())
    # Each fill of a run its own ids (--seq), so that none is taken for one already flushed.
    newest = now - now % 10 - 3600 - args.seq * 100_000
    day = args.day or datetime.date.today().isoformat()
    counters = [("direct", "human"), ("newsletter", "human"), ("social", "human"), ("direct", "bot")]
    span = args.last - args.first + 1
    link = args.first + args.offset % span
    ids = []
    out = sys.stdout
    for b in range(args.buckets):
        bucket = newest - (args.buckets - 1 - b) * 10
        ids.append(bucket)
        lines = []
        n = 0
        while n < args.per_bucket:
            for channel, cls in counters:
                if n == args.per_bucket:
                    break
                lines.append("%d|%s|%s|%s %d\n" % (link, day, channel, cls, 1 + (link + n) % 3))
                n += 1
            link = args.first + (link - args.first + 1) % span
        out.write(resp("HSET", "refgate:bucket:%d" % bucket, "batch:stats-bench:%d" % b, "".join(lines)))
        out.write(resp("SADD", "refgate:buckets", bucket))
    out.write(resp("SET", "refgate:bucket:last", max(ids)))


def cmd_report(args):
    with open(args.results) as f:
        r = json.load(f)
    lines = []
    goal_ratio, goal_ms = r["goal_ratio"], r["goal_ms"]
    for size in r["sizes"]:
        after = {a["name"]: a for a in size["rollups"]}
        before = {a["name"]: a for a in size.get("base", [])}
        unit = after["link year"]["median_ms"]
        base_unit = before.get("link year", {}).get("median_ms")
        lines.append("%s links x %s days x 3 channels (%s rows in refgate_click_counts); roll-ups "
                     "built by `refgate migrate` in %.1f s, %d batches, the longest %d ms"
                     % (format(size["links"], ","), size["days"], format(size["rows"], ","),
                        size["build_seconds"], size["batches"], size["max_batch_ms"]))
        lines.append("")
        lines.append("| answer | median ms | ratio to link year | goal | before (base table) ms | before ratio |")
        lines.append("|---|---:|---:|---|---:|---:|")
        for name in [a["name"] for a in size["rollups"]]:
            a = after[name]
            ratio = a["median_ms"] / unit
            ok = ratio <= goal_ratio and a["median_ms"] < goal_ms
            b = before.get(name)
            if b and "cut_after_ms" in b:
                how = "%s" % b.get("status", "closed")
                b_ms, b_ratio = "%s after %.1f s" % (how, b["cut_after_ms"] / 1000), "-"
            else:
                b_ms = "%.1f" % b["median_ms"] if b else "-"
                b_ratio = "%.1fx" % (b["median_ms"] / base_unit) if b and base_unit else "-"
            lines.append("| %s | %.1f | %.1fx | %s | %s | %s |" % (
                name, a["median_ms"], ratio, "ok" if ok else "MISSED", b_ms, b_ratio))
        lines.append("")
    flush = r.get("flush")
    if flush:
        lines.append("flush: `refgate flush` wall time, median of %d alternating runs each, into the "
                     "%s-link database (fsync on)" % (flush["runs"], format(flush["links"], ",")))
        lines.append("")
        lines.append("| case | this tree ms | %s (no roll-ups) ms | ratio | goal |" % flush["baseline"])
        lines.append("|---|---:|---:|---:|---|")
        for c in flush["cases"]:
            ratio = c["this_ms"] / c["baseline_ms"]
            lines.append("| %s | %.0f | %.0f | %.2fx | %s |" % (
                c["case"], c["this_ms"], c["baseline_ms"], ratio, "ok" if ratio <= 1.3 else "MISSED"))
        lines.append("")
    for note in r.get("notes", []):
        lines.append("- " + note)
    print("\n".join(lines))


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("answers")
    a.add_argument("--port", type=int, required=True)
    a.add_argument("--token", required=True)
    a.add_argument("--cases", required=True)
    a.add_argument("--runs", type=int, default=7)
    a.add_argument("--warmup", type=int, default=1)
    a.add_argument("--budget", type=float, default=600)
    a.add_argument("--tolerate-cuts", action="store_true",
                   help="an answer the server closes the connection on is reported, not fatal")
    a.set_defaults(func=cmd_answers)
    f = sub.add_parser("fill")
    f.add_argument("--buckets", type=int, required=True)
    f.add_argument("--per-bucket", type=int, required=True)
    f.add_argument("--first", type=int, required=True)
    f.add_argument("--last", type=int, required=True)
    f.add_argument("--offset", type=int, default=0)
    f.add_argument("--seq", type=int, default=0)
    f.add_argument("--day", help="the counts' UTC day, YYYY-MM-DD (default: today)")
    f.set_defaults(func=cmd_fill)
    r = sub.add_parser("report")
    r.add_argument("results")
    r.set_defaults(func=cmd_report)
    args = p.parse_args()
    args.func(args)


if __name__ == "__main__":
    main()
