#!/usr/bin/env bash
# fabsim run with network faults at the flow fidelity: a link down mid
# AllReduce is rerouted after reliability.reconvergence (summary events,
# events.csv), the run completes with every byte, later than without the
# fault by at most the stall; a node cut off fails its transfers with "no
# route"; bad fault entries exit 2 with file:line:col.
. "$(dirname "$0")/lib.sh"

NET=(--set cluster.nodes=4 --set fabric.switch_radix=16 --set simulation.fidelity=flow
     --set reliability.reconvergence=1ms)

expect_exit 0 "$FABSIM" run "${NET[@]}" --set output.dir=base --json
cp "$WORK/out" base.json
expect_exit 0 "$FABSIM" run "${NET[@]}" --set output.dir=down --json \
  --set 'faults=[{at: 5ms, kind: link-down, target: leaf0-spine0}]'
cp "$WORK/out" down.json
expect_json down.json '.events | map(select(.kind == "link-down" and .component == "leaf0-spine0" and .at_s == 0.005)) | length == 1'
expect_json down.json '.events | map(select(.kind == "reroute" and .at_s == 0.006 and (.detail | test("rerouted [1-9][0-9]* flows? in flight")))) | length == 1'
b0=$(jq '.network.bytes' base.json); b1=$(jq '.network.bytes' down.json)
if [ "$b0" = "$b1" ]; then pass; else fail "bytes $b1, want $b0 (every byte delivered)"; fi
expect_json down.json '.network.transfers_failed == 0 and .network.flows_rerouted >= 1'
# later, by no more than the 1 ms stall and the rest of the run at half speed
# (static routing is collision-free without the fault; leaf0 has 8 flows up
# and 7 up links after it, so at worst two share a link from then on)
t0=$(jq '.collectives[0].time_s' base.json); t1=$(jq '.collectives[0].time_s' down.json)
if awk -v a="$t0" -v b="$t1" 'BEGIN { exit !(b > a && b <= a + 0.001 + (a - 0.005) + 1e-9) }'; then pass; else fail "time $t1 vs base $t0: want later by at most 1 ms + (base - 5 ms)"; fi
if grep -q '^0.006,leaf0-spine0,reroute,' down/events.csv; then pass; else fail "events.csv lacks the reroute"; fi

# the terminal summary counts the events
expect_exit 0 "$FABSIM" run "${NET[@]}" --set output.dir=down2 \
  --set 'faults=[{at: 5ms, kind: switch-down, target: spine3}]'
expect_out "events       2 in summary.json events[] and events.csv"

# one NIC per node: node 1's NIC down cuts it off; its transfers fail, the run ends, the job
# failed (exit 4)
expect_exit 4 "$FABSIM" run --set cluster.nodes=2 --set cluster.nic.per_node=1 \
  --set fabric.switch_radix=8 --set simulation.fidelity=flow --set reliability.reconvergence=10us \
  --set workload.collective.size=64MiB --set output.dir=cut --json \
  --set 'faults=[{at: 100us, kind: nic-down, target: nic1}]'
cp "$WORK/out" cut.json
expect_json cut.json '.events | map(select(.kind == "transfer-failed" and (.detail | test("failed: no route")))) | length >= 1'
expect_json cut.json '.network.transfers_failed >= 1 and .outcome == "failed" and .failure.cause == "no route"'

# bad input: exit 2, located
cat > bad.yaml <<'YAML'
simulation.fidelity: flow
cluster.nodes: 4
fabric.switch_radix: 16
faults:
  - {at: 5ms, kind: link-down, target: leaf0-spien0}
YAML
expect_exit 2 "$FABSIM" run bad.yaml --set output.dir=bad
expect_err "bad.yaml:5:40: faults[0].target: no element 'spien0' in this fabric; did you mean 'spine0'?"
expect_exit 2 "$FABSIM" run --set simulation.fidelity=flow --set output.dir=bad \
  --set 'faults=[{at: 1ms, kind: gpu-slowdown, target: gpu1, factor: 2}]'
expect_err "--set:3:61: faults[0].factor: 2 is out of range; allowed (0, 1]"
expect_exit 2 "$FABSIM" run --set output.dir=bad \
  --set 'faults=[{at: 1ms, kind: link-down, target: leaf0-spine0}]'
expect_err "--set:2:25: faults[0].kind: link-down needs simulation.fidelity flow or packet"
finish
