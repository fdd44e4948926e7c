#!/usr/bin/env bash
# power.mitigation.* (docs/power.md): each mitigation in the summary's
# power.mitigations[] and one terminal line each, against the closed forms of a
# data-parallel job of 64 H100 (700 W TDP, 70 W idle, PUE 1.2); a battery of
# zero capacity changes no byte; bad values located, exit 2.
. "$(dirname "$0")/lib.sh"

EX=$SRC/examples/dense-7b-64gpu.yaml
ON="--set power.timeseries=true --set power.rack.cooling=liquid --set workload.steps=2"

expect_exit 0 "$FABSIM" run "$EX" $ON --set output.dir=plain
expect_json plain/summary.json '.power | has("mitigations") | not'

# --- a floor at TDP: no swing left, the run at compute power throughout
expect_exit 0 "$FABSIM" run "$EX" $ON --set power.mitigation.floor=1 --set output.dir=floor
J=floor/summary.json
expect_json $J '.power.mitigations | length == 1'
expect_json $J '.power.mitigations[0].mitigation == "floor"'
expect_json $J '.power.mitigations[0].swing_max_kw.after == 0'
expect_json $J '(.power.mitigations[0].swing_max_kw.before / (630 * 64 * 1.2 / 1000) - 1) | fabs < 0.01'
expect_json $J '.power.mitigations[0].step_time_s.before == .power.mitigations[0].step_time_s.after'
expect_json $J '(.power.mitigations[0].energy_kwh.after / (.power.over_time.peak_kw * ([.steps[].time_s] | add) / 3600) - 1) | fabs < 0.01'
expect_out "mitigation   floor 100% of TDP: swing 48.38 kW -> 0 W"

# --- every mitigation at once: one entry and one line each, in a fixed order
ALL="--set power.mitigation.floor=0.6 --set power.mitigation.pacing=0.5 \
  --set power.mitigation.ramp_up_w_per_s=2000 --set power.mitigation.ramp_down_w_per_s=2000 \
  --set power.mitigation.battery.kwh=0.05 --set power.mitigation.battery.kw=10 \
  --set power.mitigation.facility_cap_kw=120"
expect_exit 0 "$FABSIM" run "$EX" $ON $ALL --set power.bands=0.1-1 --set output.dir=all
J=all/summary.json
expect_json $J '[.power.mitigations[].mitigation] == ["floor", "pacing", "ramp", "battery", "cap"]'
expect_json $J '[.power.mitigations[] | .swing_max_kw.after < .swing_max_kw.before] | all'
expect_json $J '(.power.mitigations[0].swing_max_kw.after / (280 * 64 * 1.2 / 1000) - 1) | fabs < 0.01'
expect_json $J '(.power.mitigations[1].swing_max_kw.after / (350 * 64 * 1.2 / 1000) - 1) | fabs < 0.01'
expect_json $J '.power.mitigations[2].step_time_s.after > .power.mitigations[2].step_time_s.before'
expect_json $J '.power.mitigations[2].ramp_kw_per_s.after <= 2000 * 64 * 1.2 / 1000 * 1.000001'
expect_json $J '.power.mitigations[3].battery.losses_kwh > 0 and .power.mitigations[3].energy_added_kwh > 0'
expect_json $J '.power.mitigations[3].peak_kw.after < .power.mitigations[3].peak_kw.before'
expect_json $J '.power.mitigations[4].peak_kw.after <= 120 * 1.000001 and .power.mitigations[4].limit_met'
expect_json $J '.power.mitigations[4].step_time_cost_fraction > 0'
expect_json $J '[.power.mitigations[] | .bands | length == 1] | all'
for m in floor pacing ramp battery cap; do expect_out "mitigation   $m "; done
if [ "$(grep -c "^mitigation " "$WORK/out")" = 5 ]; then pass; else fail "not 5 mitigation lines"; fi

# --- a battery of zero capacity: no output changes (but the overrides it records)
expect_exit 0 "$FABSIM" run "$EX" $ON --set power.mitigation.battery.kwh=0 \
  --set power.mitigation.battery.kw=50 --set output.dir=zero
Q='del(.sim.wall_s, .scenario.overrides)'
jq -S "$Q" plain/summary.json > a.json; jq -S "$Q" zero/summary.json > b.json
if cmp -s a.json b.json; then pass; else fail "a battery of zero capacity changed summary.json"; fi
if cmp -s plain/timeseries.csv zero/timeseries.csv; then pass; else fail "timeseries.csv changed"; fi

# --- a rack power cap is told apart from cooling (issue 32, item 3)
expect_exit 0 "$FABSIM" run "$EX" --set power.rack.cooling=liquid --set power.rack.cap_kw=25 \
  --set workload.steps=1 --set output.dir=cap
expect_json cap/summary.json '[.events[] | select(.kind == "power-cap-throttle")] | length == 2'
expect_json cap/summary.json '[.events[] | select(.kind == "thermal-throttle")] | length == 0'
expect_json cap/summary.json '[.events[] | .detail | test("kW power cap limit")] | any'
# ... and in the root cause: the straggler's cause is the cap, not cooling
expect_json cap/summary.json '[.root_cause[].causes[] | select(.kind == "power-cap-throttle") |
  .text | test("throttled by the rack.s power cap")] | (length > 0 and all)'
expect_json cap/summary.json '[.root_cause[].causes[] | select(.kind == "thermal-throttle")] | length == 0'

# --- bad input: located, exit 2, nothing simulated
for b in power.mitigation.floor=1.5 power.mitigation.pacing=-1 \
  power.mitigation.battery.efficiency=0 power.mitigation.ramp_up_w_per_s=x; do
  expect_exit 2 "$FABSIM" run "$EX" $ON --set $b --set output.dir=bad
  expect_err "--set:"; expect_err "${b%%=*}"
done
expect_exit 2 "$FABSIM" run "$EX" --set power.mitigation.floor=0.5 --set output.dir=bad
expect_err "power.mitigation.floor"; expect_err "power.timeseries"

finish
