#!/usr/bin/env bash
# The memory estimate holds what each fidelity keeps, and simulation.memory_limit
# holds while the run goes (issue 27, defect 3). At the analytic fidelity an
# all-to-all's pairs had no term (a 2,048-GPU 3-tier all-to-all: estimated
# 24.6 MiB, peak 421 MiB; at 8,192 nodes 476 MiB against tens of GiB), and
# the limit was checked only before the run. Now the estimate covers it and
# the allocator's running total is held to the limit: exit 3, naming the key.
. "$(dirname "$0")/lib.sh"
E=$SRC/examples
A2A=(--set fabric.tiers=3 --set cluster.nodes=256 --set workload.collective.op=alltoall)

expect_exit 0 "$FABSIM" topo "${A2A[@]}"
expect_out "analytic 464.3 MiB"
expect_exit 2 timeout 120 "$FABSIM" run "${A2A[@]}" --set simulation.memory_limit=300MiB --set output.dir=o --quiet
expect_err "--set:2:15: cluster.nodes: 2048 GPUs and 6144 links at simulation.fidelity analytic need about 464.3 MiB"
expect_err "110 B per transfer of a phase, 4192256 of them), more than the 300 MiB of simulation.memory_limit; allowed: fewer cluster.nodes"
# a refusal offers only a cheaper fidelity that fits
expect_exit 2 "$FABSIM" topo "${A2A[@]}" --set simulation.fidelity=flow --set simulation.memory_limit=300MiB
expect_err "allowed: fewer cluster.nodes"
grep -q "or simulation.fidelity analytic" "$WORK/err" && fail "offers the analytic fidelity at 464 MiB for 300 MiB" || pass
expect_exit 2 "$FABSIM" topo "${A2A[@]}" --set simulation.fidelity=flow --set simulation.memory_limit=1GiB
expect_err "or simulation.fidelity analytic (464.3 MiB)"

# while it runs: a link flapping 20,000 times grows the event log past 40 MiB
expect_exit 3 timeout 120 "$FABSIM" run "$E/link-failure.yaml" --set reliability.reconvergence=1ms \
  --set 'faults=[{at: 2ms, kind: link-flap, target: leaf0-spine0, duration: 500us, period: 3ms, count: 20000}]' \
  --set simulation.memory_limit=40MiB --set output.dir=grow --quiet
expect_err "past simulation.memory_limit (40 MiB); raise it, or reduce the scenario"
[ ! -e grow/summary.json ] && pass || fail "grow/summary.json written past the limit"
# and with room, the same run completes
expect_exit 0 timeout 120 "$FABSIM" run "$E/link-failure.yaml" --set reliability.reconvergence=1ms \
  --set 'faults=[{at: 2ms, kind: link-flap, target: leaf0-spine0, duration: 500us, period: 3ms, count: 20000}]' \
  --set simulation.memory_limit=1GiB --set output.dir=room --quiet
finish
