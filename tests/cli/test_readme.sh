#!/usr/bin/env bash
# README.md prints what fabsim prints: every console block of it runs, from a
# folder where examples/ is the source tree's, and its output is the block's
# ("..." for lines or text left out; tests/cli/doc_blocks.sh).
. "$(dirname "$0")/lib.sh"
. "$SRC/tests/cli/doc_blocks.sh"
ln -s "$SRC/examples" examples
check_doc README.md

# The figures of "What it does today" (rounded as the README prints them).
# r3 FILE JQ: the expression's value with 3 decimals
r3() { jq -r "$2 | . * 1000 | round / 1000 | tostring" "$1"; }
expect_exit 0 "$FABSIM" run examples/shared/two-trainings-16k.yaml --set output.dir=tt --quiet
[ "$(r3 tt/summary.json '[.jobs[].step.time_s] | max')" = 5.49 ] && pass || fail "two-trainings step"
expect_json tt/summary.json '[.jobs[].slowdown] | all(. == 1)'
expect_exit 0 "$FABSIM" run examples/shared/two-trainings-16k-random.yaml --set output.dir=ttr --quiet
[ "$(jq -r '[.jobs[].step.time_s * 1000 | round / 1000 | tostring] | join(" / ")' ttr/summary.json)" = "5.563 / 5.562" ] \
  && pass || fail "two-trainings at random: $(jq -c '[.jobs[].step.time_s]' ttr/summary.json)"
expect_json ttr/summary.json '[.jobs[].slowdown | (. - 1) * 1000 | round / 10] == [0.6, 0.9]'
# the checkpoint burst's full run takes ~20 CPU s: make check-long (FABSIM_TEST_LONG)
if [ "${FABSIM_TEST_LONG:-}" = 1 ]; then
  expect_exit 0 "$FABSIM" run examples/shared/checkpoint-burst.yaml --set output.dir=cb --quiet
  expect_json cb/summary.json '[.steps[].time_s * 1e4 | round / 10] == [426.7, 428.7, 428.7]'
  expect_exit 0 "$FABSIM" run examples/shared/checkpoint-burst.yaml --set storage.attach=separate --set output.dir=cbs --quiet
  expect_json cbs/summary.json '[.steps[].time_s * 1e4 | round / 10] | unique == [426.7]'
fi
expect_exit 0 "$FABSIM" run examples/shared/jobs-checkpoint.yaml --set output.dir=jc --quiet
expect_json jc/summary.json '[.jobs[] | select(.name == "train") | (.slowdown - 1) * 1000 | round / 10] == [1.5]'
finish
