#!/usr/bin/env bash
# The packet fidelity's two engines give the same files with faults (issue
# 27, defect 18): `fabsim run` (ev.c, the default engine without mpirun)
# against the parallel engine's sequential mode (simulation.engine=parallel
# without mpirun), which tests/pdes/mpi_run.sh proves equal to `mpirun -np 1,
# 2, 4 fabsim run` byte for byte (it also compares the default engine with 2
# ranks directly, where MPI is built in). This test needs no MPI.
#
# Recovery from faults runs on retransmission timeouts and bit-error draws:
# both engines scan timers per source GPU (a NIC's timer is its queue
# pair's: unrelated traffic elsewhere must not move it) and draw bit errors
# from the sending vertex's stream. Before, ev.c had one scan and one stream
# for the fabric: the first case took 33 us there (no packet lost) and
# 1.083 ms on the parallel engine (one lost to bit errors, recovered at the
# RTO); the Ethernet case 5.39 against 8.36 ms.
. "$(dirname "$0")/lib.sh"

COMMON=(--set simulation.fidelity=packet --set output.database=none --quiet)
SCEN=$SRC/examples/link-failure.yaml

# same NAME ARGS...: both engines on SCEN with ARGS, every file byte for byte
# (summary.json less the wall clock, the engines' effort, sim.events, and
# the command line, .scenario; scenario.yaml names the engine)
same() {
  local n=$1; shift
  expect_exit 0 "$FABSIM" run "$SCEN" "${COMMON[@]}" "$@" --set output.dir=$n-ev
  expect_exit 0 "$FABSIM" run "$SCEN" "${COMMON[@]}" "$@" --set simulation.engine=parallel \
    --set output.dir=$n-par
  local f
  if diff <(jq -S 'del(.sim.wall_s, .sim.parallel, .sim.events, .scenario)' $n-ev/summary.json) \
    <(jq -S 'del(.sim.wall_s, .sim.parallel, .sim.events, .scenario)' $n-par/summary.json) >$n.diff; then
    pass
  else fail "$n: summary.json differs between the engines: $(head -12 $n.diff)"; fi
  for f in timeseries.csv events.csv; do
    cmp -s $n-ev/$f $n-par/$f && pass || fail "$n: $f differs between the engines"
  done
}

# a link down (black hole until the reroute 2 us later), a degraded link
# with bit errors, the link up again: halving-doubling over 32 GPUs, 1 MiB
same small --set cluster.nodes=4 --set workload.collective.algorithm=halving-doubling \
  --set workload.collective.protocol=none --set workload.collective.size=1MiB \
  --set reliability.reconvergence=2us \
  --set "faults=[{at: 2us, kind: link-down, target: leaf0-spine0},
    {at: 3us, kind: link-degraded, target: leaf1-spine1, factor: 0.5, ber: 1e-6},
    {at: 10us, kind: link-up, target: leaf0-spine0}]"
# the case loads what it is meant to: a drop, a retransmission, two reroutes
expect_json small-ev/summary.json '.network.drops > 0 and .network.retransmits > 0 and
  ([.events[].kind] | map(select(. == "reroute")) | length) == 2'

# lossy Ethernet, go-back-N: a link down before its reroute, bit errors
same eth --set fabric.transport=ethernet --set workload.collective.size=16MiB \
  --set reliability.reconvergence=100us \
  --set "faults=[{at: 50us, kind: link-down, target: leaf0-spine0},
    {at: 60us, kind: link-degraded, target: leaf1-spine1, factor: 0.5, ber: 1e-5}]"
expect_json eth-ev/summary.json '.network.drops > 0 and .network.retransmits > .network.drops'

# ECN marks with DCQCN and adaptive routing's choices draw from the deciding
# vertex's own stream on both engines (ev.c drew from one stream for the
# fabric: an incast's marks and the adaptive run's figures differed)
T3=(--set fabric.tiers=3 --set fabric.switch_radix=8 --set cluster.gpus_per_node=1
    --set cluster.nic.per_node=1 --set fabric.link_bandwidth=100Gbps
    --set cluster.nic.bandwidth=100Gbps --set workload.kind=traffic --set cluster.nodes=32
    --set fabric.transport=roce --set faults=[])
same ecn "${T3[@]}" --set workload.traffic.pattern=incast --set workload.traffic.senders=16 \
  --set workload.traffic.size=256KB --set fabric.switch.buffer=4MB
expect_json ecn-ev/summary.json '.network.ecn_marks > 0'
same adaptive "${T3[@]}" --set fabric.routing=adaptive --set fabric.adaptive.flowlet_gap=2us \
  --set workload.traffic.pattern=permutation --set workload.traffic.size=256KB

# packet spraying on lossy Ethernet with selective repeat: reordering makes
# spurious NACKs, and a resend still in the fabric when its queue pair is
# done is discarded at its next hop after the workload ended. That event
# runs on both engines, but the run ends at the workload's last event
# (ev_schedule_beside): ev.c ran on to the discard (1.085804 against
# 1.085504 ms in tests/pdes/mpi_run.sh's eth-spray; here 16 GPUs, the last
# timeseries rows and the busy fractions differed)
same spray "${T3[@]}" --set cluster.nodes=16 --set fabric.transport=ethernet \
  --set fabric.routing=spray --set fabric.switch.buffer=512KB --set cluster.nic.recovery=selective \
  --set workload.traffic.pattern=permutation --set workload.traffic.size=256KB
expect_json spray-ev/summary.json '.network.drops > 0 and .network.retransmits > .network.drops'

finish
