#!/usr/bin/env bash
# The linters over the repository's scripts (ctest's `lint:` entries; tests/README.md says why
# these two):
#   lint.sh shell    shellcheck over every tracked shell script: *.sh and any file whose first
#                    line is a sh or bash shebang (.ci/run), sourced files followed (-x)
#   lint.sh python   flake8 over every tracked *.py and python3 script, with ruff's default rules
#                    (pyflakes' F, pycodestyle's E4, E7 and E9: errors, not layout)
#   lint.sh namespaces
#                    every refgate namespace a module's source declares is refgate::<module>
#                    or nested in it (src/<module>/, include/<module>/refgate/<module>/), so a
#                    name's namespace says which module holds it (issue 40)
# A finding that is wrong for one line is disabled on that line, with the reason:
#   # shellcheck disable=SC2034 # read by test.sh, which sources this file
#   import x  # noqa: E402 (after sys.dont_write_bytecode)
# Exits 0 when clean, 1 with the findings, 77 (skipped) outside a git checkout.
set -euo pipefail

ROOT="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd -P)"
cd "$ROOT"
git rev-parse --is-inside-work-tree >/dev/null 2>&1 || {
  echo "not a git checkout: nothing to list" >&2
  exit 77
}

# tracked FILE... whose first line matches the extended regex $1, among every tracked file.
with_shebang() {
  local pattern=$1 file line
  while IFS= read -r -d '' file; do
    [[ -f $file && ! -L $file ]] || continue
    IFS= read -r line <"$file" || true
    [[ $line =~ $pattern ]] && printf '%s\0' "$file"
  done < <(git ls-files -z)
}

# The tracked files named *.$1 or with a shebang matching $2, once each, NUL-separated.
files_of() {
  { git ls-files -z -- "*.$1"; with_shebang "$2"; } | sort -zu
}

case ${1:-} in
  shell)
    mapfile -d '' files < <(files_of sh '^#!.*[/ ](ba)?sh( |$)')
    echo "shellcheck $(shellcheck --version | sed -n 's/^version: //p'): ${#files[@]} scripts" >&2
    shellcheck -x "${files[@]}"
    ;;
  python)
    mapfile -d '' files < <(files_of py '^#!.*python3?( |$)')
    echo "flake8 $(flake8 --version | head -n 1 | cut -d' ' -f1): ${#files[@]} files" >&2
    flake8 --select=E4,E7,E9,F "${files[@]}"
    ;;
  namespaces)
    mapfile -d '' files < <(git ls-files -z -- 'src/*/*.[ch]pp' 'src/*/**/*.[ch]pp' 'include/*/*.[ch]pp' \
      'include/*/**/*.[ch]pp' | sort -zu)
    echo "namespaces: ${#files[@]} module sources" >&2
    awk '
      FNR == 1 { split(FILENAME, part, "/"); module = "refgate::" part[2] }
      match($0, /^[[:space:]]*namespace refgate[A-Za-z0-9_:]*/) {
        name = substr($0, RSTART, RLENGTH); sub(/^[[:space:]]*namespace /, "", name)
        if (name != module && index(name, module "::") != 1) {
          printf "%s:%d: namespace %s in module %s\n", FILENAME, FNR, name, part[2]; bad = 1
        }
      }
      END { exit bad }' "${files[@]}"
    ;;
  *)
    echo "usage: $0 shell|python|namespaces" >&2
    exit 2
    ;;
esac
