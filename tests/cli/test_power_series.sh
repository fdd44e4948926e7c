#!/usr/bin/env bash
# power.timeseries (docs/power.md): the swing of a plain data-parallel job
# against (TDP - idle) x GPUs x PUE, a flat load's energy against the
# steady-state figure, the columns against the summary, same seed same bytes,
# nothing new with the key off, bad bands refused at their key.
. "$(dirname "$0")/lib.sh"

EX=$SRC/examples/dense-7b-64gpu.yaml
ON="--set power.timeseries=true --set power.rack.cooling=liquid --set workload.steps=2"

# --- a DP job of 64 H100 (700 W TDP, 70 W idle), PUE 1.2: swing 630 x 64 x 1.2 W per step
expect_exit 0 "$FABSIM" run "$EX" $ON --set power.bands=0.1-1,1-10 --set output.dir=dp
J=dp/summary.json
expect_json $J '.power.over_time.swing.steps == 2 and .power.over_time.swing.steps_resolved == 2'
expect_json $J '(.power.over_time.swing.mean_kw / (630 * 64 * 1.2 / 1000) - 1) | fabs < 0.01'
expect_json $J '(.power.over_time.swing.max_kw / (630 * 64 * 1.2 / 1000) - 1) | fabs < 0.01'
expect_json $J '(.power.over_time.peak_kw - .power.over_time.trough_kw) > 0'
expect_json $J '.power.over_time.ramp_kw_per_s > 0'
expect_json $J '(.power.over_time.spectrum.bands | length) == 2'
expect_json $J '.power.over_time.spectrum.bands[0].rms_kw > 0'
# the columns: facility = IT x PUE, and their energy is the summary's
head -1 dp/timeseries.csv | tr ',' '\n' > cols
for c in power_gpu_kw power_it_kw power_facility_kw; do
  if grep -qx "$c" cols; then pass; else fail "timeseries.csv lacks $c"; fi
done
fc=$(grep -nx power_facility_kw cols | cut -d: -f1); ic=$(grep -nx power_it_kw cols | cut -d: -f1)
awk -F, -v f="$fc" -v i="$ic" 'NR > 1 { e += $f * $2; d = $f - 1.2 * $i; if (d < 0) d = -d;
  if (d > 1e-9 * $f) bad = 1 } END { printf "%.17g %d\n", e / 3600, bad }' dp/timeseries.csv > energy
read -r e bad < energy
expect_json $J "(.power.over_time.energy_kwh / $e - 1) | fabs < 1e-9"
if [ "$bad" = 0 ]; then pass; else fail "power_facility_kw is not power_it_kw x PUE"; fi

# the report's power chart draws (headless Chromium, as cli/test_report; skipped without it)
if [ -d "$SRC/report/node_modules" ]; then
  node "$SRC/tests/cli/check_report.mjs" "$SRC" dp/report.html:power,gpu > browser.log 2>&1 && pass \
    || fail "report check in Chromium: $(cat browser.log)"
fi

# --- a flat load (one GPU, nothing to communicate): the steady-state figure
expect_exit 0 "$FABSIM" run "$EX" --set power.timeseries=true --set output.dir=flat \
  --set cluster.nodes=1 --set cluster.gpus_per_node=1 --set workload.global_batch=8 \
  --set workload.model.layers=4
J=flat/summary.json
expect_json $J '.power.utilization == 1 and .power.over_time.swing.max_kw == 0'
expect_json $J '(.power.over_time.energy_kwh / .power.energy_kwh_per_step - 1) | fabs < 1e-9'
expect_json $J '(.power.over_time.peak_kw / .power.facility_kw - 1) | fabs < 1e-12'

# --- same seed, same bytes
mv dp dp1
expect_exit 0 "$FABSIM" run "$EX" $ON --set power.bands=0.1-1,1-10 --set output.dir=dp
if cmp -s dp1/timeseries.csv dp/timeseries.csv; then pass; else fail "timeseries.csv differs"; fi
jq -S 'del(.sim.wall_s)' dp1/summary.json > a.json; jq -S 'del(.sim.wall_s)' dp/summary.json > b.json
if cmp -s a.json b.json; then pass; else fail "summary.json differs between two runs"; fi

# --- key off: no power columns, no over_time
expect_exit 0 "$FABSIM" run "$EX" --set power.rack.cooling=liquid --set output.dir=off
expect_json off/summary.json '.power | has("over_time") | not'
if head -1 off/timeseries.csv | grep -q power_; then fail "power columns with the key off"; else pass; fi

# --- bad bands: located, exit 2, nothing simulated
for b in 2-1 -1-2 1-2,1.5-3 1-x; do
  expect_exit 2 "$FABSIM" run "$EX" --set power.bands=$b --set output.dir=bad
  expect_err "--set:1:"; expect_err "power.bands"
done

finish
