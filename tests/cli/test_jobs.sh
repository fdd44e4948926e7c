#!/bin/sh
# jobs: (docs/shared-fabric.md, "Several jobs"): bad entries are refused
# before anything is simulated, exit 2, located at the job's key.
. "$(dirname "$0")/lib.sh"

base='cluster: {nodes: 8, gpus_per_node: 1}
fabric: {topology: fat-tree, tiers: 2, switch_radix: 8}
output: {dir: out-jobs}'

printf '%s\njobs:\n  - {name: a, gpus: 8, workload: {kind: collective}}\n  - {name: b, gpus: 4, workload: {kind: collective}}\n' "$base" > full.yaml
expect_exit 2 "$FABSIM" run full.yaml --quiet
expect_err "full.yaml:6:5: jobs[1].placement: placement: packed wants 4 nodes, but only 0 of the cluster's 8 are free"

printf '%s\njobs:\n  - {name: a, gpus: 3, workload: {kind: collective}}\n' "$base" > odd.yaml
expect_exit 0 "$FABSIM" run odd.yaml --quiet --set cluster.gpus_per_node=1
printf '%s\njobs:\n  - {name: a, gpus: 3, workload: {kind: collective}}\n' "$base" | sed 's/gpus_per_node: 1/gpus_per_node: 2/; s/switch_radix: 8/switch_radix: 16/' > odd2.yaml
expect_exit 2 "$FABSIM" run odd2.yaml --quiet
expect_err "odd2.yaml:5:21: jobs[0].gpus: 3 GPUs are not whole nodes of cluster.gpus_per_node 2"

printf '%s\njobs:\n  - {name: a, gpus: 4, workload: {kind: trace, trace: {path: x.et}}}\n' "$base" > trace.yaml
expect_exit 2 "$FABSIM" run trace.yaml --quiet
expect_err "trace.yaml:5:62: jobs[0].workload.trace.path: rank 0: cannot open x.et"

# training jobs: their collectives run live (a model that times them alone would hide the others)
model='model: {mlp_layers: [1024, 1024, 10]}, parallel: {dp: 4}, micro_batch: 64, global_batch: 256'
# (here both on leaf 0); a job that shares no link keeps the comm model it would have alone
model2='model: {mlp_layers: [1024, 1024, 10]}, parallel: {dp: 2}, micro_batch: 64, global_batch: 128'
printf '%s\njobs:\n  - {name: a, gpus: 2, workload: {kind: training, comm_model: live, %s}}\n  - {name: b, gpus: 2, workload: {kind: training, comm_model: symmetric, %s}}\n' "$base" "$model2" "$model2" > train.yaml
expect_exit 2 "$FABSIM" run train.yaml --quiet
expect_err "train.yaml:6:63: jobs[1].workload.comm_model: symmetric times each collective by class, but this job may share links with job 'a' and the jobs it may meet run live"
# without a live job among them, the two are timed by class and stretched
sed -i 's/comm_model: live, //' train.yaml
expect_exit 0 "$FABSIM" run train.yaml --quiet
expect_json out-jobs/summary.json '[.jobs[] | .timed] == [true, true] and .jobs[1].step.comm_model == "symmetric"'
printf '%s\njobs:\n  - {name: a, gpus: 4, workload: {kind: training, %s}}\n  - {name: b, gpus: 4, workload: {kind: training, steps: 2, comm_model: reuse, %s}}\n' "$base" "$model" "$model" > train2.yaml
expect_exit 0 "$FABSIM" run train2.yaml --quiet
[ "$(jq -r '[.jobs[] | .kind, (.steps | length), (.step.time_s > 0), .slowdown, .isolated, .step.comm_model] | map(tostring) | join(" ")' out-jobs/summary.json)" = "training 1 true 1 true live training 2 true 1 true reuse" ] \
  || fail "two training jobs on disjoint leaves: $(jq -c '[.jobs[] | {kind, steps, slowdown, isolated}]' out-jobs/summary.json)"
grep -q 'b shares no link with another job: its collectives were timed once each' out-jobs/events.csv \
  || fail "events.csv lacks the note on b's timing"

printf '%s\njobs:\n  - {name: a, gpus: 4, placment: packed, workload: {kind: collective}}\n' "$base" > typo.yaml
expect_exit 2 "$FABSIM" run typo.yaml --quiet
expect_err "typo.yaml:5:24: jobs[0]: 'placment' is not a job field; did you mean 'placement'?"

printf '%s\njobs:\n  - {name: a, gpus: 4, workload: {kind: collective, collective: {size: 1parsec}}}\n' "$base" > size.yaml
expect_exit 2 "$FABSIM" run size.yaml --quiet
expect_err "size.yaml:5:72: jobs[0].workload.collective.size:"
finish
