#!/usr/bin/env bash
# validate/run.sh: the fixed fit/check rule (exit 2 naming the case), a curve
# band's error (rms of ln(fabsim / published), signed by the mean, worst size),
# a training step's parts, and --baseline. The published figures of the
# synthetic cases are built from fabsim's own output, so the expected errors are
# known exactly whatever the model gives.
source "$2/tests/cli/lib.sh"
RUN=(bash "$SRC/validate/run.sh" --fabsim "$FABSIM")

# the real case file obeys the rule (nothing runs: --only matches no id)
expect_exit 0 "${RUN[@]}" --only '^$'
expect_out "check: 0 of 0 inside target"

# a case moved to the other set is refused before anything runs
jq '(.[] | select(.id == "nemo-llama2-7b-8gpu-fp8") | .set) = "fit"' "$SRC/validate/cases.json" >moved.json
expect_exit 2 "${RUN[@]}" --cases moved.json --only '^$'
expect_err 'nemo-llama2-7b-8gpu-fp8: "set" is "fit" but the fixed rule gives "check"'
# a new case on a source of the 37 earlier cases is fit, whatever its hash
jq '. + [{id: "new-on-fit-source", set: "check", source_key: "github:NVIDIA/nccl-tests#212",
          kind: "bandwidth", what: "x", source: "x", published: 1, runs: [["topo"]], figure: "1"}]' \
  "$SRC/validate/cases.json" >fitsrc.json
expect_exit 2 "${RUN[@]}" --cases fitsrc.json --only '^$'
expect_err 'new-on-fit-source: "set" is "check" but the fixed rule gives "fit" (its source is a fit source)'
# a source_key that is not canonical
jq '(.[] | select(.id == "nemo-llama2-7b-8gpu-fp8") | .source_key) = "url:https://example.org/x/"' \
  "$SRC/validate/cases.json" >badkey.json
expect_exit 2 "${RUN[@]}" --cases badkey.json --only '^$'
expect_err "nemo-llama2-7b-8gpu-fp8: source_key 'url:https://example.org/x/' is not"

# ---- synthetic cases on a source whose set the hash decides ----
key=url:example.org/fabsim-validate-test
case $(printf %s "$key" | sha256sum | cut -c1) in [0-7]) set=check ;; *) set=fit ;; esac
run_json() { "$FABSIM" run --set output.dir="$WORK/o" --set output.report=false \
  --set output.database=none --quiet --json "$@"; }
# fabsim's busbw and time at 128 KiB and 1 MiB, one H100 node
b1=$(run_json --set cluster.nodes=1 --set workload.collective.size=131072 | jq '.collectives[0].busbw_GBps')
b2=$(run_json --set cluster.nodes=1 --set workload.collective.size=1048576 | jq '.collectives[0].busbw_GBps')
row() { printf '%12d %12d float sum -1 %8.2f %7.2f %7.4f 0 %8.2f %7.2f %7.4f 0\n' "$1" "$(($1 / 4))" 10 1 "$2" 10 1 "$2"; }
curve() { # busbw published at 128 KiB and 1 MiB
  echo "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong"
  row 131072 "$1"; row 1048576 "$2"; echo "# Avg bus bandwidth : 1"; }
# fabsim / published = 1/1.05 and 1.2: rms = 0.1335, exp(rms) - 1 = 14.3 %, mean > 0
curve "$(jq -n "$b1 * 1.05")" "$(jq -n "$b2 / 1.2")" >off.txt
# fabsim / published = 1.05 and 1/1.05: exp(rms) - 1 = 5.0 %, inside 10 %
curve "$(jq -n "$b1 / 1.05")" "$(jq -n "$b2 * 1.05")" >near.txt
# a one-node training step and its parts
step=$(run_json --set cluster.nodes=1 --set workload.kind=training | jq -c .step)
t=$(jq .time_s <<<"$step") comp=$(jq .compute_s <<<"$step") exp_=$(jq .exposed_comm_s <<<"$step")
jq -n --arg set "$set" --arg key "$key" --arg off "$WORK/off.txt" --arg near "$WORK/near.txt" \
  --argjson t "$t" --argjson c "$comp" --argjson e "$exp_" '
  def band($id; $f): {id: $id, set: $set, source_key: $key, kind: "curve", band: "mid", what: $id,
    source: "synthetic", curve: $f, runs: [["run", "--set", "cluster.nodes=1"]]};
  def step($id; $parts): {id: $id, set: $set, source_key: $key, kind: "step", unit: "s", what: $id,
    source: "synthetic", published: $t, figure: ".[0].step.time_s", parts: $parts,
    runs: [["run", "--set", "cluster.nodes=1", "--set", "workload.kind=training"]]};
  [band("syn-band-off"; $off), band("syn-band-near"; $near),
   step("syn-parts-ok"; {compute_s: $c, exposed_comm_s: $e}),
   step("syn-parts-off"; {compute_s: ($c / 0.7)}),
   step("syn-parts-share"; {bubble_s: ($t * 0.04)})]' >syn.json
expect_exit 1 "${RUN[@]}" --cases syn.json
grep -F 'syn-band-off' "$WORK/out" >line.txt
if grep -qF '+14.3%' line.txt && grep -qF '2 sizes 128 KiB-1 MiB, worst 1 MiB: +20.0%' line.txt \
   && grep -qF 'FAIL' line.txt; then pass; else fail "band error: $(cat line.txt)"; fi
if grep -F 'syn-band-near' "$WORK/out" | grep -qE '\+5\.0%.* ok '; then pass
else fail "band inside: $(grep -F syn-band-near "$WORK/out")"; fi
if grep -F 'syn-parts-ok' "$WORK/out" | grep -qE ' ok .*parts: compute .*\(0 %\)'; then pass
else fail "parts inside: $(grep -F syn-parts-ok "$WORK/out")"; fi
# compute 30 % below the published part: the step total alone would pass
if grep -F 'syn-parts-off' "$WORK/out" | grep -qE 'FAIL .*\(-30 %\)'; then pass
else fail "parts outside: $(grep -F syn-parts-off "$WORK/out")"; fi
# a part under 5 % of the step is judged on its share: fabsim's 0 against 4
# points is inside (on its value it would be -100 %)
if grep -F 'syn-parts-share' "$WORK/out" | grep -qE ' ok .*bubble .*\(share -4 pt\)'; then pass
else fail "parts share: $(grep -F syn-parts-share "$WORK/out")"; fi
expect_out "$set: 3 of 5 inside target"
# --baseline: issue 26's misses are recorded, not failed
expect_exit 0 "${RUN[@]}" --cases syn.json --baseline
if grep -F 'syn-band-off' "$WORK/out" | grep -qF ' base '; then pass
else fail "baseline: $(grep -F syn-band-off "$WORK/out")"; fi

echo "test_validate: $checks checks, $failures failures"
[ "$failures" = 0 ]
