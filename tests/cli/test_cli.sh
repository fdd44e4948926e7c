#!/usr/bin/env bash
# The fabsim command line: verbs, summary files, exit codes, error locations.
. "$(dirname "$0")/lib.sh"

# --- help and verbs
expect_exit 0 "$FABSIM" --help;             expect_out "verbs:"
expect_exit 0 "$FABSIM" run --help;         expect_out "usage: fabsim run"
expect_exit 0 "$FABSIM" topo --help;        expect_out "--dot FILE"
expect_exit 2 "$FABSIM";                    expect_err "usage: fabsim VERB"
expect_exit 2 "$FABSIM" frobnicate;         expect_err "unknown verb 'frobnicate'"
expect_exit 2 "$FABSIM" run --bogus;        expect_err "unknown option '--bogus'"
expect_exit 2 "$FABSIM" run --set;          expect_err "--set needs a value"
expect_exit 2 "$FABSIM" run a.yaml b.yaml;  expect_err "one scenario file only"

# --- the default example end to end
expect_exit 0 "$FABSIM" run "$SRC/examples/default.yaml" --set output.dir=out1
expect_out "allreduce"; expect_out "busbw"
S=out1/summary.json
expect_json $S '.fidelity == "analytic" and .gpus == 1024 and .nodes == 128'
expect_json $S '.scenario.file | endswith("examples/default.yaml")'
expect_json $S '.collectives | length == 1'
expect_json $S '.collectives[0] | (.op == "allreduce" and .algorithm == "nvlstree" and .bytes == 1073741824 and .ranks == 1024)'
expect_json $S '.collectives[0] | (.time_s > 0 and .algbw_GBps > 0)'
# nccl-tests definitions: algbw = S/t, busbw = algbw * 2(n-1)/n
expect_json $S '.collectives[0] | ((.algbw_GBps - .bytes / .time_s / 1e9) | fabs) < 1e-6 * .algbw_GBps'
expect_json $S '.collectives[0] | ((.busbw_GBps - .algbw_GBps * 2 * 1023 / 1024) | fabs) < 1e-6 * .busbw_GBps'
expect_json $S '.sim | (.events > 0 and .wall_s >= 0)'
expect_json $S '.topology | (.endpoints == 1024 and .switches == 64)'
[ -s out1/scenario.yaml ] && pass || fail "scenario.yaml not written"
# the resolved scenario re-runs to the same result
expect_exit 0 "$FABSIM" run out1/scenario.yaml --set output.dir=out1b --quiet
expect_json out1b/summary.json "$(jq '.collectives[0].time_s' $S) == .collectives[0].time_s"

# --- --json prints the same object that is written
expect_exit 0 "$FABSIM" run --set cluster.nodes=2 --set output.dir=out2 --json
jq -e '.collectives[0].ranks == 16' "$WORK/out" >/dev/null && pass || fail "--json stdout"
cmp -s <(jq -S 'del(.sim.wall_s)' "$WORK/out") <(jq -S 'del(.sim.wall_s)' out2/summary.json) \
  && pass || fail "--json output differs from summary.json"

# --- determinism: same scenario and seed, byte-identical but for wall_s
for i in 1 2; do
  "$FABSIM" run "$SRC/examples/deepseek-8plane.yaml" --set cluster.nodes=64 --set output.dir=det --quiet
  mv det det$i
done
cmp -s <(grep -v wall_s det1/summary.json) <(grep -v wall_s det2/summary.json) && pass || fail "runs differ"
cmp -s det1/scenario.yaml det2/scenario.yaml && pass || fail "scenario dumps differ"

# --- no file at all, only --set
expect_exit 0 "$FABSIM" run --set cluster.nodes=1 --set workload.collective.size=64MiB --set output.dir=out3 --quiet
[ ! -s "$WORK/out" ] && pass || fail "--quiet printed"
expect_json out3/summary.json '.gpus == 8 and .collectives[0].bytes == 67108864'

# --- synthetic traffic and the network object
expect_exit 0 "$FABSIM" run --set workload.kind=traffic --set workload.traffic.pattern=pair \
  --set cluster.nodes=2 --set output.dir=tr1 --quiet
expect_json tr1/summary.json '.traffic | (.pattern == "pair" and .flows == 1 and .latency_us > 0 and .time_s > 0)'
expect_json tr1/summary.json '.collectives == null'
for k in ecn_marks cnps pfc_pauses pfc_paused_s drops retransmits max_queue_bytes fct_us link_utilization_max; do
  expect_json tr1/summary.json ".network | has(\"$k\")"
done
# the analytic model has no queues: it reports null, not zero, for what it cannot see
expect_json tr1/summary.json '.network.pfc_pauses == null and .network.drops == null'
expect_json tr1/summary.json '.network.fct_us.p50 > 0 and .network.fct_us.p99 >= .network.fct_us.p50'
expect_exit 0 "$FABSIM" run --set workload.kind=traffic --set workload.traffic.pattern=incast \
  --set workload.traffic.senders=4 --set workload.qps_per_connection=4 --set cluster.nodes=8 \
  --set output.dir=tr2 --set simulation.fidelity=flow --quiet
expect_json tr2/summary.json '.traffic | (.flows == 4 and .qps_per_connection == 4)'
expect_json tr2/summary.json '.network.transfers == 16 and .fidelity == "flow"'
expect_exit 2 "$FABSIM" run --set workload.kind=traffic --set workload.traffic.pattern=incast \
  --set workload.traffic.senders=100 --set cluster.nodes=2
expect_err "workload.traffic.pattern"; expect_err "needs 101 GPUs"

# --- bad input: file:line:col, the key, what is allowed, exit 2, nothing written
printf 'cluster:\n  nodes: 99999\n' > big.yaml
expect_exit 2 "$FABSIM" run big.yaml --set output.dir=bad1
expect_err "big.yaml:2:10: cluster.nodes:"; expect_err "at most 256 nodes"
[ ! -e bad1 ] && pass || fail "output written after bad input"
printf 'fabric:\n  switch_radix: 63\n' > odd.yaml
expect_exit 2 "$FABSIM" topo odd.yaml; expect_err "odd.yaml:2:17: fabric.switch_radix:"
expect_exit 2 "$FABSIM" run --set fabric.oversubscription=0.5; expect_err "--set:1:"
expect_err "fabric.oversubscription"
expect_exit 2 "$FABSIM" run --set workload.collective.ranks=5000 --set cluster.nodes=2
expect_err "--set:1:"; expect_err "workload.collective.ranks"; expect_err "exceed the 16 GPUs"
expect_exit 2 "$FABSIM" run --set workload.collective.ranks=99999
expect_err "workload.collective.ranks"; expect_err "allowed: 1..2048"
# the packet fidelity observes queues: counters are numbers, not null
expect_exit 0 "$FABSIM" run --set simulation.fidelity=packet --set workload.kind=traffic \
  --set workload.traffic.pattern=incast --set workload.traffic.senders=4 --set cluster.nodes=8 \
  --set cluster.gpus_per_node=1 --set fabric.switch_radix=8 --set fabric.transport=roce \
  --set output.dir=tp1 --quiet
expect_json tp1/summary.json '.fidelity == "packet" and .network.transfers == 4 and .network.drops == 0'
expect_json tp1/summary.json '.network.pfc_pauses >= 0 and .network.max_queue_bytes > 0'
expect_exit 2 "$FABSIM" run missing.yaml; expect_err "missing.yaml"
expect_exit 2 "$FABSIM" run --set workload.collective.op=alltoall --set workload.collective.algorithm=ring
expect_err "workload.collective.algorithm"

finish
