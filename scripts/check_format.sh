#!/usr/bin/env bash
# Checks that the C and C++ sources follow .clang-format, with the clang-format this project
# pins: Debian's clang-format-14 (package clang-format-14; scripts/install_deps.sh --tests
# installs it). Another version formats some constructs differently, so it is refused.
#
#   scripts/check_format.sh            every tracked C/C++ file (what CI runs)
#   scripts/check_format.sh BASE       only the files changed since the commit BASE
#   scripts/check_format.sh --fix ...  rewrite the files instead of checking them
#
# Exit status 1 and one `error:` line per file that differs (with the first lines of the
# difference), 0 when every file is formatted.
set -euo pipefail
cd "$(dirname "$0")/.."
CLANG_FORMAT="${CLANG_FORMAT:-clang-format-14}"
if ! command -v "$CLANG_FORMAT" > /dev/null; then
    echo "error: $CLANG_FORMAT not found (install Debian's clang-format-14: scripts/install_deps.sh --tests)" >&2
    exit 2
fi
if ! "$CLANG_FORMAT" --version | grep -q "version 14\."; then
    echo "error: $CLANG_FORMAT is not clang-format 14 ($("$CLANG_FORMAT" --version)); the tree is formatted with 14" >&2
    exit 2
fi
fix=0
if [ "${1:-}" = "--fix" ]; then
    fix=1
    shift
fi
# Generated or third-party-shaped files that are not ours to format: none today.
pattern='\.(c|cc|cpp|h|hpp)$'
if [ $# -ge 1 ]; then
    git rev-parse --verify --quiet "$1^{commit}" > /dev/null || { echo "error: $1 is not a commit" >&2; exit 2; }
    mapfile -t files < <(git diff --name-only --diff-filter=ACMR "$1" -- | grep -E "$pattern" || true)
else
    mapfile -t files < <(git ls-files | grep -E "$pattern" || true)
fi
if [ ${#files[@]} -eq 0 ]; then
    echo "check_format: no C/C++ file to check"
    exit 0
fi
if [ $fix -eq 1 ]; then
    "$CLANG_FORMAT" -i --style=file "${files[@]}"
    echo "check_format: formatted ${#files[@]} files"
    exit 0
fi
bad=0
for f in "${files[@]}"; do
    if ! diff -q <("$CLANG_FORMAT" --style=file "$f") "$f" > /dev/null; then
        echo "error: $f is not formatted (scripts/check_format.sh --fix formats it):"
        diff -u "$f" <("$CLANG_FORMAT" --style=file "$f") | sed -n '3,12p'
        bad=$((bad + 1))
    fi
done
if [ $bad -gt 0 ]; then
    echo "check_format: $bad of ${#files[@]} files differ from .clang-format"
    exit 1
fi
echo "check_format: ${#files[@]} files formatted"
