#!/usr/bin/env bash
# fabsim topo: the JSON contract, DOT export, the 3-tier radix-64 build.
. "$(dirname "$0")/lib.sh"

expect_exit 0 "$FABSIM" topo --set fabric.switch_radix=64 --set fabric.tiers=3 --json
cp "$WORK/out" t3.json
# k^3/4 = 65,536 endpoints; 5k^2/4 = 5,120 switches (2,048 leaf, 2,048 spine, 1,024 core)
expect_json t3.json '.endpoints == 65536 and .switches == 5120'
expect_json t3.json '.switches_by_tier == {"leaf": 2048, "spine": 2048, "core": 1024}'
expect_json t3.json '.links.endpoint_switch == 65536 and .links.switch_switch == 131072'
expect_json t3.json '.transceivers == 2 * (65536 + 131072)'
expect_json t3.json '.bisection_bandwidth_bps == 65536 / 2 * 400e9'
expect_json t3.json '(.cost_usd / .endpoints - .cost_per_endpoint_usd | fabs) < 1e-6'
for k in endpoints switches switches_by_tier links transceivers cost_usd cost_per_endpoint_usd bisection_bandwidth_bps; do
  expect_json t3.json "has(\"$k\")"
done

expect_exit 0 "$FABSIM" topo --set fabric.topology=multi-plane --set cluster.gpu=H800 --json
expect_json "$WORK/out" '.planes == 8 and .gpus == 16384 and .switches_by_tier.core == 0'

expect_exit 0 "$FABSIM" topo --set cluster.nodes=2 --dot g.dot
grep -q '^graph' g.dot && grep -q 'leaf0' g.dot && pass || fail "DOT file"
expect_exit 0 "$FABSIM" topo --set cluster.nodes=2 --dot - --dot-nodes
grep -q 'node0' "$WORK/out" && pass || fail "DOT collapsed nodes"

expect_exit 0 "$FABSIM" topo "$SRC/examples/rail-roce.yaml"
expect_out "rail-optimized"; expect_out "bisection"

finish
