#!/usr/bin/env bash
# workload.kind inference (docs/inference.md): the example's serving figures
# in the terminal and summary.json, deterministic; bad input refused before
# anything runs with FILE:LINE:COL, the key, what is allowed and exit 2.
. "$(dirname "$0")/lib.sh"
EX="$SRC/examples/inference-70b-8gpu.yaml"
Q=(--quiet --set workload.inference.requests=200)

expect_exit 0 "$FABSIM" run "$EX" --set output.dir=a "${Q[@]}"
expect_json a/summary.json '.inference.completed == 200 and .inference.ttft_s.p50 > 0.05
  and .inference.ttft_s.p50 < 1 and .inference.tpot_s.p50 > 0.005 and .inference.tpot_s.p50 < 0.05
  and .inference.kv_bytes_per_token == 327680 and .inference.slo.both_met > 0.9
  and .sim.sim_time_s > 40'
expect_exit 0 "$FABSIM" run "$EX" --set output.dir=b "${Q[@]}"
if [ "$(jq -c .inference a/summary.json)" = "$(jq -c .inference b/summary.json)" ]; then pass
else fail "two runs of one scenario and seed differ"; fi
expect_exit 0 "$FABSIM" run "$EX" --set output.dir=t --set workload.inference.requests=20
expect_out "serving      1 replica x TP 8 (8 GPUs), 20 requests (Poisson 4/s, 2048 prompt / 128 output tokens)"
expect_out "  KV cache   320 KiB a token (40 KiB a GPU)"
expect_out "  TTFT       p50 "

# docs/inference.md's table and README.md: the example at three rates
for row in "2 102.9 12.6 248.8" "4 105.5 16.4 496.9" "8 194.5 37.7 990.7"; do
  set -- $row
  expect_exit 0 "$FABSIM" run "$EX" --set output.dir=r$1 --set workload.inference.rate=$1 --quiet
  got=$(jq -r '.inference | [(.ttft_s.p50 * 1e4 | round / 10), (.tpot_s.p50 * 1e4 | round / 10),
    (.output_tokens_per_s * 10 | round / 10)] | map(tostring) | join(" ")' r$1/summary.json)
  [ "$got" = "$2 $3 $4" ] && pass || fail "rate $1: got $got, want $2 $3 $4"
done
expect_json r4/summary.json '(.inference.alone_ttft_s * 1e5 | round / 100) == 91.14
  and (.inference.alone_e2e_s * 1e3 | round / 1000) == 1.407'

# docs/inference.md's check against TensorRT-LLM's table: fabsim's side
for row in "H100 fp8 1 2048 128 1894" "H100 fp8 1 128 2048 21294" "A100 bf16 2 1000 1000 3622"; do
  set -- $row
  expect_exit 0 "$FABSIM" run "$EX" --set output.dir=v --quiet --set cluster.gpu=$1 \
    --set workload.precision=$2 --set workload.inference.kv_bytes=$3 \
    --set workload.inference.prompt_tokens=$4 --set workload.inference.output_tokens=$5 \
    --set workload.inference.requests=3000 --set workload.inference.rate=1000000
  got=$(jq -r '.inference.output_tokens_per_s | round' v/summary.json)
  [ "$got" = "$6" ] && pass || fail "$1 $2 $4/$5: got $got output tokens/s, want $6"
done

# the example's trace, over two replicas
expect_exit 0 "$FABSIM" run "$SRC/examples/inference-70b-trace.yaml" --set output.dir=tr --quiet
expect_json tr/summary.json '.inference.completed == 300 and .inference.replicas == 2'

# bad input: located, exit 2, nothing written
cat > s.yaml <<'Y'
cluster: {nodes: 1}
workload:
  kind: inference
  model: {layers: 80, hidden: 8192, heads: 64, kv_heads: 8, ffn_hidden: 28672, gated_ffn: true, vocab: 128256}
  inference:
    tp: 8
    rate: 0
Y
expect_exit 2 "$FABSIM" run s.yaml --quiet --set output.dir=bad1
expect_err "s.yaml:7:11: workload.inference.rate"
[ ! -e bad1 ] && pass || fail "a refused run left bad1/"
sed -i 's/rate: 0/prompt_tokens: 4000000/' s.yaml
expect_exit 2 "$FABSIM" run s.yaml --quiet --set output.dir=bad2
expect_err "s.yaml:7:20: workload.inference.prompt_tokens: request 1: a request of 4000000 prompt and 128 output tokens needs"
sed -i 's/prompt_tokens: 4000000/trace: req.csv/' s.yaml
printf 'arrived_at,num_prefill_tokens,num_decode_tokens\n1.5,100,10\n1.0,100,10\n' > req.csv
expect_exit 2 "$FABSIM" run s.yaml --quiet --set output.dir=bad3
expect_err "s.yaml:7:12: workload.inference.trace: req.csv:3: arrived_at 1 s is before the previous request's 1.5 s"
printf 'arrived_at,num_prefill_tokens,num_decode_tokens\n0,2000000,10\n' > req.csv
expect_exit 2 "$FABSIM" run s.yaml --quiet --set output.dir=bad4
expect_err "s.yaml:7:12: workload.inference.trace: request 1: a request of 2000000 prompt"
printf 'arrived_at,num_prefill_tokens,num_decode_tokens\n0,200,10\n' > req.csv
expect_exit 2 "$FABSIM" run s.yaml --quiet --set output.dir=bad5 --set workload.inference.rate=3
expect_err "--set:2:25: workload.inference.rate: the requests come from workload.inference.trace"
expect_exit 2 "$FABSIM" run s.yaml --quiet --set output.dir=bad6 --set simulation.fidelity=packet
expect_err "workload.kind inference runs at the analytic fidelity only"
expect_exit 2 "$FABSIM" run s.yaml --quiet --set output.dir=bad7 --set workload.parallel.ep=8
expect_err "workload.parallel.ep: expert-parallel decode"
expect_exit 2 "$FABSIM" run s.yaml --quiet --set output.dir=bad8 --set workload.inference.memory_utilization=1.5
expect_err "workload.inference.memory_utilization: 1.5 of the GPU's memory; allowed: above 0, at most 1"
expect_exit 2 "$FABSIM" run s.yaml --quiet --set output.dir=bad9 --set workload.inference.tp=16
expect_err "workload.inference.tp: 16 GPUs span nodes"
finish
