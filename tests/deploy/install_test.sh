#!/usr/bin/env bash
# `cmake --install` of a built tree into a temporary DESTDIR with a prefix of its own: every file
# lands where the README says, the unit's ExecStart names the installed binary, the example
# settings pass `refgate check-config`, and the installed binary runs `--version`.
# Usage: [CMAKE=cmake] install_test.sh BUILD_DIR
set -euo pipefail

BUILD=${1:?usage: install_test.sh BUILD_DIR}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
PREFIX=/opt/refgate
ROOT_DIR="$WORK/root"
fail=0
problem() {
  printf 'FAIL: %s\n' "$*" >&2
  fail=1
}

DESTDIR="$ROOT_DIR" "${CMAKE:-cmake}" --install "$BUILD" --prefix "$PREFIX" >"$WORK/install.log" 2>&1 || {
  cat "$WORK/install.log" >&2
  problem "cmake --install failed"
  exit 1
}

for file in \
  bin/refgate \
  lib/systemd/system/refgate.service \
  share/doc/refgate/LICENSE \
  share/doc/refgate/refgate.env.example \
  share/refgate/prometheus/rules.yml \
  share/refgate/prometheus/prometheus.yml \
  share/refgate/grafana/refgate-dashboard.json; do
  [[ -s $ROOT_DIR$PREFIX/$file ]] || problem "$PREFIX/$file was not installed"
done
[[ -x $ROOT_DIR$PREFIX/bin/refgate ]] || problem "$PREFIX/bin/refgate is not executable"
grep -q 'Apache License' "$ROOT_DIR$PREFIX/share/doc/refgate/LICENSE" ||
  problem "the installed LICENSE is not the Apache License"

UNIT="$ROOT_DIR$PREFIX/lib/systemd/system/refgate.service"
if [[ -f $UNIT ]]; then
  grep -qx "ExecStart=$PREFIX/bin/refgate serve" "$UNIT" ||
    problem "the installed unit does not start $PREFIX/bin/refgate: $(grep '^ExecStart=' "$UNIT")"
fi

BIN="$ROOT_DIR$PREFIX/bin/refgate"
if [[ -x $BIN ]]; then
  version=$("$BIN" --version) || problem "the installed refgate --version failed"
  [[ $version =~ ^refgate\ [0-9]+\.[0-9]+\.[0-9]+\ \(.+\)$ ]] ||
    problem "unexpected --version output: $version"
  # The example settings, as systemd would pass them, are a valid configuration.
  mapfile -t settings < <(grep -E '^[A-Z_]+=' "$ROOT_DIR$PREFIX/share/doc/refgate/refgate.env.example")
  env -i HOME="$WORK" PATH="$PATH" REFGATE_STATE_DIR="$WORK/state" "${settings[@]}" \
    "$BIN" check-config >"$WORK/check.log" 2>&1 || {
    cat "$WORK/check.log" >&2
    problem "refgate check-config refuses the example settings"
  }
fi

[[ $fail == 0 ]] && echo "installed and checked under $PREFIX"
exit "$fail"
