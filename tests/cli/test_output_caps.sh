#!/usr/bin/env bash
# Outputs are bounded (issue 27, defect 14): a link flapping 20,000 times
# logs 80,000 events; summary.json, events.csv, report.html and the database
# keep the earliest output.max_events (10,000 by default) and an
# events-truncated event says how many later ones were left out, and until
# when. Timeseries rows: output.max_rows (test_idle_time.sh).
. "$(dirname "$0")/lib.sh"
E=$SRC/examples
FLAP='faults=[{at: 2ms, kind: link-flap, target: leaf0-spine0, duration: 500us, period: 3ms, count: 20000}]'

expect_exit 0 timeout 300 "$FABSIM" run "$E/link-failure.yaml" --set "$FLAP" --set reliability.reconvergence=1ms \
  --set output.dir=flap --quiet
expect_json flap/summary.json '(.events | length) == 10001'
expect_json flap/summary.json '.events[-1].kind == "events-truncated"'
expect_json flap/summary.json '.events[-1].detail == "70000 more events, from 7.502 s to 60.0005 s, are not in the outputs: output.max_events is 10000; raise it to keep them"'
expect_json flap/summary.json '[.events[:-1][].at_s] | . == sort'
grep -q ',fabsim,events-truncated,"70000 more events' flap/events.csv && pass || fail "flap/events.csv: no marker row"
[ "$(wc -l < flap/events.csv)" -le 10010 ] && pass || fail "flap/events.csv: $(wc -l < flap/events.csv) lines"
[ "$(stat -c %s flap/report.html)" -lt 8000000 ] && pass || fail "flap/report.html: $(stat -c %s flap/report.html) bytes"
grep -q 'events-truncated' flap/report.html && pass || fail "flap/report.html: no note of the truncation"
n=$(sqlite3 flap/results.sqlite "SELECT count(*) FROM events WHERE kind = 'events-truncated'")
[ "$n" = 1 ] && pass || fail "flap/results.sqlite: $n truncation markers"

# the key raises or lowers the bound
expect_exit 0 timeout 300 "$FABSIM" run "$E/link-failure.yaml" --set "$FLAP" --set reliability.reconvergence=1ms \
  --set output.max_events=50 --set output.dir=few --quiet
expect_json few/summary.json '(.events | length) == 51 and .events[-1].kind == "events-truncated"'
# a run within the bound is as it was: no marker
expect_exit 0 timeout 300 "$FABSIM" run "$E/link-failure.yaml" --set output.dir=one --quiet
expect_json one/summary.json '[.events[].kind] | index("events-truncated") == null'
finish
