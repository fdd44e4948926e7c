#!/usr/bin/env bash
# A run of several steps states their mean and spread (summary.json step_stats), and the
# headline figures of the report, compare and sweep are those means, not the first step's;
# sweep.csv carries the spread as columns of numbers.
. "$(dirname "$0")/lib.sh"

# --- a rack over its cooling throttles the GPUs during step 2 of 3: the steps differ
expect_exit 0 "$FABSIM" run "$SRC/examples/failure-throttle.yaml" --set output.dir=ft --quiet
expect_json ft/summary.json '(.steps | length) == 3 and .step_stats.steps == 3'
# each figure's mean, population stdev, min and max, recomputed from the steps list
# (summary.json's reals carry 12 significant digits: compared to 1e-9 relative)
for f in time_s compute_s exposed_comm_s bubble_s; do
  expect_json ft/summary.json "[.steps[].$f] as \$x | (\$x | add / length) as \$m
    | ((\$x | map((. - \$m) * (. - \$m)) | add / length) | sqrt) as \$sd | .step_stats.$f as \$s
    | (\$s.mean - \$m | fabs) <= 1e-9 * (\$m | fabs) + 1e-15
      and (\$s.stdev - \$sd | fabs) <= 1e-9 * \$m + 1e-15
      and \$s.min == (\$x | min) and \$s.max == (\$x | max)"
done
# the steps differ (else the test could not tell a mean from the first step)
expect_json ft/summary.json '.step_stats.time_s.stdev > 0.01 * .step_stats.time_s.mean'
expect_json ft/summary.json '.step_stats.time_s.mean != .step.time_s'
# rates: the time-weighted mean is the rate over all the steps, tokens x N / total time
expect_json ft/summary.json '(.step.tokens * (.steps | length) / ([.steps[].time_s] | add)) as $r
  | (.step_stats.tokens_per_s.mean - $r | fabs) < 1e-9 * $r
  and (.step_stats.mfu.mean - .step.mfu * .step.time_s * 3 / ([.steps[].time_s] | add) | fabs) < 1e-9'
# one step: no spread
expect_exit 0 "$FABSIM" run "$SRC/examples/failure-throttle.yaml" --set workload.steps=1 --set output.dir=one --quiet
expect_json one/summary.json '.step_stats.steps == 1 and .step_stats.time_s.stdev == 0
  and .step_stats.time_s.mean == .step.time_s and .step_stats.time_s.min == .step.time_s'

# --- the jobs of a shared fabric: each training job's step_stats
expect_exit 0 "$FABSIM" run "$SRC/examples/shared/jobs-checkpoint.yaml" --set output.dir=jobs --quiet
expect_json jobs/summary.json '[.jobs[] | select(.steps) | .step_stats.steps == (.steps | length)
  and .step_stats.time_s.max == ([.steps[].time_s] | max)] | length >= 1 and all'

# --- the report's headline: the mean with its spread (the data block of report.html)
sed -n 's|^<script type="application/json" id="fabsim-data">\(.*\)</script>$|\1|p' ft/report.html > data.json
hl=$(jq -c '.headline[] | select(.name == "step_time_s")' data.json)
m=$(jq .step_stats.time_s.mean ft/summary.json)
echo "$hl" | jq -e --argjson m "$m" '.value == $m and .steps == 3 and .stdev > 0 and .min < .max' >/dev/null \
  && pass || fail "report headline step time is not the mean with its spread: $hl"

# --- sweep: the mean in the table's column, the spread as numeric columns of sweep.csv
expect_exit 0 "$FABSIM" sweep "$SRC/examples/failure-throttle.yaml" --vary workload.steps=1,3 --out sw --quiet
head -1 sw/sweep.csv | grep -q ',step_time_s (s),step_time_s_stdev (s),step_time_s_min (s),step_time_s_max (s),' \
  && pass || fail "sweep.csv spread columns: $(head -1 sw/sweep.csv)"
awk -F, -v m="$m" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
  { t[NR] = $c["step_time_s (s)"]; sd[NR] = $c["step_time_s_stdev (s)"]; lo[NR] = $c["step_time_s_min (s)"] }
  END { exit !(sd[2] == 0 && t[2] == lo[2] && t[3] == m && sd[3] > 0 && lo[3] < t[3]) }' sw/sweep.csv \
  && pass || fail "sweep.csv step figures: $(cat sw/sweep.csv)"
# compare: the mean (the run of 3 steps against the run of 1: its first step equals that run's)
expect_exit 0 "$FABSIM" compare --db sw/results.sqlite 1 2 --out cmp --quiet
grep -q '^step time .*([+-][1-9][0-9.]*%)' "$WORK/out" && pass \
  || fail "compare shows no difference in step time between 1 and 3 steps: $(cat "$WORK/out")"
finish
