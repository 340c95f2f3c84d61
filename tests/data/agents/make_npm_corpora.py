#!/usr/bin/env python3
"""Writes the corpora of tests/data/agents that come from npm packages, from the versions pinned in
tests/data/agents/npm/package-lock.json (run `npm ci` there first). Deterministic: the same
packages give the same files. See README.md beside this file for what each file holds.

    tests/data/agents/make_npm_corpora.py
"""
import json
import pathlib
import re

HERE = pathlib.Path(__file__).resolve().parent
MODULES = HERE / "npm" / "node_modules"


def version(package):
    return json.loads((MODULES / package / "package.json").read_text())["version"]


def write(name, header, agents):
    # One agent a line: drop agents that hold a line break (none do today) and blank ones.
    agents = [a for a in agents if a.strip() and "\n" not in a and "\r" not in a]
    lines = [f"# {line}".rstrip() for line in header.strip().splitlines()]
    lines.append(f"# Written by make_npm_corpora.py; {len(agents)} agents.")
    (HERE / name).write_text("\n".join(lines + agents) + "\n")


def user_agents():
    """Every distinct agent of user-agents' data (browser fingerprints collected on real sites)."""
    data = json.loads((MODULES / "user-agents/dist/user-agents.json").read_text())
    seen = []
    for entry in sorted(data, key=lambda e: -e["weight"]):
        if entry["userAgent"] not in seen:
            seen.append(entry["userAgent"])
    return seen


def top_user_agents():
    seen = []
    for part in ("index", "desktop", "mobile"):
        for agent in json.loads((MODULES / f"top-user-agents/src/{part}.json").read_text()):
            if agent not in seen:
                seen.append(agent)
    return seen


# useragentswitcher's folders (random-useragent's data), by what the list's authors filed them as.
SWITCHER_BROWSERS = re.compile(r"^/(Browsers - |Mobile Devices/(Browsers|Devices|OS|WAP Phones)"
                               r"|Miscellaneous/Browsers - )")
SWITCHER_CRAWLERS = re.compile(r"^/(Spiders - Search|Miscellaneous/(Bots - Spiders|Downloaders"
                               r"|Validators|Libraries|Feed Readers))$")


def switcher(folder_pattern):
    data = json.loads((MODULES / "random-useragent/useragent-data.json").read_text())
    return [e["userAgent"] for e in data if folder_pattern.search(e["folder"])]


# Agents the sources file as browsers that are services fetching for someone else: transcoding
# proxies and gateways, an aggregator's crawler, a read-later service and a feed fetcher. They are
# left out of the browser corpus (README.md lists them); refgate counts them as bots.
NOT_BROWSERS = {
    "BlackBerry7520/4.0.0 Profile/MIDP-2.0 Configuration/CLDC-1.1 UP.Browser/5.0.3.3 UP.Link/5.1.2.12"
    " (Google WAP Proxy/1.0)",
    "Mozilla/5.0 (Windows; U; Windows NT 6.0; en-US; aggregator VocusBot 0.4;"
    " +http://www.vocus.com/vnhs.html)",
    "Mozilla/5.0 (compatible; DoCoMo/1.0/D505i/c20/TB/W20H10; http://www.rcdtokyo.com/pc2m/)",
    "Mozilla/5.0 (en-us) AppleWebKit/534.14 (KHTML, like Gecko; Google Wireless Transcoder)"
    " Chrome/9.0.597 Safari/534.14",
    "Mozilla/5.0 (compatible; livedoor-Mobile-Gateway/0.02; +http://p.m.livedoor.com/help.html)",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_6_8) AppleWebKit/534.50 (KHTML, like Gecko)"
    " Version/5.1 Instapaper/4.0 (+http://www.instapaper.com/)",
    "Girls/2.0 (livedoor Co.,Ltd.; Peachy 2.1; iPhone; RSS Version 2.0; +http://girls.livedoor.com/)",
}


def woothee(categories):
    """The `target` of woothee's test sets whose `category` is one of `categories`."""
    agents = []
    for path in sorted((MODULES / "woothee/woothee/testsets").glob("*.yaml")):
        target = None
        for line in path.read_text().splitlines():
            m = re.match(r"^- target: (['\"])(.*)\1\s*$", line)
            if m:
                target = m.group(2).replace("''", "'") if m.group(1) == "'" else m.group(2)
                continue
            m = re.match(r"^\s+category: (\S+)", line)
            if m and target is not None:
                if m.group(1) in categories:
                    agents.append(target)
                target = None
    return agents


def main():
    write("browsers-user-agents.txt", f"""
Browser corpus: every distinct User-Agent of the npm package user-agents {version('user-agents')}
(BSD-2-Clause; dist/user-agents.json, browser fingerprints that real visitors' browsers reported),
most frequent first.""", user_agents())
    write("browsers-top-user-agents.txt", f"""
Browser corpus: the npm package top-user-agents {version('top-user-agents')} (MIT; src/index.json,
desktop.json, mobile.json: the most common browser User-Agents of a large web service's traffic),
distinct agents in that order.""", top_user_agents())
    write("browsers-switcher-woothee.txt", f"""
Browser corpus of old and uncommon browsers and devices: the browser folders ("Browsers - ...",
"Mobile Devices/Browsers|Devices|OS|WAP Phones", "Miscellaneous/Browsers - ...") of the
useragentswitcher list in the npm package random-useragent {version('random-useragent')} (MIT;
useragent-data.json), then the test sets of the npm package woothee {version('woothee')}
(Apache-2.0; woothee/testsets/*.yaml) whose category is pc, smartphone, mobilephone or
appliance; less the services listed in README.md.""", [
        a for a in switcher(SWITCHER_BROWSERS) + woothee({"pc", "smartphone", "mobilephone",
                                                          "appliance"})
        if a not in NOT_BROWSERS])
    write("crawlers-switcher-woothee.txt", f"""
Crawler corpus: the crawler, downloader, validator, library and feed-reader folders ("Spiders -
Search", "Miscellaneous/Bots - Spiders|Downloaders|Validators|Libraries|Feed Readers") of the
useragentswitcher list in the npm package random-useragent {version('random-useragent')} (MIT),
then the test sets of the npm package woothee {version('woothee')} (Apache-2.0) whose category is
crawler.""", switcher(SWITCHER_CRAWLERS) + woothee({"crawler"}))


if __name__ == "__main__":
    main()
