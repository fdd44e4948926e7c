#!/bin/sh
# Chakra trace jobs in a jobs: list (docs/shared-fabric.md, "Several jobs"):
# rank r runs on the job's r-th GPU. The 8-rank trace of examples/traces as
# a job beside a collective job gives the single trace scenario's figures,
# wherever it is placed; a GPU slowdown reaches the rank on that GPU; a GPU
# failure stops that job only (the other finishes) and the run fails (exit
# 4); more ranks than the job's GPUs are refused at the key.
. "$(dirname "$0")/lib.sh"

cp -r "$SRC/examples/traces" .
trace='{kind: trace, trace: {path: traces/et.%d.et, ranks: 8, compute: recorded}}'
coll='{kind: collective, collective: {op: allreduce, size: 256MiB}}'
head='cluster: {nodes: 4, gpus_per_node: 4, gpu: H100}
simulation: {fidelity: flow}'
printf 'cluster: {nodes: 2, gpus_per_node: 4, gpu: H100}\nsimulation: {fidelity: flow}\nworkload: %s\n' "$trace" > single.yaml
printf '%s\njobs:\n  - {name: t, gpus: 8, workload: %s}\n  - {name: c, gpus: 8, workload: %s}\n' "$head" "$trace" "$coll" > first.yaml
printf '%s\njobs:\n  - {name: c, gpus: 8, workload: %s}\n  - {name: t, gpus: 8, workload: %s}\n' "$head" "$coll" "$trace" > second.yaml

pick='[.time_s, .iteration_s, [.per_rank[] | [.compute_s, .comm_s, .end_s]]]'
expect_exit 0 "$FABSIM" run single.yaml --set output.dir=o-single --quiet --json
want=$(jq -c ".trace | $pick" "$WORK/out")
full=$(jq '.trace.time_s' "$WORK/out")
for f in first second; do
  expect_exit 0 "$FABSIM" run $f.yaml --set output.dir=o-$f --quiet --json
  got=$(jq -c ".jobs[] | select(.name == \"t\") | .trace | $pick" "$WORK/out")
  if [ "$got" = "$want" ]; then pass; else fail "$f: [$got], single: [$want]"; fi
  expect_json "$WORK/out" '[.jobs[] | .slowdown] == [1, 1] and .outcome == "done"'
done

# rank 1 at half speed: gpu1 alone, gpu9 when the job is on nodes 2-3
slow() { printf 'faults=[{at: 0s, kind: gpu-slowdown, target: gpu%s, factor: 0.5}]' "$1"; }
expect_exit 0 "$FABSIM" run single.yaml --set output.dir=o-s1 --set "$(slow 1)" --quiet --json
want=$(jq -c ".trace | $pick" "$WORK/out")
expect_exit 0 "$FABSIM" run second.yaml --set output.dir=o-s2 --set "$(slow 9)" --quiet --json
got=$(jq -c ".jobs[1].trace | $pick" "$WORK/out")
if [ "$got" = "$want" ]; then pass; else fail "slowed: [$got], single: [$want]"; fi
expect_json "$WORK/out" ".jobs[1].trace.time_s > $full"
expect_json "$WORK/out" '.jobs[1].trace.per_rank[1].compute_s > .jobs[1].trace.per_rank[0].compute_s'

# a GPU of t fails: t stops, c finishes, the run failed
expect_exit 4 "$FABSIM" run second.yaml --set output.dir=o-fail \
  --set 'faults=[{at: 0.5ms, kind: gpu-fail, target: gpu9}]' --quiet
expect_err "fabsim: the simulated job failed: gpu-fail gpu9 at 500 us"
expect_json o-fail/summary.json '.outcome == "failed" and .jobs[1].time_s == null and .jobs[1].trace.iterations_done == 0 and .jobs[0].time_s > 0'
expect_json o-fail/summary.json '[.events[] | select(.kind == "job-stopped") | .detail] == ["job t stopped: gpu9 failed; the other jobs ran on"]'

# more ranks than the job's GPUs
sed 's/ranks: 8/ranks: 12/' second.yaml > big.yaml
expect_exit 2 "$FABSIM" run big.yaml --quiet
expect_err "jobs[1].workload.trace.ranks: 12 ranks but the job has 8 GPUs (rank r runs on the job's r-th GPU)"

finish
