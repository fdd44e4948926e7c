#!/usr/bin/env bash
# Idle simulated time costs no wall time (issue 27, defect 5): a run in
# slices of simulated time jumps over a stretch with no event (a link-down
# 100 h after a 6 ms collective took about 20 min before), and sampling costs
# what its rows cost: an interval that would give more than output.max_rows
# rows over the run is widened to fit, and the files say so (summary.json
# telemetry.interval_requested_s, an interval-widened event). Each case has
# a minute where it now takes well under a second.
. "$(dirname "$0")/lib.sh"
E=$SRC/examples

expect_exit 0 timeout 60 "$FABSIM" run "$E/link-failure.yaml" \
  --set 'faults=[{at: 100h, kind: link-down, target: leaf0-spine0}]' --set output.dir=late --quiet
expect_err "came after the workload ended"
expect_json late/summary.json '.sim.sim_time_s >= 360000'
expect_json late/summary.json '.telemetry.samples <= 1000 and (.telemetry | has("interval_requested_s") | not)'

# 1 ps samples of a 6 ms run at flow: 6e9 rows asked, at most output.max_rows written
expect_exit 0 timeout 120 "$FABSIM" run "$E/link-failure.yaml" --set 'faults=[]' \
  --set output.sample_interval=1ps --set output.dir=fine --quiet
expect_json fine/summary.json '.telemetry.interval_requested_s == 1e-12 and .telemetry.interval_s == 1e-07'
expect_json fine/summary.json '.telemetry.samples <= 100000 and .telemetry.truncated == false'
grep -q '^0,telemetry,interval-widened,"a sample interval of 1 ps would give 6.004e+09 rows' fine/events.csv \
  && pass || fail "fine/events.csv: no interval-widened event: $(head -3 fine/events.csv)"
[ "$(wc -l < fine/timeseries.csv)" -le 100001 ] && pass || fail "fine/timeseries.csv: $(wc -l < fine/timeseries.csv) lines"
# the key bounds the rows; the widened interval is 1, 2 or 5 x 10^k ps
expect_exit 0 timeout 300 "$FABSIM" run "$E/link-failure.yaml" --set 'faults=[]' --set output.sample_interval=1us \
  --set output.max_rows=100 --set output.dir=few --quiet
expect_json few/summary.json '.telemetry.interval_s == 0.0001 and .telemetry.samples == 61'
expect_json few/summary.json '.telemetry.interval_requested_s == 1e-06'
expect_exit 2 timeout 300 "$FABSIM" run --set output.max_rows=0 --set output.dir=o --quiet
expect_err "output.max_rows"
# within the bound: the interval as asked, no note
expect_exit 0 timeout 300 "$FABSIM" run "$E/link-failure.yaml" --set 'faults=[]' --set output.sample_interval=100us \
  --set output.dir=asked --quiet
expect_json asked/summary.json '.telemetry.interval_s == 0.0001 and (.telemetry | has("interval_requested_s") | not)'
grep -q interval-widened asked/events.csv && fail "asked/events.csv: widened within the bound" || pass
finish
