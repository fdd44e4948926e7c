#!/usr/bin/env bash
# No NIC moves faster than its line rate in timeseries.csv (issue 27, defect
# 7). After a link fault one repetition of a phase stalls until routing
# reconverges; the NIC series' mean window of a transfer that crossed the
# link was then longer than a repetition: windows overlapped (844 Gb/s
# mid-run with a 1 ms reconvergence) and ran past the phase's end, whose
# last row took what was left (89,582 Gb/s on the last row of
# examples/link-failure.yaml). Every row of every NIC, watched ones too,
# stays at or under 400 Gb/s now; a value above would be an error, not a
# figure (tests/telemetry/test_tel.c, test_line_rate).
. "$(dirname "$0")/lib.sh"
E=$SRC/examples

# max_le FILE: every per-NIC column (max and watched) at most 400 Gb/s
max_le() {
  awk -F, -v f="$1" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i ~ /gbps_max$|^nic[0-9]+:(tx|rx)_gbps$/) c[i] = $i; next }
    { for (i in c) if ($i > 400) { print f ": row " NR - 1 " " c[i] " = " $i; bad = 1; exit } }
    END { exit bad }' "$1" && pass || fail "$(awk -F, 'NR > 1 && ($12 > 400 || $17 > 400) { print FILENAME ": row " NR - 1 ": tx " $12 ", rx " $17; exit }' "$1")"
}

run_one() { # DIR ARGS...
  local d=$1; shift
  expect_exit 0 "$FABSIM" run "$E/link-failure.yaml" --set output.ports=nic8,nic56 "$@" \
    --set output.dir="$d" --quiet
  max_le "$d/timeseries.csv"
}
run_one down
expect_json down/summary.json '.telemetry.nic_tx_bytes == .telemetry.nic_rx_bytes'
run_one fast --set reliability.reconvergence=1ms
run_one spine --set reliability.reconvergence=1ms --set 'faults=[{at: 5ms, kind: switch-down, target: spine3}]'
run_one flap --set 'faults=[{at: 2ms, kind: link-flap, target: leaf0-spine0, duration: 500us, period: 3ms, count: 4}]'
# and a run without a fault is as it was
run_one none --set 'faults=[]'

# A flow moved by a reroute leaves its old path's ports (issue 27, defect 7):
# the ports of leaf0-spine0 carry nothing once the link is down (5 ms; the
# flows there stall, then move at 6 ms), their bytes before it at the flows'
# rate, not spread over the whole phase (they showed 294 Gb/s until the
# collective's end, 14.6 ms, on a link that was down). Every port stays at
# or under its line rate (a row above would be an error).
# ECMP moves the flows of the link; spray spreads every flow over a leaf's
# uplinks that are up (the flow fidelity shares the pool among them).
moved() { # DIR ARGS...
  local d=$1; shift
  expect_exit 0 "$FABSIM" run "$E/link-failure.yaml" --set reliability.reconvergence=1ms \
    --set output.ports=leaf0-spine0,spine0-leaf0 --set output.dir="$d" --quiet "$@"
  awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i ~ /^(leaf0-spine0|spine0-leaf0):gbps$/) c[i] = $i; next }
    { for (i in c) { if ($1 > 0.005 && $i != 0) { print "row " NR - 1 " (" $1 " s): " c[i] " = " $i; bad = 1; exit }
                     if ($1 < 0.0049) seen[i] += $i } }
    END { for (i in c) if (!seen[i]) { print c[i] " carried nothing before the fault"; bad = 1 }; exit bad }' \
    "$d/timeseries.csv" && pass || fail "$d: a port of the link down carries bytes after the fault"
}
moved moved
moved moved-spray --set fabric.routing=spray
finish
