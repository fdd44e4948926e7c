#!/usr/bin/env bash
# report.html, timeseries.csv, events.csv, metrics.txt: what a run leaves in
# output.dir. The report is opened in headless Chromium (check_report.mjs):
# no console error, no network request, every chart rendered with data.
. "$(dirname "$0")/lib.sh"

if [ ! -x /usr/bin/chromium ] || [ ! -d "$SRC/report/node_modules/playwright-core" ]; then
  fail "needs /usr/bin/chromium and report/node_modules (run make deps)"; finish; exit
fi
reports=()

# --- a 1,024-GPU ring AllReduce on the analytic fidelity
# (protocol none: ideal transfers, so every moment of the run has traffic in flight; the
#  protocols' launch and per-hop latencies are gaps the GPU shares would count as idle)
expect_exit 0 "$FABSIM" run "$SRC/examples/default.yaml" --set workload.collective.protocol=none \
  --set fabric.routing=ecmp \
  --set output.dir=a --quiet
for f in summary.json scenario.yaml timeseries.csv events.csv report.html results.sqlite; do
  [ -s "a/$f" ] && pass || fail "a/$f not written"
done
[ ! -e a/metrics.txt ] && pass || fail "metrics.txt written without output.openmetrics"
expect_json a/summary.json '.complete == true and (.files | index("report.html")) != null'
# about 500 samples: the run's length / 500 rounded down to 1, 2 or 5 x 10^k ps (src/run/telemetry.c),
# so between 500 and 1,250
expect_json a/summary.json '.telemetry.samples >= 500 and .telemetry.samples <= 1250 and .telemetry.truncated == false'
# every NIC carries one ring's node-crossing hop: per-NIC throughput x time = bytes it sent
expect_json a/summary.json '(.telemetry.nic_tx_bytes - .telemetry.nic_rx_bytes | fabs) < 1e-6 * .telemetry.nic_tx_bytes'
expect_json a/summary.json '.telemetry.gpu_time_share.network > 0.99'
head -1 a/timeseries.csv | grep -q '^time_s,interval_s,gpu_idle,.*,nic_tx_gbps_total,.*,port_util_max$' \
  && pass || fail "timeseries.csv header: $(head -1 a/timeseries.csv)"
# the NIC series integrates to the bytes the NICs moved
awk -F, 'NR==1{for(i=1;i<=NF;i++) c[$i]=i; next} {s += $c["nic_tx_gbps_total"] * $c["interval_s"]} END {printf "%.17g\n", s * 1e9 / 8}' \
  a/timeseries.csv > integ
expect_json a/summary.json "((.telemetry.nic_tx_bytes - $(cat integ)) | fabs) < 1e-6 * .telemetry.nic_tx_bytes"
grep -q '^0,job,workload-start,allreduce of 1073741824 bytes over 1024 ranks,$' a/events.csv && pass \
  || fail "events.csv lacks the workload start: $(head -3 a/events.csv)"
grep -q ',shared-channel,' a/events.csv && pass || fail "no ECMP sharing event in a 1,024-GPU ring"
# self-contained: no external script, style, font or image
if grep -qiE '<script[^>]+src=|<link[^>]+href=|url\(http|@import' a/report.html; then fail "report loads something"; else pass; fi
reports+=("a/report.html:nic,nic-total,gpu,ports,fct,events,hot")

# --- deterministic: the same run gives the same bytes (report included)
mv a a1
# (protocol none: ideal transfers, so every moment of the run has traffic in flight; the
#  protocols' launch and per-hop latencies are gaps the GPU shares would count as idle)
expect_exit 0 "$FABSIM" run "$SRC/examples/default.yaml" --set workload.collective.protocol=none \
  --set fabric.routing=ecmp \
  --set output.dir=a --quiet
for f in timeseries.csv events.csv report.html scenario.yaml; do
  cmp -s "a/$f" "a1/$f" && pass || fail "$f differs between two identical runs"
done
cmp -s <(grep -v wall_s a/summary.json) <(grep -v wall_s a1/summary.json) && pass || fail "summary.json differs"

# --- the flow fidelity, an incast, watched ports and NICs, OpenMetrics
expect_exit 0 "$FABSIM" run --set cluster.nodes=8 --set workload.kind=traffic \
  --set workload.traffic.pattern=incast --set workload.traffic.senders=6 --set simulation.fidelity=flow \
  --set output.ports=leaf0-nic0,nic0,leaf1-spine0 --set output.openmetrics=true \
  --set output.sample_interval=1us --set output.dir=b --quiet
head -1 b/timeseries.csv | grep -q 'leaf0-nic0:gbps,leaf0-nic0:util,leaf1-spine0:gbps,leaf1-spine0:util,nic0:tx_gbps,nic0:rx_gbps,nic0:util$' && pass \
  || fail "watched columns: $(head -1 b/timeseries.csv)"
expect_json b/summary.json '.telemetry.interval_s == 1e-06'
# the incast's last hop runs at line rate while the senders are active
awk -F, 'NR==1{for(i=1;i<=NF;i++) c[$i]=i; next} {if ($c["leaf0-nic0:util"] > m) m = $c["leaf0-nic0:util"]} END {exit !(m > 0.99 && m < 1.0001)}' \
  b/timeseries.csv && pass || fail "leaf0-nic0 never reached line rate"
grep -q '^# EOF$' b/metrics.txt && pass || fail "metrics.txt does not end with # EOF"
grep -q '^fabsim_traffic_time_s{scenario="",seed="1"} ' b/metrics.txt && pass || fail "metrics.txt lacks the traffic time"
grep -q '^fabsim_nic_tx_bytes_total{' b/metrics.txt && pass || fail "metrics.txt lacks NIC counters"
reports+=("b/report.html:nic,gpu,ports,fct,watched,hot")

# --- output.report=false; a bad output.ports is a located input error
expect_exit 0 "$FABSIM" run --set cluster.nodes=2 --set output.report=false --set output.dir=c --quiet
[ ! -e c/report.html ] && pass || fail "report.html written with output.report=false"
expect_exit 2 "$FABSIM" run --set cluster.nodes=2 --set output.ports=leaf0-leaf1 --set output.dir=d
expect_err "--set:2:14: output.ports:"; expect_err "output.ports: 'leaf0-leaf1' is neither a switch port nor a NIC"
printf 'output:\n  ports: "nic0, nic99"\n' > ports.yaml
expect_exit 2 "$FABSIM" run ports.yaml --set cluster.nodes=2 --set output.dir=d
expect_err "ports.yaml:2:10: output.ports: 'nic99'"

# --- the gradient-synchronization burst of a data-parallel step is plain in the series:
# NICs silent through the forward pass, then bursts of gradient buckets during the backward
# pass and after it (64 NICs of 400 Gb/s: 25.6 Tb/s in all)
# (hash seed 2: no two of the rail-aligned rings' flows share a spine link, which ECMP's
#  default seed does on this 2-leaf fabric; the check is about the burst, not the hash)
expect_exit 0 "$FABSIM" run "$SRC/examples/dense-7b-64gpu.yaml" --set simulation.fidelity=flow \
  --set fabric.ecmp.hash_seed=2 --set output.dir=dp --quiet
fwd=$(jq .step.forward_s dp/summary.json)
awk -F, -v fwd="$fwd" 'NR==1{for(i=1;i<=NF;i++) c[$i]=i; next}
  { t = $c["time_s"] + $c["interval_s"]; v = $c["nic_tx_gbps_total"]
    if (t <= fwd && v > 0) loud++; if (t <= fwd) quiet++; if (v > m) m = v }
  END { exit !(loud == 0 && quiet > 100 && m > 0.25 * 64 * 400) }' dp/timeseries.csv && pass \
  || fail "no quiet forward pass followed by a gradient burst in dp/timeseries.csv"
# the GPUs' compute share in the series is the step's (time-weighted over the rows)
want=$(jq '.step.compute_s / .step.time_s' dp/summary.json)
awk -F, -v want="$want" 'NR==1{for(i=1;i<=NF;i++) c[$i]=i; next}
  { w += $c["interval_s"]; v += $c["interval_s"] * $c["gpu_compute"] }
  END { d = v / w - want; exit !(d < 0.005 && d > -0.005) }' dp/timeseries.csv && pass \
  || fail "gpu_compute in dp/timeseries.csv does not average to the step's compute share $want"
# a pipeline: the bubble is in the series too (1,024 GPUs, TP8 x PP4 x DP32)
expect_exit 0 "$FABSIM" run "$SRC/examples/llama-70b-1024gpu.yaml" --set output.dir=pp --quiet
want=$(jq '.step.bubble_s / .step.time_s' pp/summary.json)
awk -F, -v want="$want" 'NR==1{for(i=1;i<=NF;i++) c[$i]=i; next}
  { w += $c["interval_s"]; v += $c["interval_s"] * $c["gpu_bubble"] }
  END { d = v / w - want; exit !(want > 0.01 && d < 0.005 && d > -0.005) }' pp/timeseries.csv && pass \
  || fail "gpu_bubble in pp/timeseries.csv does not average to the step's bubble share $want"
reports+=("pp/report.html:gpu,steps")

# --- a disturbed job: a rack over its cooling throttles its GPUs; the report shows the root
# cause of each step's excess over the fault-free baseline
expect_exit 0 "$FABSIM" run "$SRC/examples/dense-7b-64gpu.yaml" --set simulation.fidelity=flow \
  --set power.rack.cooling_failure=0:10 --set workload.steps=2 --set output.dir=hot --quiet
expect_json hot/summary.json '(.root_cause | length) == 2 and (.root_cause[0].causes[0].kind == "thermal-throttle")'
reports+=("hot/report.html:gpu,steps,events,cause")

# --- several jobs on one fabric: the jobs chart (shared and alone) and table; a trace's
# iterations
expect_exit 0 "$FABSIM" run "$SRC/examples/shared/two-jobs-random.yaml" --set output.dir=jobs --quiet
expect_json jobs/summary.json '(.jobs | length) == 2 and .jobs[0].slowdown > 1.5'
reports+=("jobs/report.html:jobs,jobs-timeline")
expect_exit 0 "$FABSIM" run "$SRC/tests/pdes/jobs.yaml" --set output.dir=jobs-train --quiet
expect_json jobs-train/summary.json '(.jobs | length) == 3 and .jobs[0].kind == "training" and (.jobs[0].steps | length) == 1 and (.jobs[0].cause | test("share links with b"))'
reports+=("jobs-train/report.html:jobs,jobs-timeline")
expect_exit 0 "$FABSIM" run "$SRC/examples/trace.yaml" --set workload.steps=3 --set output.dir=trace --quiet
expect_json trace/summary.json '(.trace.iteration_s | length) == 3'
reports+=("trace/report.html:iterations")

# --- the comparison report of fabsim compare (bar charts of the headline figures, series)
expect_exit 0 "$FABSIM" compare "$SRC/examples/default.yaml" "$SRC/examples/rail-roce.yaml" \
  --set cluster.nodes=16 --set simulation.fidelity=flow --out cmp --quiet
[ -s cmp/report.html ] && pass || fail "compare wrote no report.html"
reports+=("cmp/report.html:cmp-0,cmp-series-0")

# --- the browser
node "$SRC/tests/cli/check_report.mjs" "$SRC" "${reports[@]}" > browser.log 2>&1 && pass \
  || fail "report check in Chromium: $(cat browser.log)"
cat browser.log
finish
