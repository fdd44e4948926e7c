#!/usr/bin/env bash
# The C sources follow .clang-format (STYLE.md 15): clang-format changes nothing.
# Usage: test_format.sh SOURCE_DIR. Reformat with `make format`.
# One clang-format process for every file (one per file cost 16 CPU s of
# process starts; one for all, 3 s); a file it would change is named in its
# "FILE:LINE:COL: error: code should be clang-formatted" lines.
set -u
src=${1:?usage: test_format.sh SOURCE_DIR}
command -v clang-format >/dev/null || { echo "clang-format missing (make deps installs it)"; exit 1; }
cd "$src" || exit 1
mapfile -t files < <(git ls-files '*.c' '*.h' 2>/dev/null || find src include tests tools fuzz bench -name '*.[ch]')
out=$(clang-format --dry-run --Werror "${files[@]}" 2>&1)
rc=$?
bad=$(printf '%s\n' "$out" | sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: error: code should be clang-formatted.*/\1/p' | sort -u)
if [ $rc != 0 ] || [ -n "$bad" ]; then
  for f in $bad; do echo "$f: not as .clang-format lays it out"; done
  [ -n "$bad" ] || printf '%s\n' "$out"
  exit 1
fi
echo "format: ${#files[@]} files as .clang-format lays them out"
