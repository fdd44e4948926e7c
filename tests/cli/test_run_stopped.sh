#!/usr/bin/env bash
# A run stopped by Ctrl-C reports what completed over the time it took (#13):
# a traffic run's throughput is the bytes of the transfers that completed
# over the simulated time reached, never above the NICs' aggregate rate; a
# collective that did not complete has no time and no bandwidth. Each run
# would take minutes; it stops itself after its first slice of simulated time
# (FABSIM_TEST_PAUSE, fabsim/core.h), is sent Ctrl-C there and continued: a
# condition, not a delay, so what is checked holds at any machine load.
. "$(dirname "$0")/lib.sh"

# stop_run DIR ARGS...: run, Ctrl-C once the run has simulated its first slice
stop_run() {
  local dir=$1; shift
  interrupt_at simulate "$dir" "$@"
  [ -n "$stop_rc" ] || return
  [ "$stop_rc" = 130 ] && pass || fail "$dir: exit $stop_rc after SIGINT (want 130)"
  [ -e "$dir/summary.json" ] && pass || fail "$dir: no summary after the stop: $(cat "$dir.err")"
}

# 16 nodes x 8 NICs at 400 Gb/s = 51.2 Tb/s; all-to-all of 4 MB per pair at the packet
# fidelity: about 100 s of wall time to the end
stop_run a2a "$SRC/examples/tour/burst.yaml" --set workload.traffic.pattern=all-to-all \
  --set workload.traffic.size=4MB
expect_json a2a/summary.json '.complete == false and .outcome == "stopped"'
expect_json a2a/summary.json '.traffic.throughput_Gbps * 1e9 <= 128 * 400e9 and
  .traffic.delivered_bytes <= .traffic.flows * .traffic.bytes_per_flow and
  .traffic.delivered_bytes == .network.bytes and
  ((.traffic.throughput_Gbps - .traffic.delivered_bytes * 8 / .traffic.time_s / 1e9) | fabs) < 1e-6'
[ "$(sqlite3 a2a/results.sqlite "SELECT value <= 128 * 400 FROM metrics WHERE name = 'traffic.throughput_Gbps'")" = 1 ] \
  && pass || fail "results.sqlite throughput over the NICs' rate"

# a 1 GiB ring AllReduce over 128 GPUs at the packet fidelity, stopped: no bandwidth
stop_run ring --set cluster.nodes=16 --set simulation.fidelity=packet
expect_json ring/summary.json '.outcome == "stopped" and .collectives[0].busbw_GBps == null and
  .collectives[0].algbw_GBps == null and .collectives[0].time_s == null and
  .collectives[0].elapsed_s > 0 and .collectives[0].delivered_bytes == .network.bytes'

finish
