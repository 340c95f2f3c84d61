#!/usr/bin/env bash
# Checks deploy/prometheus/rules.yml: promtool accepts it (when promtool is installed; the
# `prometheus` Debian package that deploy/local/test.sh installs has it), and every alert has a
# runbook_url annotation `docs/runbooks.md#<anchor>` whose anchor is a heading of that page that
# names the alert (e.g. `## Alert: RefgateRedisDown` -> docs/runbooks.md#alert-refgateredisdown).
# Usage: alert_runbooks_test.sh [RULES [RUNBOOKS]]
set -euo pipefail

ROOT="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd -P)"
RULES=${1:-$ROOT/deploy/prometheus/rules.yml}
RUNBOOKS=${2:-$ROOT/docs/runbooks.md}
fail=0
problem() {
  printf 'FAIL: %s\n' "$*" >&2
  fail=1
}

if command -v promtool >/dev/null; then
  promtool check rules "$RULES" || problem "promtool check rules $RULES"
else
  echo "promtool not installed: skipping promtool check rules" >&2
fi

# GitHub's heading anchors: lower case, punctuation other than - and _ dropped, spaces -> -.
anchors=$(sed -n 's/^#\{1,6\} \{1,\}//p' "$RUNBOOKS" | tr '[:upper:]' '[:lower:]' |
  sed 's/[^a-z0-9 _-]//g; s/ /-/g')

# "alert<TAB>runbook_url" per rule, the url empty when the rule has none.
pairs=$(awk '
  function emit() { if (alert != "") printf "%s\t%s\n", alert, url }
  /^[[:space:]]*-[[:space:]]*(alert|record):/ {
    emit(); alert = ""; url = ""
    if ($2 == "alert:") { alert = $3 }
    next
  }
  /^[[:space:]]*runbook_url:/ {
    url = $0; sub(/^[[:space:]]*runbook_url:[[:space:]]*/, "", url); gsub(/["\047]/, "", url)
  }
  END { emit() }
' "$RULES")
[[ -n $pairs ]] || problem "no alerts found in $RULES"

while IFS=$'\t' read -r alert url; do
  [[ -n $alert ]] || continue
  if [[ -z $url ]]; then
    problem "$alert has no runbook_url annotation"
    continue
  fi
  if [[ $url != docs/runbooks.md#* ]]; then
    problem "$alert: runbook_url '$url' is not docs/runbooks.md#<anchor>"
    continue
  fi
  anchor=${url#docs/runbooks.md#}
  grep -qxF -- "$anchor" <<<"$anchors" || problem "$alert: docs/runbooks.md has no heading for #$anchor"
  lower=$(tr '[:upper:]' '[:lower:]' <<<"$alert")
  [[ $anchor == *"$lower"* ]] || problem "$alert: runbook anchor #$anchor does not name the alert"
done <<<"$pairs"

((fail == 0)) && echo "every alert in $RULES has a runbook section in $RUNBOOKS"
exit "$fail"
