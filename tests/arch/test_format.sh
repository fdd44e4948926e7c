#!/usr/bin/env bash
# The C sources follow .clang-format (STYLE.md 15): clang-format changes nothing.
# Usage: test_format.sh SOURCE_DIR. Reformat with `make format`.
set -u
src=${1:?usage: test_format.sh SOURCE_DIR}
command -v clang-format >/dev/null || { echo "clang-format missing (make deps installs it)"; exit 1; }
cd "$src" || exit 1
files=$(git ls-files '*.c' '*.h' 2>/dev/null || find src include tests tools fuzz bench -name '*.[ch]')
bad=0
for f in $files; do
  clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || { echo "$f: not as .clang-format lays it out"; bad=1; }
done
[ $bad = 0 ] && echo "format: $(echo "$files" | wc -w) files as .clang-format lays them out"
exit $bad
