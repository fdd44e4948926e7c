#!/usr/bin/env bash
# A training step's pipeline sends and data-parallel collectives overlap on
# a NIC's link (interleaved 1F1B, tp 4, pp 4: validate/cases.json's nemo
# cases at a smaller scale). The analytic fidelity times each operation
# alone, so together they were offered 390 Gb/s to a 368 Gb/s link
# (400 Gb/s x cluster.nic.efficiency 0.92), and the flow fidelity's phases,
# each spread evenly over its time, 408 Gb/s in a row: the line-rate
# invariant refused to write anything (exit 1). Now such a row shows the
# line rate and the excess drains into the next rows (bytes kept); at the
# analytic fidelity a warning names the link, the row, the offered rate and
# the line rate, and says the step time leaves that contention out. NICs
# and ports have one bound: the link's modelled rate.
. "$(dirname "$0")/lib.sh"

ARGS=(--set workload.kind=training --set cluster.nodes=4 --set workload.model.layers=16
  --set workload.model.hidden=8192 --set workload.model.heads=64 --set workload.model.seq_len=4096
  --set workload.model.vocab=32000 --set workload.model.ffn_hidden=28672
  --set workload.model.gated_ffn=true --set workload.model.params=13.6e9
  --set workload.parallel.tp=4 --set workload.parallel.pp=4 --set workload.parallel.virtual_stages=4
  --set workload.precision=fp8 --set workload.micro_batch=1 --set workload.global_batch=32
  --set workload.pipeline.schedule=interleaved --set output.ports=leaf0-nic12,nic12 --quiet)

# within FILE: every NIC rate at most 368 Gb/s, every port utilization at most 1
within() {
  awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) { if ($i ~ /gbps_max$|gbps_p99$|^nic12:(tx|rx)_gbps$|^leaf0-nic12:gbps$/) g[i] = $i; if ($i ~ /util_max$|:util$/ && $i !~ /^nic/) u[i] = $i }; next }
    { for (i in g) if ($i > 368 + 1e-6) { print "row " NR - 1 " " g[i] " = " $i; exit 1 }
      for (i in u) if ($i > 1 + 1e-9) { print "row " NR - 1 " " u[i] " = " $i; exit 1 } }' "$1" >"$WORK/bad" &&
    pass || fail "$1: $(cat "$WORK/bad")"
}

expect_exit 0 "$FABSIM" run "${ARGS[@]}" --set output.dir=an
within an/timeseries.csv
expect_json an/summary.json '[.events[] | select(.kind == "warning" and .component == "telemetry")] | length == 1'
expect_json an/summary.json '.events[] | select(.kind == "warning" and .component == "telemetry") | .detail | test("^leaf0-nic12 was offered 376.33 Gb/s in the row at 0.421 s, above its line rate of 368 Gb/s: .*step time does not include that contention")'
if grep -q 'telemetry,warning,.*leaf0-nic12 was offered' an/events.csv; then pass; else fail "events.csv lacks the warning"; fi
expect_json an/summary.json '.telemetry.nic_tx_bytes == .telemetry.nic_rx_bytes'

# the flow fidelity shares the link: no warning, and the series within the bound
expect_exit 0 "$FABSIM" run "${ARGS[@]}" --set simulation.fidelity=flow --set output.dir=flow
within flow/timeseries.csv
expect_json flow/summary.json '[.events[] | select(.kind == "warning" and .component == "telemetry")] | length == 0'
finish
