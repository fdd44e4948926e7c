#!/usr/bin/env bash
# fabsim reliability: the planning table, its JSON contract, sweeps, errors.
. "$(dirname "$0")/lib.sh"

expect_exit 0 "$FABSIM" reliability --help; expect_out "usage: fabsim reliability"
expect_out "--sweep-interval"
expect_exit 0 "$FABSIM" --help;             expect_out "reliability"

# --- the table
expect_exit 0 "$FABSIM" reliability --set cluster.nodes=64 --set reliability.monte_carlo.runs=200
expect_out "MTTF"; expect_out "faulty GPU"; expect_out "Daly"; expect_out "Monte Carlo"
expect_out "facility"; expect_out "racks"

# --- JSON contract
expect_exit 0 "$FABSIM" reliability --set cluster.nodes=64 --set reliability.node_failure_rate=5 \
  --set reliability.monte_carlo.runs=300 --json
J=$WORK/out
expect_json $J '.gpus == 512 and .nodes == 64'
expect_json $J '(.mttf_h - 24 / (64 * 0.005)) | fabs < 1e-9'
expect_json $J '(.interruptions_expected.total - 64 * 0.005 * 54) | fabs < 1e-9'
expect_json $J '((.interruptions_expected.by_cause | add) - .interruptions_expected.total) | fabs < 1e-9'
expect_json $J '(.young_interval_min - ((2 * .checkpoint_write_s * .mttf_h * 3600) | sqrt) / 60) | fabs < 1e-9'
expect_json $J '.daly_interval_min > 0 and .daly_interval_min < .young_interval_min'
expect_json $J '.ettr | (.closed_form > 0.9 and .closed_form < 1 and .monte_carlo > 0.9 and (.ci95 | length) == 2)'
expect_json $J '.ettr.ci95[0] <= .ettr.monte_carlo and .ettr.monte_carlo <= .ettr.ci95[1]'
expect_json $J '.goodput_frac == .ettr.closed_form'
expect_json $J '.power | (.it_kw > 0 and .facility_kw > .it_kw and .energy_kwh_per_step > 0)'

# same seed, same bytes; hot spares raise ETTR
"$FABSIM" reliability --set cluster.nodes=64 --json >a.json
"$FABSIM" reliability --set cluster.nodes=64 --json >b.json
cmp -s a.json b.json && pass || fail "same seed, different output"
expect_exit 0 "$FABSIM" reliability --set cluster.nodes=64 --set reliability.spares=8 --json
expect_json $WORK/out "$(jq '.ettr.closed_form' a.json) < .ettr.closed_form"
expect_json $WORK/out '.spares.nodes == 8 and .spares.p_no_spare < 0.01'

# --- sweeps: 3 sizes x 3 intervals
expect_exit 0 "$FABSIM" reliability --set cluster.nodes=64 --set reliability.monte_carlo.runs=100 \
  --sweep-gpus 1024,4096,16384 --sweep-interval 10min,30min,auto
expect_out "interval"; expect_out "16,384"; expect_out "30min"
expect_exit 0 "$FABSIM" reliability --set cluster.nodes=64 --set reliability.monte_carlo.runs=100 \
  --sweep-gpus 1024,4096,16384 --sweep-interval 10min,30min,auto --json
expect_json $WORK/out '.sweep | length == 9'
expect_json $WORK/out '[.sweep[] | .gpus] == [1024,1024,1024,4096,4096,4096,16384,16384,16384]'
expect_json $WORK/out '.sweep[1].interval_min == 30 and .sweep[2].interval_choice == "auto"'
expect_json $WORK/out '.sweep[0].mttf_h > .sweep[3].mttf_h and .sweep[3].mttf_h > .sweep[6].mttf_h'

expect_exit 0 "$FABSIM" reliability --set cluster.nodes=64 --set reliability.monte_carlo.runs=100 \
  --sweep-spares 0,4,16 --json
expect_json $WORK/out '[.sweep[] | .spares.nodes] == [0,4,16]'
expect_json $WORK/out '.sweep[0].ettr.closed_form < .sweep[1].ettr.closed_form'
expect_exit 2 "$FABSIM" reliability --sweep-spares -1;        expect_err "--sweep-spares"

# --- the example
expect_exit 0 "$FABSIM" reliability "$SRC/examples/reliability-llama3.yaml" --json
expect_json $WORK/out '.gpus == 16384 and (.interruptions_expected.total - 419 | fabs) < 0.5'

# --- rate presets (docs/reliability.md): Meta's research clusters, MTTF = 1 / (N r_f)
expect_exit 0 "$FABSIM" reliability --set reliability.rates=rsc-1 --set reliability.monte_carlo.runs=10 \
  --sweep-gpus 16384 --json
expect_json $WORK/out '(.rate_per_1000_node_days - 6.5 | fabs) < 1e-5'
expect_json $WORK/out '(.sweep[0].mttf_h - 24 / (2048 * 0.0065) | fabs) < 1e-4'
expect_exit 0 "$FABSIM" reliability --set reliability.rates=rsc-2 --set reliability.rate.nccl=1 \
  --set reliability.monte_carlo.runs=10 --json
expect_json $WORK/out '(.rate_per_1000_node_days - (2.34 - 0.0390931 + 1) | fabs) < 1e-5'
expect_exit 0 "$FABSIM" reliability "$SRC/examples/reliability-rsc.yaml" --json
expect_json $WORK/out '.gpus == 2048 and (.rate_per_1000_node_days - 6.5 | fabs) < 1e-5'
expect_json $WORK/out '.ettr.closed_form > 0.9 and .interval_min == 60'
expect_exit 2 "$FABSIM" reliability --set reliability.rates=rsc-3
expect_err "--set:1:"; expect_err "reliability.rates: 'rsc-3' is not one of: llama3-16k, rsc-1, rsc-2"

# --- bad input: exit 2, located
expect_exit 2 "$FABSIM" reliability --set reliability.checkpoint.interval=soon
expect_err "--set:1:"; expect_err "reliability.checkpoint.interval"
expect_exit 2 "$FABSIM" reliability --set power.utilization=2
expect_err "power.utilization"
expect_exit 2 "$FABSIM" reliability --set reliability.days=0
expect_err "reliability.days"
expect_exit 2 "$FABSIM" reliability --sweep-gpus 1000,abc;    expect_err "--sweep-gpus"
expect_exit 2 "$FABSIM" reliability --sweep-gpus 1001;        expect_err "multiple of cluster.gpus_per_node"
expect_exit 2 "$FABSIM" reliability --sweep-interval 10min,x; expect_err "--sweep-interval"
expect_exit 2 "$FABSIM" reliability --sweep-gpus;             expect_err "needs a value"
expect_exit 2 "$FABSIM" reliability --bogus;                  expect_err "unknown option"

finish
