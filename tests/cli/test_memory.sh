#!/usr/bin/env bash
# fabsim memory and the training step of fabsim run: JSON contract, closed
# forms through the CLI, exit codes, error locations.
. "$(dirname "$0")/lib.sh"

expect_exit 0 "$FABSIM" memory --help;      expect_out "usage: fabsim memory"
expect_exit 0 "$FABSIM" --help;             expect_out "memory"
expect_exit 2 "$FABSIM" memory --bogus;     expect_err "unknown option '--bogus'"

# --- the MLP example: 784x128+128 + 128x10+10 parameters, fp32 SGD bytes
expect_exit 0 "$FABSIM" memory "$SRC/examples/mlp-1node.yaml" --json
cp "$WORK/out" mlp.json
expect_json mlp.json '.params == 101770 and .model.kind == "mlp" and .model.widths == [784, 128, 10]'
for k in weights gradients optimizer activations total; do
  expect_json mlp.json ".bytes_per_gpu | has(\"$k\")"
done
expect_json mlp.json '.bytes_per_gpu.weights == 4 * 101770 and .bytes_per_gpu.gradients == 4 * 101770'
expect_json mlp.json '.bytes_per_gpu.optimizer == 4 * 101770'   # fp32 SGD: momentum only
expect_json mlp.json '.bytes_per_gpu.activations == (784 + 128 + 128 + 10) * 256 * 4'
expect_json mlp.json '.bytes_per_gpu.total == .bytes_per_gpu.weights + .bytes_per_gpu.gradients + .bytes_per_gpu.optimizer + .bytes_per_gpu.activations'
expect_json mlp.json '.gpu_memory_bytes == 80 * 1073741824 and .fits == true and .suggestion == null'
expect_exit 0 "$FABSIM" memory "$SRC/examples/mlp-1node.yaml"
expect_out "101,770 parameters"; expect_out "fits"

# --- ZeRO 3 through --set: 16 P / Nd of states (P = 4 x 12 x 1024^2, Nd = 8)
expect_exit 0 "$FABSIM" memory --set cluster.nodes=1 --set workload.model.layers=4 \
  --set workload.model.hidden=1024 --set workload.model.heads=16 --set workload.model.vocab=0 \
  --set workload.parallel.zero=3 --json
expect_json "$WORK/out" '.params == 50331648 and .parallel.dp == 8'
expect_json "$WORK/out" '(.bytes_per_gpu.weights + .bytes_per_gpu.gradients + .bytes_per_gpu.optimizer) == 16 * 50331648 / 8'

# --- does not fit: a suggestion that fits, on the same GPUs
expect_exit 0 "$FABSIM" memory --set cluster.nodes=8 --set workload.model.params=70e9 \
  --set workload.model.layers=80 --set workload.model.hidden=8192 --set workload.model.heads=64 --json
cp "$WORK/out" big.json
expect_json big.json '.fits == false and .suggestion != null'
expect_json big.json '.suggestion | (.dp * .tp * .pp == 64 and .bytes_per_gpu.total <= 80 * 1073741824)'
expect_exit 0 "$FABSIM" memory --set cluster.nodes=8 --set workload.model.params=70e9
expect_out "does NOT fit"; expect_out "suggestion"

# --- bad input: file:line:col at the key, exit 2
printf 'workload:\n  parallel:\n    tp: 3\n' > tp3.yaml
expect_exit 2 "$FABSIM" memory tp3.yaml --set cluster.nodes=1
expect_err "tp3.yaml:3:9: workload.parallel.tp: 3 does not divide the 32 attention heads"
expect_exit 2 "$FABSIM" memory --set workload.model.mlp_layers=[784,x]
expect_err "--set:1:32: workload.model.mlp_layers: item 2: expected an integer"
expect_exit 2 "$FABSIM" memory --set cluster.nodes=1 --set workload.global_batch=12
expect_err "--set:2:23: workload.global_batch: 12 sequences is not a multiple of dp x micro_batch = 8"

# --- fabsim run, workload.kind training: the step object
expect_exit 0 "$FABSIM" run "$SRC/examples/dense-7b-64gpu.yaml" --set output.dir=t7 --quiet
S=t7/summary.json
for k in time_s compute_s exposed_comm_s bubble_s gpu_idle_frac mfu tokens_per_s collectives; do
  expect_json $S ".step | has(\"$k\")"
done
expect_json $S '.step | ((.compute_s + .exposed_comm_s + .bubble_s - .time_s) | fabs) < 1e-9 * .time_s'
expect_json $S '.step | (.mfu > 0.3 and .mfu < 0.7 and .gpu_idle_frac > 0 and .gpu_idle_frac < 1)' # roofline: 0.644
expect_json $S '.step | (.memory_bound_frac > 0 and .memory_bound_frac < 0.5 and .memory_bound_s < .compute_s)'
expect_json $S '.step.collectives.dp_reducescatter.count > 0 and .step.collectives.dp_allgather.group == 64'
expect_json $S '.step | ((.tokens_per_s - .tokens / .time_s) | fabs) < 1e-9 * .tokens_per_s'
expect_json $S '.collectives == null and .traffic == null'
expect_exit 0 "$FABSIM" run "$SRC/examples/llama-70b-1024gpu.yaml" --set output.dir=t70
expect_out "tp_allreduce"; expect_out "pp_send"; expect_out "MFU"
expect_json t70/summary.json '.step.collectives.tp_allreduce.group == 8 and .step.parallel.pp == 4'
expect_json t70/summary.json '((.step.bubble_frac_1f1b - 3 / 35) | fabs) < 1e-9'
expect_exit 0 "$FABSIM" run "$SRC/examples/mlp-1node.yaml" --set output.dir=tm --quiet
expect_json tm/summary.json '.step.model.params == 101770 and .step.time_s > 0'
# determinism: same bytes but for wall time
for i in 1 2; do
  "$FABSIM" run "$SRC/examples/deepseek-v3-moe.yaml" --set output.dir=ds --quiet
  mv ds ds$i
done
cmp -s <(grep -v wall_s ds1/summary.json) <(grep -v wall_s ds2/summary.json) && pass || fail "training runs differ"
expect_json ds1/summary.json '.step.collectives.ep_dispatch.group == 64 and .step.collectives.edp_reducescatter.group == 2'
expect_exit 2 "$FABSIM" run --set workload.kind=training --set cluster.nodes=1 --set workload.parallel.pp=40
expect_err "--set:3:22: workload.parallel.pp: 40 stages for 32 layers"
# a collective the placement cannot build is located at the key that shapes it
expect_exit 2 "$FABSIM" run --set workload.kind=training --set cluster.nodes=3 --set workload.model.layers=2 \
  --set workload.model.experts=24 --set workload.parallel.ep=12 --set output.dir=bad
expect_err "--set:5:22: workload.parallel.ep: the expert-parallel group needs the same number of ranks on every node"
[ ! -e bad ] && pass || fail "output written after bad input"

finish
