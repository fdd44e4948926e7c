#!/usr/bin/env bash
# The report page's logic (report/app.js) in Node, without a browser (report_app.mjs): log axes
# where a series spans decades, SI ticks, no all-zero chart, a numeric sweep drawn as curves.
. "$(dirname "$0")/lib.sh"
if ! command -v node >/dev/null; then fail "needs node (run make deps)"; finish; exit; fi
node "$SRC/tests/cli/report_app.mjs" "$SRC" > app.log 2>&1 && pass || fail "report/app.js: $(cat app.log)"
cat app.log
finish
