#!/usr/bin/env bash
# README.md prints what fabsim prints: every console block of it runs, from a
# folder where examples/ is the source tree's, and its output is the block's
# ("..." for lines or text left out; tests/cli/doc_blocks.sh).
. "$(dirname "$0")/lib.sh"
. "$SRC/tests/cli/doc_blocks.sh"
ln -s "$SRC/examples" examples
check_doc README.md
finish
