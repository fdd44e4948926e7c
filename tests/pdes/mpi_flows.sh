#!/usr/bin/env bash
# output.flows on the parallel engine (issue 29): under mpirun with 2 and 4
# ranks flows.csv is byte-identical to the engine's sequential mode and to
# the default engine: every rank hears every queue pair's end (the phases'
# bookkeeping is the same on every rank), rank 0 writes. Cases: an
# all-to-all of 16 GPUs, and a halving-doubling AllReduce with a link down,
# degraded and up again (reroutes: a row's path is the one it finished on).
# Args: FABSIM SRC MPIEXEC [load|sanitize] (CTest sets Open MPI's oversubscription)
MPIEXEC=$3
MODE=${4:-}
. "$2/tests/cli/lib.sh" "$1" "$2"

COMMON=(--set simulation.fidelity=packet --set output.database=none --set output.flows=true
  --set output.report=false --quiet)
declare -A CASE SCEN
CASE[a2a]="--set workload.kind=traffic --set workload.traffic.pattern=all-to-all --set cluster.nodes=2"
SCEN[a2a]=$SRC/examples/default.yaml
CASE[faults]="--set cluster.nodes=4 --set workload.collective.algorithm=halving-doubling
  --set workload.collective.protocol=none --set workload.collective.size=1MiB
  --set reliability.reconvergence=2us"
SCEN[faults]=$SRC/examples/link-failure.yaml
FAULTS=(--set "faults=[{at: 2us, kind: link-down, target: leaf0-spine0},
  {at: 3us, kind: link-degraded, target: leaf1-spine1, factor: 0.5, ber: 1e-6},
  {at: 10us, kind: link-up, target: leaf0-spine0}]")
ranks="2 4"
[ "$MODE" = sanitize ] && ranks=2
for c in a2a faults; do
  extra=()
  [ "$c" = faults ] && extra=("${FAULTS[@]}")
  # shellcheck disable=SC2086 # the case's --set pairs split on purpose
  expect_exit 0 "$FABSIM" run "${SCEN[$c]}" "${COMMON[@]}" ${CASE[$c]} "${extra[@]}" \
    --set simulation.engine=sequential --set output.dir="$c-default"
  # shellcheck disable=SC2086
  expect_exit 0 "$FABSIM" run "${SCEN[$c]}" "${COMMON[@]}" ${CASE[$c]} "${extra[@]}" \
    --set simulation.engine=parallel --set output.dir="$c-seq"
  [ -s "$c-seq/flows.csv" ] && pass || fail "$c: no flows.csv"
  cmp -s "$c-default/flows.csv" "$c-seq/flows.csv" && pass || fail "$c: the engines' flows.csv differ"
  for np in $ranks; do
    # shellcheck disable=SC2086
    expect_exit 0 timeout -k 10 240 "$MPIEXEC" -np $np "$FABSIM" run "${SCEN[$c]}" "${COMMON[@]}" \
      ${CASE[$c]} "${extra[@]}" --set output.dir="$c-$np"
    cmp -s "$c-seq/flows.csv" "$c-$np/flows.csv" && pass || fail "$c: $np ranks' flows.csv differs"
  done
done
expect_json faults-seq/summary.json '[.events[].kind] | index("reroute") != null'
finish
