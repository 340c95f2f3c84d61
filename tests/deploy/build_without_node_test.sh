#!/usr/bin/env bash
# A machine where Node and npm cannot run builds refgate with every npm-fed part off: the
# tracked sources alone (no node_modules anywhere), a PATH without node, nodejs, npm, npx or
# corepack, and -DREFGATE_CONSOLE=OFF plus the four data-set options off. The configure must pass
# and the build graph of `refgate` must be complete (every input there or made by a rule) and run
# no JavaScript tool. Planning, not building, keeps this test inside the suite's budget; the
# compiler sees the same sources in the suite's own build.
# Usage: build_without_node_test.sh SOURCE_ROOT
set -euo pipefail

ROOT=${1:?usage: build_without_node_test.sh SOURCE_ROOT}
WORK=$(mktemp -d)
trap '[[ -n ${KEEP:-} ]] || rm -rf "$WORK"' EXIT
fail() {
  printf 'FAIL: %s\n' "$*" >&2
  exit 1
}

# The sources as a fresh clone has them (tracked and new files, nothing ignored).
mkdir -p "$WORK/src"
git -C "$ROOT" ls-files -z --cached --others --exclude-standard |
  (cd "$ROOT" && xargs -0 tar -cf - --no-recursion 2>/dev/null) | tar -xf - -C "$WORK/src"
[[ -e $WORK/src/CMakeLists.txt ]] || fail "could not copy the sources"
if find "$WORK/src" -name node_modules -print -quit | grep -q .; then
  fail "the copied sources hold a node_modules folder"
fi

# Every program on PATH except the JavaScript tools.
mkdir -p "$WORK/bin"
IFS=: read -r -a dirs <<<"$PATH"
for dir in "${dirs[@]}"; do
  [[ -d $dir ]] || continue
  for program in "$dir"/*; do
    name=${program##*/}
    case $name in node | nodejs | npm | npx | corepack) continue ;; esac
    [[ -x $program && ! -e $WORK/bin/$name ]] && ln -s "$program" "$WORK/bin/$name"
  done
done
PATH=$WORK/bin
if command -v node || command -v npm; then fail "node or npm is still on PATH"; fi

cmake -S "$WORK/src" -B "$WORK/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DREFGATE_BUILD_TESTS=OFF -DREFGATE_CONSOLE=OFF -DREFGATE_CRAWLER_PATTERNS=OFF \
  -DREFGATE_ASN_DATABASE=OFF -DREFGATE_COUNTRY_DATABASE=OFF -DREFGATE_PASSWORD_LIST=OFF \
  >"$WORK/configure.log" 2>&1 || {
  cat "$WORK/configure.log" >&2
  fail "the configure without Node failed"
}
# Every command the two targets need (ninja's dry run would stop at the glob check's reconfigure),
# and every input of them either a file of the copy or something the build makes.
targets=(refgate refgate_scanner_data)
ninja -C "$WORK/build" -t commands "${targets[@]}" >"$WORK/plan.log"
ninja -C "$WORK/build" -t targets all | sed 's/: .*//' >"$WORK/made.txt"
missing=0
while IFS= read -r input; do
  [[ -e $input || -e $WORK/build/$input ]] && continue
  grep -qxF "$input" "$WORK/made.txt" || grep -qxF "${input#"$WORK/build/"}" "$WORK/made.txt" || {
    echo "missing input: $input" >&2
    missing=1
  }
done < <(ninja -C "$WORK/build" -t inputs "${targets[@]}")
((missing == 0)) || fail "the build graph without Node needs files that are not there"
if grep -E '(^|[/ ])(node|nodejs|npm|npx|esbuild)( |$)' "$WORK/plan.log"; then
  fail "the build without Node runs a JavaScript tool"
fi
grep -q 'refgate_data crawler-patterns - ' "$WORK/plan.log" ||
  fail "the crawler patterns are not built empty with REFGATE_CRAWLER_PATTERNS=OFF"
steps=$(grep -c '' "$WORK/plan.log" || true)
echo "configured and planned without Node: $steps build steps, none of them JavaScript"
