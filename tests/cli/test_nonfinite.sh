#!/usr/bin/env bash
# No number that cannot be true reaches an output (issue 27, defect 10):
# cost.switch_usd=1e308 summed to infinity, printed "$infB" and vanished
# from summary.json. Inputs whose figures cannot be represented are refused
# (exit 2, the key); every writer refuses a non-finite figure
# (tests/output/test_output.c).
. "$(dirname "$0")/lib.sh"

for verb in run topo; do
  expect_exit 2 "$FABSIM" $verb --set cost.switch_usd=1e308 --set output.dir=o
  expect_err "--set:1:17: cost.switch_usd: 1e+308 is too large for the figures a run derives from it to be represented"
  expect_err "allowed: at most 1e+18"
done
expect_exit 2 timeout 60 "$FABSIM" run --set power.usd_per_kwh=1e300 --set output.dir=o --quiet
expect_err "power.usd_per_kwh: 1e+300 is too large"
printf 'jobs:\n  - {name: a, gpus: 8, workload: {kind: training, compute_efficiency: 1e20}}\n' > job.yaml
expect_exit 2 timeout 60 "$FABSIM" topo job.yaml
expect_err "jobs[0].workload.compute_efficiency"
[ ! -e o ] && pass || fail "o/ written for a refused scenario"
expect_exit 0 timeout 60 "$FABSIM" run --set cost.switch_usd=1e18 --set cluster.nodes=2 --set output.dir=big --quiet
expect_json big/summary.json '[.. | numbers] | all(. == . and . < 1e308 and . > -1e308)'
finish
