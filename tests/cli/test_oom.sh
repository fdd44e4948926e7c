#!/usr/bin/env bash
# Out of memory as a tested path (STYLE.md 8 and 14; SQLite's faultsim,
# Lua's ltests.c): in representative runs every allocation fails once, and
# every path ends in exit 3 with the out-of-memory message: no crash, no
# other status, and under the sanitizer build no memory error and no leak
# (LeakSanitizer's report would change the status to 23).
#
# FABSIM_TEST_ALLOC_FAIL=each (src/core/alloc.c) makes the run fork at each
# allocation: the child takes the out-of-memory path from there, the parent
# checks that it exited 3 and goes on; the run itself must then finish as
# without the hook (the same files). FABSIM_TEST_ALLOC_FAIL=N fails the
# N-th allocation of the process itself.
#
# The runs, every allocation of each (about 900, 600 and 800): a training
# step at the analytic fidelity (examples/dense-7b-64gpu.yaml cut to 2
# layers on 16 GPUs, tensor, pipeline and data parallel: config, topology,
# the step's graph, the executor, the report), a collective at the flow
# fidelity (the AllReduce of examples/default.yaml on 4 nodes), a packet run
# (the same on 2 nodes, 1 MiB). Each writes every file a run writes
# (summary.json, scenario.yaml, timeseries.csv, events.csv, report.html,
# results.sqlite). About 50 CPU seconds under the sanitizers (a child each,
# each with its leak check), 10 in the Release build.
. "$(dirname "$0")/lib.sh"

COMMON=(--set output.report=true --quiet)
declare -A ARGS
ARGS[train]="$SRC/examples/dense-7b-64gpu.yaml --set simulation.fidelity=analytic
  --set cluster.nodes=2 --set workload.model.layers=2 --set workload.parallel.tp=2
  --set workload.parallel.pp=2 --set workload.global_batch=8 --set workload.steps=1"
ARGS[flow]="$SRC/examples/default.yaml --set simulation.fidelity=flow --set cluster.nodes=4
  --set workload.collective.size=64MiB"
ARGS[packet]="$SRC/examples/default.yaml --set simulation.fidelity=packet --set cluster.nodes=2
  --set workload.collective.size=1MiB"

same_files() { # same_files DIR-A DIR-B: the run's files, wall clock aside
  diff <(jq -S 'del(.sim.wall_s)' "$1/summary.json") <(jq -S 'del(.sim.wall_s)' "$2/summary.json") \
    >/dev/null && cmp -s "$1/timeseries.csv" "$2/timeseries.csv" &&
    cmp -s "$1/events.csv" "$2/events.csv" && cmp -s "$1/scenario.yaml" "$2/scenario.yaml"
}

for run in train flow packet; do
  # the run, then the same with every allocation failed once, each in a child
  # of its own; in two folders, so that their files name the same output.dir
  mkdir -p ref each
  cd ref || exit 1
  # shellcheck disable=SC2086
  expect_exit 0 "$FABSIM" run ${ARGS[$run]} "${COMMON[@]}" --set output.dir=$run
  cd ../each || exit 1
  # shellcheck disable=SC2086
  expect_exit 0 env FABSIM_TEST_ALLOC_FAIL=each "$FABSIM" run ${ARGS[$run]} "${COMMON[@]}" \
    --set output.dir=$run
  cd .. || exit 1
  cp "$WORK/err" $run-each.err
  line=$(grep '^fabsim: test hook: ' $run-each.err | tail -1)
  allocs=$(sed -E 's/^fabsim: test hook: ([0-9]+) allocations.*/\1/' <<<"$line")
  children=$(sed -E 's/.*allocations, ([0-9]+) failed.*/\1/' <<<"$line")
  bad=$(sed -E 's/.*; ([0-9]+) did not exit 3.*/\1/' <<<"$line")
  oom=$(grep -c '^fabsim: out of memory allocating [0-9]* bytes; reduce the scenario size' $run-each.err)
  echo "$run: $allocs allocations, $children failed one at a time, $bad did not exit 3, $oom messages"
  [ -n "$line" ] && [ "$allocs" -gt 100 ] && pass || fail "$run: no count of allocations: $line"
  [ "$children" = "$allocs" ] && pass || fail "$run: $children of $allocs allocations failed"
  [ "$bad" = 0 ] && pass || fail "$run: $bad paths did not exit 3: $line
$(grep -v '^fabsim: out of memory' $run-each.err | head -20)"
  [ "$oom" = "$children" ] && pass || fail "$run: $oom out-of-memory messages for $children paths"
  # nothing else on stderr: no sanitizer report, no crash, no other message
  grep -v -e '^fabsim: out of memory allocating' -e '^fabsim: test hook: ' $run-each.err >extra
  [ ! -s extra ] && pass || fail "$run: more than the messages on stderr: $(head -c 600 extra)"
  same_files ref/$run each/$run && pass || fail "$run: the run under the hook wrote other files"
  # no temporary left by a child that died while the files were written
  leftover=$(find each/$run -name '.*' ! -name .fabsim.lock)
  [ -z "$leftover" ] && pass || fail "$run: temporaries left: $leftover"

  # the process itself out of memory: the first allocation, one in the
  # middle, the last; and one past the last, which never comes
  [ -n "$allocs" ] || continue
  for n in 1 $((allocs / 2)) "$allocs"; do
    # shellcheck disable=SC2086
    expect_exit 3 env FABSIM_TEST_ALLOC_FAIL=$n "$FABSIM" run ${ARGS[$run]} "${COMMON[@]}" \
      --set output.dir=$run-$n
    expect_err "fabsim: out of memory allocating "
    [ "$(wc -l <"$WORK/err")" = 1 ] && pass || fail "$run, allocation $n: $(head -c 600 "$WORK/err")"
  done
  # shellcheck disable=SC2086
  expect_exit 0 env FABSIM_TEST_ALLOC_FAIL=$((allocs + 1)) "$FABSIM" run ${ARGS[$run]} \
    "${COMMON[@]}" --set output.dir=$run-past
  expect_err "fabsim: test hook: $allocs allocations, allocation $((allocs + 1)) never came"
done

# exit status 3 is what the docs say out of memory is
expect_exit 3 env FABSIM_TEST_ALLOC_FAIL=1 "$FABSIM" run --quiet --set output.dir=first
expect_err "fabsim: out of memory allocating"
finish
