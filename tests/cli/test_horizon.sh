#!/usr/bin/env bash
# The horizon of simulated time, 2^62 ps (issue 27, defect 2): no duration a
# run produces wraps past 2^64 ps into a figure. Inputs that already say the
# horizon is passed are refused before the run (exit 2, the key); what only
# the run can tell stops it with a clear failure and no figure (exit 1). A
# bandwidth without a unit below 1 Mb/s is a forgotten unit.
. "$(dirname "$0")/lib.sh"
E=$SRC/examples

# the issue's case: 400 (b/s) NICs and an 8 GiB AllReduce printed 65 us
expect_exit 2 timeout 60 "$FABSIM" run --set cluster.nodes=2 --set cluster.nic.bandwidth=400 \
  --set workload.collective.size=8GiB --set output.dir=o --quiet
expect_err "--set:2:23: cluster.nic.bandwidth: '400' has no unit, so it is 400 bits/s, below 1 Mb/s"
expect_err "units: bits/s: bps, Kbps"
[ ! -e o/summary.json ] && pass || fail "a summary for a refused scenario"
expect_exit 0 timeout 60 "$FABSIM" topo --set cluster.nic.bandwidth=400000000000 # a plain number in range
expect_exit 0 timeout 60 "$FABSIM" topo --set cluster.nic.bandwidth=1000000

# the same with the unit given: only the run can tell; it stops at the horizon
expect_exit 1 timeout 60 "$FABSIM" run --set cluster.nodes=2 --set cluster.nic.bandwidth=400bps \
  --set workload.collective.size=8GiB --set output.dir=o --quiet
expect_err "simulated time would pass the horizon of 4,611,686 s (2^62 ps, 53.38 days)"
expect_err "the run stops without a figure"
[ ! -e o/summary.json ] && pass || fail "o/summary.json: a figure past the horizon"

# trace sends at 1 b/s: stopped at the horizon (it ran for ever before)
expect_exit 1 timeout 60 "$FABSIM" run "$E/trace.yaml" --set cluster.nic.bandwidth=1bps \
  --set cluster.scale_up.bandwidth=1bps --set output.dir=tr --quiet
expect_err "simulated time would pass the horizon"

# refused before the run, at the key: sizes that certainly pass it
expect_exit 2 timeout 60 "$FABSIM" run --set cluster.nodes=1 --set workload.collective.size=18446744073709551615 \
  --set output.dir=o --quiet
expect_err "--set:2:26: workload.collective.size: 18446744073709551615 bytes (a rank's share: 1/8 of them) take at least"
expect_err "past the horizon of simulated time (2^62 ps"
expect_exit 2 timeout 60 "$FABSIM" run "$E/shared/checkpoint-burst.yaml" \
  --set workload.checkpoint.size=18446744073709551615 --set output.dir=o --quiet
expect_err "--set:1:26: workload.checkpoint.size: 18446744073709551615 bytes take at least 821.2 days into the storage servers' ports and drives"
expect_exit 2 timeout 60 "$FABSIM" run --set workload.kind=traffic --set workload.traffic.size=1TB \
  --set cluster.nic.bandwidth=1bps --set cluster.scale_up.bandwidth=1bps --set output.dir=o --quiet
expect_err "workload.traffic.size: 1000000000000 bytes take at least"
# a latency (any time key) at or past the horizon
expect_exit 2 timeout 60 "$FABSIM" run --set fabric.link_latency=100d --set output.dir=o --quiet
expect_err "--set:1:21: fabric.link_latency: 100 days reaches the horizon of simulated time"
# a long latency under the horizon runs, and ends (it never ended before: defect 5)
expect_exit 0 timeout 60 "$FABSIM" run --set cluster.nodes=2 --set fabric.link_latency=1000s \
  --set output.dir=lat --quiet
expect_json lat/summary.json '.collectives[0].time_s > 1000 and .collectives[0].time_s < 4.7e6'
# integers above 2^63 print as what they are (a signed cast printed them negative):
# 2^63 bytes over 1e18 b/s NVLink end in 2 minutes of simulated time
expect_exit 0 timeout 60 "$FABSIM" run --set cluster.nodes=1 --set cluster.scale_up.bandwidth=1e18bps \
  --set workload.collective.size=9223372036854775808 --set output.dir=big --quiet
expect_json big/summary.json '.collectives[0].bytes >= 9.2233720368e18 and .collectives[0].delivered_bytes > 0'
expect_json big/summary.json '.network.bytes > 0 and ([.. | numbers | select(. < 0)] | length) == 0'
finish
