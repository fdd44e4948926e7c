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

# --- published layouts that were trained fit, with the formula's breakdown
# (docs/training.md "Memory"): total = states + activations; activations =
# layer-micro-batches in flight x each one's bytes (+ logits on the output
# layer's stage, + a recomputed group under full recomputation)
fits() { # FILE: fits in the GPU's memory, and the terms add up
  expect_json "$1" '.fits == true and .bytes_per_gpu.total <= .gpu_memory_bytes'
  expect_json "$1" '.bytes_per_gpu | ((.weights + .gradients + .optimizer + .activations - .total) | fabs) <= 4'
  expect_json "$1" '.activations_detail as $d | .bytes_per_gpu.activations <= $d.layers_held * $d.layer_bytes + $d.logits_bytes + $d.recompute_bytes + 1'
}
# Llama 3 405B (arXiv 2407.21783 sec. 3.3, Table 4): TP8 PP16 DP128, 8K tokens, 7 layers on
# each end stage, no activation checkpointing; GQA 8 key/value heads. Stage 1: 16
# micro-batches x 8 layers in flight, each s b/t (8h + e h (1 + 2 kv/a) + 4a + e h + 6f)
expect_exit 0 "$FABSIM" memory "$SRC/examples/llama3-405b.yaml" --json
cp "$WORK/out" l3.json; fits l3.json
expect_json l3.json '.parallel.first_stage_layers == 7 and .parallel.recompute == "none" and .stage == 1'
expect_json l3.json '.activations_detail | (.layers == 8 and .layers_held == 128)'
expect_json l3.json '.activations_detail.layer_bytes == 8192 * (8 * 16384 + 2 * 16384 * (1 + 2 * 8 / 128) + 4 * 128 + 2 * 16384 + 6 * 53248) / 8'
expect_json l3.json '.bytes_per_gpu.activations == 128 * .activations_detail.layer_bytes'
# DeepSeek-V3 (arXiv 2412.19437 sec. 3.2, 3.4): PP16 DualPipe, EP64, ZeRO 1, fp8, RMSNorm and
# SwiGLU outputs recomputed. DualPipe holds pp + 1 = 17 chunks of 4 layers (Table 2); an MoE
# layer keeps per token 2h + 2h + 4E + k h (fp8) + 6h + 4a + 2h + (k + 1) f_e 4 bytes
expect_exit 0 "$FABSIM" memory "$SRC/examples/deepseek-v3-moe.yaml" --json
cp "$WORK/out" ds.json; fits ds.json
expect_json ds.json '.parallel.recompute_modules == ["layernorm", "moe_act"] and .activations_detail.layers_held == 68'
expect_json ds.json '.activations_detail.layer_bytes == 4096 * (12 * 7168 + 4 * 256 + 6 * 7168 + 4 * 128 + 2 * 7168 + 9 * 2048 * 4)'
# NeMo 24.07's FP8 pre-training table on DGX-H100 (NVIDIA/NeMo
# docs/source/performance/performance_summary.md): GPT3-175B on 128 GPUs (GBS 256, MBS 1,
# TP4 PP8 VP6) and on 512 (GBS 2048, MBS 2), LLAMA2-70B (64 GPUs, GBS 128, TP4 PP4 VP20),
# Nemotron-340B (128 GPUs, GBS 32, TP8 PP8 VP12); distributed optimizer (ZeRO 1)
NEMO="--set workload.precision=fp8 --set workload.pipeline.schedule=interleaved --set workload.parallel.zero=1"
GPT3="--set workload.model.layers=96 --set workload.model.hidden=12288 --set workload.model.heads=96 --set workload.model.seq_len=2048 --set workload.model.vocab=51200 --set workload.model.dropout=true --set workload.parallel.tp=4 --set workload.parallel.pp=8 --set workload.parallel.virtual_stages=6"
expect_exit 0 "$FABSIM" memory $NEMO $GPT3 --set cluster.nodes=16 --set workload.global_batch=256 --json
cp "$WORK/out" gpt3.json; fits gpt3.json
expect_json gpt3.json '.activations_detail.layers_held == 110' # 2 (8-1) + 5 x 8 + 1 chunks of 2 layers
expect_exit 0 "$FABSIM" memory $NEMO $GPT3 --set cluster.nodes=64 --set workload.global_batch=2048 --set workload.micro_batch=2 --json
fits "$WORK/out"
expect_exit 0 "$FABSIM" memory $NEMO --set cluster.nodes=8 --set workload.model.params=70e9 --set workload.model.layers=80 \
  --set workload.model.hidden=8192 --set workload.model.heads=64 --set workload.model.kv_heads=8 --set workload.model.seq_len=4096 \
  --set workload.model.ffn_hidden=28672 --set workload.model.gated_ffn=true --set workload.parallel.tp=4 --set workload.parallel.pp=4 \
  --set workload.parallel.virtual_stages=20 --set workload.global_batch=128 --json
fits "$WORK/out"
expect_exit 0 "$FABSIM" memory $NEMO --set cluster.nodes=16 --set workload.model.params=340e9 --set workload.model.layers=96 \
  --set workload.model.hidden=18432 --set workload.model.heads=96 --set workload.model.kv_heads=8 --set workload.model.seq_len=4096 \
  --set workload.model.vocab=256000 --set workload.model.ffn_hidden=73728 --set workload.parallel.tp=8 --set workload.parallel.pp=8 \
  --set workload.parallel.virtual_stages=12 --set workload.global_batch=32 --json
fits "$WORK/out"
# Korthikanti et al. (arXiv 2205.05198) Table 3's 1T model on 512 A100 80GB (TP8 PP64,
# batch 512, unfused attention with dropout): sequence parallelism with selective
# recomputation fits (sec. 6, Fig. 1), without recomputation it does not
K1T="--set cluster.gpu=A100 --set cluster.nodes=64 --set workload.model.layers=128 --set workload.model.hidden=25600 --set workload.model.heads=160 --set workload.model.seq_len=2048 --set workload.model.vocab=51200 --set workload.attention=unfused --set workload.model.dropout=true --set workload.parallel.tp=8 --set workload.parallel.pp=64 --set workload.global_batch=512"
expect_exit 0 "$FABSIM" memory $K1T --set workload.recompute=selective --json
fits "$WORK/out"
expect_json "$WORK/out" '.activations_detail | (.layers_held == 128 and .layer_bytes == 2048 * 25600 * 34 / 8)'
expect_exit 0 "$FABSIM" memory $K1T --set workload.recompute=none --json
expect_json "$WORK/out" '.fits == false and .activations_detail.layer_bytes == 2048 * 25600 * (34 + 5 * 160 * 2048 / 25600) / 8'

# --- stages: the first and last stage layer counts; the step reports every stage
expect_exit 2 "$FABSIM" memory --set cluster.nodes=2 --set workload.parallel.pp=2 --set workload.pipeline.first_stage_layers=32
expect_err "--set:3:38: workload.pipeline.first_stage_layers: first 32 + last 0 layers leave 0 for the other 1 virtual stages"
expect_exit 2 "$FABSIM" memory --set cluster.nodes=1 --set workload.pipeline.last_stage_layers=4
expect_err "workload.pipeline.last_stage_layers: a layer count for an end stage needs pipeline stages"
expect_exit 2 "$FABSIM" memory --set cluster.nodes=2 --set workload.parallel.pp=4 --set workload.pipeline.schedule=interleaved \
  --set workload.parallel.virtual_stages=2 --set workload.pipeline.first_stage_layers=1 --set workload.global_batch=16
expect_err "workload.pipeline.first_stage_layers: 1 layers for the 2 model chunks of stage 0; every chunk needs one"
expect_exit 2 "$FABSIM" memory --set workload.recompute=full --set workload.recompute_layers=0
expect_err "workload.recompute_layers: 0 layers per group"
expect_exit 2 "$FABSIM" memory --set 'workload.recompute_modules=[core_attn, mla_up_proj]'
expect_err "workload.recompute_modules: item 2: 'mla_up_proj' is not one of: core_attn, layernorm, mlp, moe_act"

# --- defect 17 (issue 27): a figure past 2^63 bytes is refused at the key, never printed saturated (1e18: number keys stop there)
expect_exit 2 "$FABSIM" memory --set workload.model.params=1e18
expect_err "--set:1:23: workload.model.params: the model's parameters and their states per GPU"
expect_exit 2 "$FABSIM" memory --set workload.model.seq_len=100000000 --set workload.attention=unfused
expect_err "--set:1:24: workload.model.seq_len: activations of"
expect_exit 2 "$FABSIM" memory --set 'workload.model.mlp_layers=[1000000000,1000000000,1000000000]'
expect_err "workload.model.mlp_layers: the model's parameters"
expect_exit 2 "$FABSIM" memory --set cluster.nodes=1 --set workload.model.hidden=10000000 --set workload.micro_batch=1000000
expect_err "--set:3:22: workload.micro_batch: activations of 4.26e+19 bytes per GPU pass 2^63"
expect_exit 2 "$FABSIM" run --set workload.kind=training --set workload.model.params=1e18 --set output.dir=big17
expect_err "workload.model.params: the model's parameters"
[ ! -e big17 ] && pass || fail "output written after an unrepresentable memory figure"
for json in "" --json; do
  "$FABSIM" memory --set workload.model.hidden=1000000 --set workload.model.seq_len=1000000 $json > out17 2>&1
  grep -q "8192.00 PiB\|9223372036854775808" out17 && fail "a saturated figure: $(head -3 out17)" || pass
done

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
