"""The matrix's Markdown table, and the long form's results file with its history."""

import os

from .topology import ROOT

RESULTS = os.path.join(ROOT, "tests", "bench", "results", "ha-fault-matrix.md")
HISTORY = "## History"

DEFINITIONS = """\
- *failed redirects*: requests through HAProxy that got no 302 (a connection error or another
  status), as the clients saw them.
- *sent*: 302s the clients got; *counted*: human clicks in PostgreSQL (`refgate_clicks_daily`)
  for the fault's own links after the final `refgate flush`; *lost* and *over-counted* are
  summed per link (a link's surplus never offsets another's loss).
- *allowed loss*: the documented window for the fault (docs/high-availability.md).
- *resumed: Redis*: seconds from the fault until every running instance had a send round
  confirmed by Redis after it (`refgate_click_batches_sent_total` rises; a restarted instance's
  first round). *resumed: PostgreSQL*: seconds from the fault until PostgreSQL counted more of
  the fault's clicks than the clients had seen at the fault, i.e. a click answered after the
  fault was in PostgreSQL.
- *code propagation*: seconds from sending the admin `PATCH` to one instance until each
  instance's own public listener answered `HEAD /go/ha-rotate` with the new code (target 1 s).
"""


_HA_SETUP = ("3 refgate instances (1 thread each) behind HAProxy; Redis `{scheme}://` "
             "(WAIT for {wait} replica); PostgreSQL primary + synchronous standby.")


def _failed(o):
    """The failed redirects; those while the only instance was down are said apart."""
    if not o.excused:
        return str(len(o.failures))
    return f"{len(o.failures)} ({len(o.failures) - len(o.unexcused_failures())} while down)"


def _seconds(value):
    return "never" if value is None else f"{value:.2f} s"


def render(outcomes, meta):
    p = meta["profile"]
    lines = [
        f"### Fault matrix, {meta['form']} form: {meta['date']}, commit {meta['commit']}",
        "",
        f"Machine: {meta['machine']}. " + (meta.get("setup") or _HA_SETUP.format(
            scheme=meta["redis_url"].split("://")[0], wait=meta["wait"])) +
        f" Load: {p['rate']} clicks/s over "
        f"{p['threads']} keep-alive connections, {p['links']} links per fault; "
        f"{p['before']} s before each fault. Whole run: {meta['seconds']:.0f} s.",
        "",
        "| # | fault | failed redirects | sent | counted | lost | allowed loss (window) "
        "| over-counted | resumed: Redis | resumed: PostgreSQL | result |",
        "|---|---|---:|---:|---:|---:|---|---:|---:|---:|---|",
    ]
    for o in outcomes:
        if o.skipped:
            lines.append(f"| {o.number} | {o.title} | | | | | | | | | SKIPPED: {o.skipped} |")
            continue
        lines.append(
            f"| {o.number} | {o.title} | {_failed(o)} | {o.sent} | {o.counted} | {o.lost} "
            f"| {o.allowed_loss} ({o.window}) | {o.over} | {_seconds(o.resume_redis)} "
            f"| {_seconds(o.resume_pg)} | {'PASS' if o.passed() else '**FAIL**'} |")
    for o in outcomes:
        if o.propagation:
            lines += ["", f"Code propagation (fault {o.number}), per instance:", "",
                      "| instance | new code served after |", "|---|---:|"]
            lines += [f"| {name} | {_seconds(v)} |" for name, v in o.propagation.items()]
    details = []
    for o in outcomes:
        for note in o.notes + o.errors:
            details.append(f"- fault {o.number}: {note}")
        for f in o.unexcused_failures()[:10]:
            details.append(f"- fault {o.number}: failed redirect at {f.at:.2f} s: "
                           f"/go/{f.link}: {f.what}")
        if len(o.unexcused_failures()) > 10:
            details.append(f"- fault {o.number}: ... "
                           f"{len(o.unexcused_failures()) - 10} more failures")
        for link, s, c in o.per_link:
            if s != c:
                details.append(f"- fault {o.number}: {link}: sent {s}, counted {c}")
    if details:
        lines += ["", "Notes:", ""] + details
    lines += ["", "Definitions:", "", meta.get("definitions", DEFINITIONS)]
    return "\n".join(lines)


HA_HEAD = ("# HA fault matrix: latest long run\n\n"
           "Written by `tests/ha/fault_matrix.py --long` (docs/high-availability.md); "
           "the table below is the latest run, the history keeps one line per run.\n\n")


def write_long_results(text, meta, outcomes, path=RESULTS, head=HA_HEAD):
    """Replaces the latest table in the results file and appends a line to its history."""
    history = []
    if os.path.exists(path):
        with open(path) as f:
            content = f.read()
        if HISTORY in content:
            history = [line for line in content.split(HISTORY, 1)[1].splitlines()
                       if line.startswith("- ")]
    failed = [str(o.number) for o in outcomes if not o.passed()]
    skipped = [str(o.number) for o in outcomes if o.skipped]
    verdict = f"FAILED faults {', '.join(failed)}" if failed else "every fault passed"
    if skipped:
        verdict += f", faults {', '.join(skipped)} skipped"
    history.append(f"- {meta['date']}, commit {meta['commit']}, {meta['machine']}: {verdict} "
                   f"({meta['seconds']:.0f} s, {meta['profile']['rate']} clicks/s)")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(head + text.rstrip() + "\n\n" + HISTORY + "\n\n" + "\n".join(history) + "\n")
