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
appliance.""", switcher(SWITCHER_BROWSERS) + woothee({"pc", "smartphone", "mobilephone",
                                                     "appliance"}))
    write("crawlers-switcher-woothee.txt", f"""
Crawler corpus: the crawler, downloader, validator, library and feed-reader folders ("Spiders -
Search", "Miscellaneous/Bots - Spiders|Downloaders|Validators|Libraries|Feed Readers") of the
useragentswitcher list in the npm package random-useragent {version('random-useragent')} (MIT),
then the test sets of the npm package woothee {version('woothee')} (Apache-2.0) whose category is
crawler.""", switcher(SWITCHER_CRAWLERS) + woothee({"crawler"}))


if __name__ == "__main__":
    main()
