#!/usr/bin/env bash
# deploy/systemd/refgate.service: `systemd-analyze verify` prints nothing (it exits 0 on unknown
# keys, so any line on stderr fails), and `systemd-analyze security --offline=true` rates the
# sandbox "OK" or better (exposure at most 4.9). Verify needs ExecStart to exist, so it checks a
# copy whose ExecStart names the built binary. Exits 77 (skip) only when systemd-analyze is missing.
# Usage: systemd_test.sh UNIT REFGATE_BINARY
set -euo pipefail

UNIT=${1:?usage: systemd_test.sh UNIT REFGATE_BINARY}
BIN=${2:?usage: systemd_test.sh UNIT REFGATE_BINARY}
if ! command -v systemd-analyze >/dev/null; then
  echo "SKIP: systemd-analyze is not installed (Debian package systemd)" >&2
  exit 77
fi
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
fail=0
problem() {
  printf 'FAIL: %s\n' "$*" >&2
  fail=1
}

grep -q '^ExecStart=/usr/bin/refgate serve$' "$UNIT" ||
  problem "ExecStart must be '/usr/bin/refgate serve' (cmake --install rewrites exactly that)"
sed "s|^ExecStart=/usr/bin/refgate |ExecStart=$BIN |" "$UNIT" >"$WORK/refgate.service"

if ! systemd-analyze verify "$WORK/refgate.service" >"$WORK/verify.out" 2>"$WORK/verify.err"; then
  problem "systemd-analyze verify failed"
fi
if [[ -s $WORK/verify.err ]]; then
  cat "$WORK/verify.err" >&2
  problem "systemd-analyze verify printed warnings"
fi

systemd-analyze security --offline=true --no-pager "$WORK/refgate.service" >"$WORK/security.out" \
  2>&1 || problem "systemd-analyze security failed"
verdict=$(grep -E 'Overall exposure level' "$WORK/security.out" || true)
echo "$verdict"
exposure=$(sed -nE 's/.*Overall exposure level for [^:]*: ([0-9]+\.[0-9]+) .*/\1/p' <<<"$verdict")
if [[ -z $exposure ]]; then
  cat "$WORK/security.out" >&2
  problem "no exposure level in the output of systemd-analyze security"
elif ! awk -v e="$exposure" 'BEGIN { exit !(e <= 4.9) }'; then
  problem "exposure $exposure is above 4.9 (worse than OK)"
fi
[[ $verdict =~ (OK|SAFE) ]] || problem "the verdict is not OK or SAFE: $verdict"
exit "$fail"
