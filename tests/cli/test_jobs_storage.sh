#!/bin/sh
# Checkpoints and data loading of training jobs in a jobs: list
# (docs/shared-fabric.md, "Storage and checkpoints"): one job of the whole
# cluster writes exactly what the same single-job scenario writes; on a
# separate storage fabric two jobs on their own leaves run as alone; on the
# backend fabric no job is isolated, a job's own writes and another job's are
# named as the cause of its slowdown; bad combinations are refused at the
# job's key.
. "$(dirname "$0")/lib.sh"

fabric='cluster: {nodes: 4, gpus_per_node: 8, gpu: H100}
fabric: {topology: fat-tree, tiers: 2, switch_radix: 16, transport: infiniband}
storage: {servers: 2, attach: backend, write_bandwidth: 65GB/s, nic: {per_server: 8, bandwidth: 200Gbps}}
simulation: {fidelity: flow}'
model='model: {layers: 4, hidden: 2048, heads: 16, seq_len: 2048, vocab: 32000}, parallel: {tp: 1, pp: 1, zero: 1}, comm_model: live, steps: 3'
ckpt='checkpoint: {every: 1, mode: async}'

# --- one job of the whole cluster = the single-job scenario
printf '%s\nworkload: {kind: training, global_batch: 32, %s, %s}\n' "$fabric" "$model" "$ckpt" > single.yaml
printf '%s\njobs:\n  - {name: a, gpus: 32, workload: {kind: training, global_batch: 32, %s, %s}}\n' \
  "$fabric" "$model" "$ckpt" > one.yaml
expect_exit 0 "$FABSIM" run single.yaml --set output.dir=out-single --quiet --json
cp "$WORK/out" single.json
expect_exit 0 "$FABSIM" run one.yaml --set output.dir=out-one --quiet --json
cp "$WORK/out" one.json
pick='[.after_step, .start_s, .end_s, .bytes, .writers, .first_step, .last_step, .steps_slowed_s]'
a=$(jq -c "[.checkpoints.list[] | $pick], [.steps[].time_s]" single.json)
b=$(jq -c "[.jobs[0].checkpoints.list[] | $pick], [.jobs[0].steps[].time_s]" one.json)
if [ "$a" = "$b" ] && [ -n "$a" ]; then pass; else fail "single [$a] jobs [$b]"; fi
expect_json one.json '(.jobs[0].checkpoints.list | length) == 2 and .jobs[0].checkpoints.list[0].steps_slowed_s > 0'
expect_json one.json '.jobs[0].slowdown > 1 and (.jobs[0].cause | test("its 2 checkpoint writes \\(backend fabric\\) overlapped steps 2-3"))'
if grep -q '^[0-9.e-]*,a/checkpoint1,checkpoint-start,' out-one/events.csv; then pass; else fail "no a/checkpoint1 event"; fi

# --- two jobs on leaves of their own; a writes checkpoints
two() {
  printf '%s\njobs:\n  - {name: a, gpus: %s, workload: {kind: training, global_batch: %s, %s, %s}}\n  - {name: b, gpus: 16, workload: {kind: training, global_batch: 16, %s}}\n' \
    "$fabric" "$1" "$1" "$model" "$ckpt" "$model"
}
two 16 > two.yaml
expect_exit 0 "$FABSIM" run two.yaml --set storage.attach=separate --set output.dir=out-sep --quiet --json
expect_json "$WORK/out" '[.jobs[] | .isolated] == [true, true] and [.jobs[] | .slowdown] == [1, 1]'
expect_json "$WORK/out" '(.jobs[0].checkpoints.list | length) == 2 and .jobs[0].checkpoints.attach == "separate" and ([.jobs[0].checkpoints.list[] | .end_s > .start_s] | all)'
expect_exit 0 "$FABSIM" run two.yaml --set output.dir=out-back --quiet --json
expect_json "$WORK/out" '[.jobs[] | .isolated] == [false, false] and .jobs[0].slowdown > 1 and .jobs[1].slowdown == 1'
# b on a's leaf (radix 32: two nodes a leaf): a's burst is named in b's cause
two 8 | sed 's/switch_radix: 16/switch_radix: 32/' > shared.yaml
expect_exit 0 "$FABSIM" run shared.yaml --set fabric.routing=static --set output.dir=out-shared --quiet --json
expect_json "$WORK/out" '.jobs[1].slowdown > 1 and (.jobs[1].cause | test("a.s checkpoint writes on the backend fabric"))'

# data loading in a job: a read per step but the last, by each data-parallel replica's reader
sed '0,/mode: async}}/s//mode: async}, data_loading: true}/' shared.yaml > loading.yaml
expect_exit 0 "$FABSIM" run loading.yaml --set output.dir=out-load --quiet --json
expect_json "$WORK/out" '.jobs[0].data_loading.reads == 2 and .jobs[0].data_loading.readers == 8 and .jobs[0].data_loading.bytes_per_step == 8 * 2048 * 4 and .jobs[1].data_loading == null'

# --- refused, at the job's key
printf '%s\njobs:\n  - {name: a, gpus: 16, workload: {kind: collective, %s}}\n' "$fabric" "$ckpt" > coll.yaml
expect_exit 2 "$FABSIM" run coll.yaml --quiet
expect_err "jobs[0].workload.checkpoint.every: a collective workload writes no checkpoint"
expect_exit 2 "$FABSIM" run two.yaml --set storage.servers=0 --quiet
expect_err "jobs[0].workload.checkpoint.every: a checkpoint needs storage servers to write to"
sed 's/comm_model: live, steps: 3}}$/comm_model: reuse, steps: 3}}/' two.yaml > reuse.yaml
expect_exit 2 "$FABSIM" run reuse.yaml --quiet
expect_err "jobs[1].workload.comm_model: reuse times each collective by class, but checkpoint writes or data loading on the backend fabric"

finish
