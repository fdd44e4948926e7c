#!/usr/bin/env bash
# fabsim run at the packet fidelity on the parallel engine: under mpirun with
# 1, 2 and 4 ranks every output (summary.json, timeseries.csv, events.csv)
# equals the engine's sequential mode (simulation.engine=parallel without
# mpirun), wall clock and sim.parallel (the partition, the engine's effort) aside: the identity of docs/parallel.md, section 7.
# The cases load what can cross ranks: InfiniBand credits, PFC pauses and
# ECN marks with DCQCN, adaptive routing with flowlets, drops, NACKs and
# timeouts on lossy Ethernet with packet spraying, a multi-plane all-to-all through NVLink, and a 16-GPU (64 in make check-long)
# data-parallel training step (the executor on the global context), and
# faults (a link down, rerouted around, up again; a degraded link with bit
# errors), and traffic classes (PFC pauses blamed on jobs, their victims;
# the priority example). Then the
# parallel engine against the default one (ev.c): byte-identical in each
# case compared, faults, ECN marks, adaptive routing and spraying included.
# Args: FABSIM SRC MPIEXEC [load|sanitize] (CTest sets Open MPI's oversubscription)
#
# With `sanitize` (the sanitizer build, where a rank runs 3-10x slower): each
# case at 2 ranks only (the faults case at 2 and 4), no comparison of the two
# engines: the Release build checks every rank count and the engines; this
# one looks for memory errors on the paths ranks take, and must finish on a
# loaded 2-core machine well inside its time limit.
#
# With `load`: the same identity under CPU load, repeated. Two busy loops
# run beside 4 ranks (on this 2-core machine a rank then waits for a core at
# most exchanges, and each rank's run loop slices simulated time differently
# every time); two small cases, faults (a link down and up, reroutes, a
# degraded link: global actions with collectives in the middle of the packet
# traffic) and a PFC incast, run LOAD_RUNS times each (default 5) and every
# run must equal the sequential mode. Each mpirun has a time limit: a
# deadlock (ranks in different collectives) fails with a message instead
# of hanging the suite.
MPIEXEC=$3
MODE=${4:-}
. "$2/tests/cli/lib.sh" "$1" "$2"

COMMON=(--set simulation.fidelity=packet --set output.database=none)
TIER3=(--set fabric.tiers=3 --set fabric.switch_radix=8 --set cluster.gpus_per_node=1
       --set cluster.nic.per_node=1 --set fabric.link_bandwidth=100Gbps
       --set cluster.nic.bandwidth=100Gbps --set workload.kind=traffic)
declare -A CASE
# The ring, pinned, and the tree the tuner picks at 4 nodes and 4 MiB
CASE[ib-ring]="--set cluster.nodes=4 --set workload.collective.size=4MiB --set workload.collective.algorithm=ring"
CASE[ib-tree]="--set cluster.nodes=4 --set workload.collective.size=4MiB"
CASE[roce-incast]="${TIER3[*]} --set cluster.nodes=128 --set fabric.transport=roce
  --set workload.traffic.pattern=incast --set workload.traffic.senders=24 --set workload.traffic.size=256KB
  --set fabric.switch.buffer=4MB"
CASE[ar-flowlet]="${TIER3[*]} --set cluster.nodes=128 --set fabric.transport=roce
  --set fabric.routing=adaptive --set fabric.adaptive.flowlet_gap=2us
  --set workload.traffic.pattern=permutation --set workload.traffic.size=256KB"
# PFC pauses with nothing random (no ECN marking, no DCQCN): byte-identical engines
CASE[roce-pfc]="${TIER3[*]} --set cluster.nodes=128 --set fabric.transport=roce --set fabric.roce.cc=none
  --set fabric.ecn.pmax=0 --set fabric.ecn.kmin=100MB --set fabric.ecn.kmax=200MB
  --set workload.traffic.pattern=incast --set workload.traffic.senders=24 --set workload.traffic.size=256KB
  --set fabric.switch.buffer=4MB"
CASE[eth-spray]="${TIER3[*]} --set cluster.nodes=128 --set fabric.transport=ethernet
  --set fabric.routing=spray --set fabric.switch.buffer=512KB --set cluster.nic.recovery=selective
  --set workload.traffic.pattern=permutation --set workload.traffic.size=256KB"
# 8plane-a2a keeps the links at 100 ns: at the 200 ns default the open defect 12
# below (one sample a few ps apart between the engines) also moves one switch
# port's utilization across a 200 ns sample row (timeseries.csv, rows 562-571),
# so the engines' byte-for-byte comparison would fail on it, not on anything new.
CASE[8plane-a2a]="--set cluster.nodes=2 --set workload.collective.op=alltoall
  --set workload.collective.size=8MiB --set fabric.link_latency=100ns"
CASE[dp-train]="--set output.sample_interval=1ms"
# 16 GPUs under the sanitizers and in make test: the same executor paths
# (buckets, the data-parallel AllReduce on the global context) with a fifth
# of the events (the 64-GPU step was 32 of this test's 87 CPU s, Release; alone
# ~45 s under the sanitizers on a loaded machine); 64 GPUs in make check-long
# (pdes/mpi_run_long, FABSIM_TEST_LONG)
if [ "$MODE" = sanitize ] || [ "${FABSIM_TEST_LONG:-0}" = 0 ]; then
  CASE[dp-train]+=" --set cluster.nodes=2 --set workload.global_batch=128"
fi
# faults: array arguments (the list has spaces)
FAULTS=(--set workload.collective.size=16MiB --set reliability.reconvergence=20us
        --set "faults=[{at: 30us, kind: link-down, target: leaf0-spine0},
          {at: 40us, kind: link-degraded, target: leaf1-spine1, factor: 0.5, ber: 1e-6},
          {at: 200us, kind: link-up, target: leaf0-spine0}]")
declare -A SCEN LOAD_CASE LOAD_SCEN
# The small faults case (load and sanitize modes): the same actions on 4 nodes
# in ~2 ms of simulated time; protocol none: no launch overhead, so the faults
# at 2-10 us meet the flows in flight
LOAD_CASE[faults]="--set cluster.nodes=4 --set workload.collective.algorithm=halving-doubling
  --set workload.collective.protocol=none
  --set workload.collective.size=1MiB --set reliability.reconvergence=2us"
LOAD_FAULTS=(--set "faults=[{at: 2us, kind: link-down, target: leaf0-spine0},
  {at: 3us, kind: link-degraded, target: leaf1-spine1, factor: 0.5, ber: 1e-6},
  {at: 10us, kind: link-up, target: leaf0-spine0}]")
if [ "$MODE" = sanitize ]; then # the 16 MiB case takes ~80 s at 2 ranks there
  CASE[faults]=${LOAD_CASE[faults]}
  FAULTS=("${LOAD_FAULTS[@]}")
fi
for c in ib-ring ib-tree roce-incast roce-pfc ar-flowlet eth-spray; do SCEN[$c]=$SRC/examples/default.yaml; done
SCEN[8plane-a2a]=$SRC/examples/deepseek-8plane.yaml
SCEN[dp-train]=$SRC/examples/dense-7b-64gpu.yaml
SCEN[faults]=$SRC/examples/link-failure.yaml
SCEN[jobs]=$SRC/tests/pdes/jobs.yaml # several jobs (jobs:): training and a collective
# traffic classes (fabric.classes) with PFC pauses and their victims by job
# (a PAUSE's cause crosses the link with its frame on both engines)
SCEN[classes-pfc]=$SRC/tests/pdes/classes.yaml
# the classes example (strict priority over a bulk class, InfiniBand
# credits): the default engine against 2 ranks only (~20 s of CPU a run)
SCEN[classes-example]=$SRC/examples/shared/priority-classes.yaml

same() { # same DIR-A DIR-B: summary (wall clock and arguments aside), series, events
  diff <(jq -S 'del(.sim.wall_s, .sim.parallel, .scenario)' "$1/summary.json") \
       <(jq -S 'del(.sim.wall_s, .sim.parallel, .scenario)' "$2/summary.json") >/dev/null &&
    cmp -s "$1/timeseries.csv" "$2/timeseries.csv" && cmp -s "$1/events.csv" "$2/events.csv"
}
differ() { # differ DIR-A DIR-B: the first lines that differ
  diff <(jq -S 'del(.sim.wall_s, .sim.parallel, .scenario)' "$1/summary.json") \
       <(jq -S 'del(.sim.wall_s, .sim.parallel, .scenario)' "$2/summary.json") | head -10
  cmp "$1/timeseries.csv" "$2/timeseries.csv"; cmp "$1/events.csv" "$2/events.csv"
}

if [ "$MODE" = load ]; then
  runs=${LOAD_RUNS:-5}
  LOAD_CASE[incast]="${TIER3[*]} --set cluster.nodes=128 --set fabric.transport=roce
    --set workload.traffic.pattern=incast --set workload.traffic.senders=8 --set workload.traffic.size=64KB
    --set fabric.switch.buffer=512KB"
  LOAD_SCEN[faults]=$SRC/examples/link-failure.yaml
SCEN[jobs]=$SRC/tests/pdes/jobs.yaml # several jobs (jobs:): training and a collective
  LOAD_SCEN[incast]=$SRC/examples/default.yaml
  busy=()
  for _ in 1 2; do (while :; do :; done) & busy+=($!); done
  trap 'kill "${busy[@]}" 2>/dev/null; rm -rf "$WORK"' EXIT
  trap 'exit 143' TERM INT # the EXIT trap still stops the loops
  for c in faults incast; do
    extra=()
    [ "$c" = faults ] && extra=("${LOAD_FAULTS[@]}")
    # shellcheck disable=SC2086
    expect_exit 0 "$FABSIM" run "${LOAD_SCEN[$c]}" "${COMMON[@]}" ${LOAD_CASE[$c]} "${extra[@]}" \
      --set simulation.engine=parallel --set output.dir=$c-seq --quiet
    for i in $(seq 1 "$runs"); do
      # shellcheck disable=SC2086
      timeout -k 10 "${LOAD_TIMEOUT:-120}" "$MPIEXEC" -np 4 "$FABSIM" run "${LOAD_SCEN[$c]}" "${COMMON[@]}" \
        ${LOAD_CASE[$c]} "${extra[@]}" --set output.dir=$c-load$i --quiet >"$WORK/out" 2>"$WORK/err"
      rc=$?
      if [ $rc = 124 ] || [ $rc = 137 ]; then
        fail "$c, run $i of $runs under load: 4 ranks did not finish within ${LOAD_TIMEOUT:-120} s (deadlock: ranks in different collectives?)"
        continue
      fi
      [ $rc = 0 ] && pass || { fail "$c, run $i under load: exit $rc -- $(head -c 400 "$WORK/err")"; continue; }
      same $c-seq $c-load$i && pass || fail "$c, run $i of $runs under load differs from the sequential mode:
$(differ $c-seq $c-load$i)"
    done
  done
  expect_json faults-seq/summary.json '.network.drops > 0 and .network.retransmits > 0 and
    .network.flows_rerouted > 0 and ([.events[].kind] | map(select(. == "reroute")) | length) == 2'
  expect_json incast-seq/summary.json '.network.pfc_pauses > 0'
  finish
  exit $?
fi

# the engine's sequential mode (no MPI), then 1, 2 and 4 ranks
for c in ib-ring ib-tree roce-incast roce-pfc ar-flowlet eth-spray 8plane-a2a dp-train faults jobs \
  classes-pfc; do
  scen=${SCEN[$c]}
  extra=()
  [ "$c" = faults ] && extra=("${FAULTS[@]}")
  # shellcheck disable=SC2086
  expect_exit 0 "$FABSIM" run "$scen" "${COMMON[@]}" ${CASE[$c]:-} "${extra[@]}" \
    --set simulation.engine=parallel --set output.dir=$c-seq --quiet
  nps="1 2 4"
  if [ "$MODE" = sanitize ]; then nps=2; [ "$c" = faults ] && nps="2 4"; fi
  for np in $nps; do
    # shellcheck disable=SC2086
    expect_exit 0 "$MPIEXEC" -np $np "$FABSIM" run "$scen" "${COMMON[@]}" ${CASE[$c]:-} "${extra[@]}" \
      --set output.dir=$c-np$np --quiet
    same $c-seq $c-np$np && pass || fail "$c: $np ranks differ from the sequential mode:
$(diff <(jq -S 'del(.sim.wall_s, .sim.parallel, .scenario)' $c-seq/summary.json) \
       <(jq -S 'del(.sim.wall_s, .sim.parallel, .scenario)' $c-np$np/summary.json) | head -20)"
  done
done
# the cases load what they are meant to
expect_json roce-incast-seq/summary.json '.network.pfc_pauses > 0 and .network.ecn_marks > 0 and .network.cnps > 0'
expect_json roce-pfc-seq/summary.json '.network.pfc_pauses > 0 and .network.ecn_marks == 0'
expect_json eth-spray-seq/summary.json '.network.drops > 0 and .network.retransmits > 0'
expect_json 8plane-a2a-seq/summary.json '.network.transfers > 0'
expect_json dp-train-seq/summary.json '.step.time_s > 0 and .step.exposed_comm_s > 0'
expect_json jobs-seq/summary.json '[.jobs[] | .time_s > 0] == [true, true, true] and
  .jobs[0].slowdown > 1 and .jobs[2].slowdown == 1'
expect_json faults-seq/summary.json '.network.drops > 0 and .network.retransmits > 0 and
  .network.flows_rerouted > 0 and .network.transfers_failed == 0 and ([.events[].kind] | index("reroute") != null)'
expect_json classes-pfc-seq/summary.json '.network.pfc_pauses > 0 and .network.ecn_marks == 0 and
  (.jobs[0].pfc.victims | length) > 0 and ([.traffic_classes.classes[].bytes > 0] | map(select(.)) | length) == 3'

if [ "$MODE" != sanitize ]; then
# `fabsim run` (the default engine, ev.c) against `mpirun -np 2 fabsim run`:
# a queue pair's end reaches its phase one lookahead later on both, and what
# happens at one vertex at one picosecond runs in the same order on both
# (credits, PFC frames, arrivals by sending vertex, then wakes: src/net
# NET__ORD_*), so where nothing random or timed per vertex decides, the
# outputs are byte-identical (sim.events aside: the engines count their
# effort differently, 19.5 against 15.5 events per data packet)
same_engines() {
  diff <(jq -S 'del(.sim.wall_s, .sim.parallel, .sim.events, .scenario)' "$1/summary.json") \
       <(jq -S 'del(.sim.wall_s, .sim.parallel, .sim.events, .scenario)' "$2/summary.json") >/dev/null &&
    cmp -s "$1/timeseries.csv" "$2/timeseries.csv" && cmp -s "$1/events.csv" "$2/events.csv"
}
for c in ib-ring ib-tree 8plane-a2a dp-train roce-pfc roce-incast ar-flowlet eth-spray faults \
  classes-pfc classes-example; do
  scen=${SCEN[$c]}
  extra=()
  [ "$c" = faults ] && extra=("${FAULTS[@]}")
  # shellcheck disable=SC2086
  expect_exit 0 "$FABSIM" run "$scen" "${COMMON[@]}" ${CASE[$c]:-} "${extra[@]}" --set output.dir=$c-ev --quiet
done
expect_exit 0 "$MPIEXEC" -np 2 "$FABSIM" run "${SCEN[classes-example]}" "${COMMON[@]}" \
  --set output.dir=classes-example-np2 --quiet
# The 8-plane all-to-all (its PXN forwarding crosses NVLink to the peer's
# rail before the network) had its mean FCT a few ppm apart (issue #13,
# defect 12): two packets from gpu5 and gpu6 reached the NVSwitch at the
# same picosecond for gpu4 and queued in the order their events were
# scheduled (ev.c) or by sending LP (pdes), so two transfers ended 181 ps
# apart. Now every figure, and the tree's, is the same bytes. The faults
# case too (issue 27, defect 18): retransmission timers are scanned per
# source GPU and bit errors drawn per sending vertex on both engines (ev.c
# had one scan and one stream for the fabric: 7.211 against 9.133 ms). ECN
# marks (roce-incast) and adaptive routing's choices (ar-flowlet) too: both
# engines draw them from the deciding vertex's own stream (ev.c drew from one
# stream for the fabric: the same distributions, other draws). Packet
# spraying on lossy Ethernet (eth-spray) too: a spurious resend still in the
# fabric when its queue pair is done is discarded after the workload's last
# event; ev.c's clock ran on to it (1.085804 against 1.085504 ms), now the
# run ends at the workload's last event on both (ev_schedule_beside; a 5 %
# bound on the p99 FCT stood here before, 2026-12-07).
for c in ib-ring ib-tree 8plane-a2a dp-train roce-pfc roce-incast ar-flowlet eth-spray faults \
  classes-pfc classes-example; do
  same_engines $c-ev $c-np2 && pass || fail "$c: the default engine and 2 ranks differ:
$(diff <(jq -S 'del(.sim.wall_s, .sim.parallel, .sim.events, .scenario)' $c-ev/summary.json) \
       <(jq -S 'del(.sim.wall_s, .sim.parallel, .sim.events, .scenario)' $c-np2/summary.json) | head -20)"
done

fi

# Ctrl-C (SIGTERM from mpirun, here sent to the ranks themselves): the ranks vote at the next
# window, stop together, and rank 0 writes whole files marked incomplete (exit 130).
# No guessed delay: each rank stops itself once simulated time has advanced
# (FABSIM_TEST_PAUSE, fabsim/core.h); once one has, the run is under way, and
# every rank gets SIGTERM, then SIGCONT (a rank still inside a window waits
# for the stopped one and takes the signal there). CTest's TIMEOUT bounds a hang.
FABSIM_TEST_PAUSE=simulate "$MPIEXEC" -np 2 "$FABSIM" run "${COMMON[@]}" --set cluster.nodes=16 \
  --set workload.collective.size=1GiB --set output.dir="$WORK/intr" --quiet >intr.out 2>intr.err &
pid=$!
ranks=""
while kill -0 $pid 2>/dev/null; do
  ranks=$(pgrep -f "^$FABSIM run .*output.dir=$WORK/intr")
  stopped=0
  for r in $ranks; do case $(ps -o stat= -p "$r" 2>/dev/null) in T*) stopped=1 ;; esac; done
  [ $stopped = 1 ] && [ "$(echo "$ranks" | wc -w)" = 2 ] && break
  sleep 0.05
done
[ -n "$ranks" ] && pass || fail "the ranks never started"
# shellcheck disable=SC2086
kill -TERM $ranks
# shellcheck disable=SC2086
kill -CONT $ranks
# The other rank may reach its own pause only now (it was behind, not yet
# waiting for the stopped one: on a loaded machine it often is): it then
# stops itself after the SIGCONT above, with the SIGTERM already taken.
# Continue whichever rank is found stopped until the run ends.
while kill -0 $pid 2>/dev/null; do
  for r in $ranks; do case $(ps -o stat= -p "$r" 2>/dev/null) in T*) kill -CONT "$r" ;; esac; done
  sleep 0.1
done
wait $pid
[ $? != 0 ] && pass || fail "an interrupted run exited 0"
expect_json intr/summary.json '.complete == false and .sim.sim_time_s > 0'
grep -q 'marked "complete": false' intr.err && pass || fail "no word of the stop: $(cat intr.err)"
finish
