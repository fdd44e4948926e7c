#!/usr/bin/env bash
# Static analysis of the library and the verbs (STYLE.md 15): cppcheck's
# warning and portability checks find nothing in src/ (about 15 s).
# Usage: test_cppcheck.sh SOURCE_DIR
set -u
src=${1:?usage: test_cppcheck.sh SOURCE_DIR}
command -v cppcheck >/dev/null || { echo "cppcheck missing (make deps installs it)"; exit 1; }
cd "$src" || exit 1
cppcheck -q --enable=warning,portability --error-exitcode=1 --std=c11 -I include -I src \
  -D__GNUC__ --suppress=missingIncludeSystem --inline-suppr src && echo "cppcheck: src/ clean"
