#!/bin/bash
# The man page: installed by `make install` (cmake --install) under share/man/man1, formats
# without a single groff warning, and documents every verb `fabsim help` lists (each verb's
# own --help works too).
. "$(dirname "$0")/lib.sh"

BUILD_DIR=$(dirname "$FABSIM")
expect_exit 0 cmake --install "$BUILD_DIR" --prefix "$WORK/inst"
page="$WORK/inst/share/man/man1/fabsim.1"
[ -s "$page" ] && pass || fail "man page not installed at share/man/man1/fabsim.1"
[ -x "$WORK/inst/bin/fabsim" ] && pass || fail "binary not installed at bin/fabsim"

# -ww: all warnings; -z: no output, only diagnostics
groff -man -Tutf8 -ww -z "$page" 2>"$WORK/groff.err"
[ ! -s "$WORK/groff.err" ] && pass || fail "groff warnings: $(head -c 400 "$WORK/groff.err")"
MANWIDTH=100 man -l "$page" >"$WORK/man.txt" 2>/dev/null
grep -q 'fabsim run' "$WORK/man.txt" && pass || fail "man -l did not render the page"

for verb in run topo memory reliability sweep compare calibrate version help; do
  grep -q "^\.B $verb\$" "$page" && pass || fail "man page lacks a COMMANDS entry for $verb"
  expect_exit 0 "$FABSIM" "$verb" --help
done
# every verb named in the main help is in the page
"$FABSIM" --help | awk '/^verbs:/{f=1; next} f && /^$/{f=0} f && /^  [a-z]+ /{print $1}' |
  while read -r verb; do grep -q "^\.B $verb\$" "$page" || echo "$verb"; done >"$WORK/missing"
[ ! -s "$WORK/missing" ] && pass || fail "verbs in fabsim --help missing from the man page: $(cat "$WORK/missing")"
# every exit status fabsim uses is documented: the man page, the README, fabsim --help
# (the codes are src/cli/cli.h's CLI_* and out of memory's 3)
codes=$(sed -n 's/.*enum { CLI_OK = 0,\(.*\) };/\1/p' "$SRC/src/cli/cli.h" | grep -o '= [0-9]*' | tr -d '= ')
[ -n "$codes" ] && pass || fail "cannot read the exit codes of src/cli/cli.h"
for code in 0 3 $codes; do
  sed -n '/^\.SH EXIT STATUS/,/^\.SH EXAMPLES/p' "$page" | grep -q "^\.B $code\$" && pass \
    || fail "the man page's EXIT STATUS lacks $code"
  "$FABSIM" --help | sed -n '/^exit status/,/^$/p' | grep -q "\b$code\b" && pass || fail "fabsim --help lacks exit status $code"
done
grep -q '3 out of memory' "$SRC/README.md" && pass || fail "README lacks exit code 3"
grep -q '4 the simulated job' "$SRC/README.md" && pass || fail "README lacks exit code 4"
grep -q 'exit(3)' "$SRC/src/core/alloc.c" && pass || fail "out of memory no longer exits 3: update the docs"
finish
