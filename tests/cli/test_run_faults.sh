#!/usr/bin/env bash
# fabsim run, training with disturbances: power object against its closed
# form, a rack over its cooling throttling its GPUs into stragglers (root
# cause names them, the excess matches compute x (1/f - 1)), several steps,
# the events log in summary.json and events.csv, bad input located.
. "$(dirname "$0")/lib.sh"

# 8 GPUs per node, 4 nodes (one rack of 4 servers), data parallel only
SMALL=(--set cluster.nodes=4 --set workload.kind=training --set workload.model.layers=4
       --set workload.model.hidden=1024 --set workload.model.heads=16
       --set workload.model.seq_len=2048 --set workload.model.vocab=0
       --set workload.global_batch=32 --set workload.bucket_size=1TiB
       --set workload.grad_overlap=false --set simulation.fidelity=flow)

# --- fault-free: power = (GPUs x (idle + u (TDP - idle)) + nodes x node + NICs x nic
#     + switch ports + transceivers) x PUE, at the job's own utilization
expect_exit 0 "$FABSIM" run "${SMALL[@]}" --set output.dir=clean --set workload.steps=2 --json
cp "$WORK/out" clean.json
expect_json clean.json '(.steps | length) == 2 and .steps[1].start_s == .steps[0].time_s'
expect_json clean.json '.root_cause == [] and .failure == null and .sdc == [] and .events == []'
expect_json clean.json '.power.utilization_source == "job" and
  (.power.utilization - (.steps[0].compute_s / .steps[0].time_s) | fabs) < 1e-9'
expect_json clean.json '. as $s | .topology as $t | .power.utilization as $u |
  (($s.gpus * (70 + $u * 630) + $t.nodes * 4400 + $t.endpoints * 25
    + $t.switches * $t.switch_radix * 12 + $t.transceivers * 9) / 1000) as $it |
  ((.power.it_kw - $it) | fabs) < 1e-6 * $it and
  ((.power.facility_kw - 1.2 * $it) | fabs) < 1e-6 * $it and
  ((.power.energy_kwh_per_step - 1.2 * $it * .steps[0].time_s / 3600) | fabs) < 1e-9'
expect_exit 0 "$FABSIM" run "${SMALL[@]}" --set output.dir=clean2
expect_out "power        IT "

# --- the rack's cooling reduced to 20 kW: its 32 GPUs throttle, the job straggles
expect_exit 0 "$FABSIM" run "${SMALL[@]}" --set output.dir=hot --set workload.steps=2 \
  --set power.rack.cooling_failure=0:20 --json
cp "$WORK/out" hot.json
expect_json hot.json '[.events[] | select(.kind == "thermal-throttle")] | length == 1'
expect_json hot.json '.events[0].component == "rack0" and .events[0].at_s == 0'
expect_json hot.json '(.root_cause | length) == 2 and .root_cause[0].step == 1'
expect_json hot.json '.root_cause[0].causes[0].kind == "thermal-throttle" and
  (.root_cause[0].causes[0].component | test("^gpu([0-9]|[12][0-9]|3[01])$"))'
expect_json hot.json '(.root_cause[0].excess_s - (.steps[0].time_s - .steps[0].baseline_s) | fabs) < 1e-12'
# closed form: compute C at f takes C/f; excess = C/f - C = compute_s (1 - f)
expect_json hot.json '(.events[0].detail | capture("throttle to (?<f>[0-9.]+)").f | tonumber) as $f |
  ((.root_cause[0].excess_s - .steps[0].compute_s * (1 - $f)) | fabs) < 0.01 * .root_cause[0].excess_s'
expect_json hot.json '[.events[] | select(.kind == "straggler")] | length == 2'
expect_json hot.json '[.events[].at_s] == ([.events[].at_s] | sort)'
expect_json hot.json '.power.racks_throttled == 1 and .power.it_kw < .power.it_demand_kw'
grep -q "thermal-throttle" hot/events.csv && pass || fail "events.csv lacks the thermal throttle"
grep -q "straggler" hot/events.csv && pass || fail "events.csv lacks the stragglers"
expect_exit 0 "$FABSIM" run "${SMALL[@]}" --set output.dir=hot2 --set power.rack.cooling_failure=0:20
expect_out "root cause   step 1 +"
expect_out "throttled by the rack's cooling"

# --- a GPU slowed to f = 0.5 (faults list): each step slows by its compute x (1/f - 1)
expect_exit 0 "$FABSIM" run "${SMALL[@]}" --set output.dir=slow --set workload.steps=3 \
  --set 'faults=[{at: 0s, kind: gpu-slowdown, target: gpu5, factor: 0.5}]' --json
cp "$WORK/out" slow.json
expect_json slow.json '.steps[0].baseline_s as $t0 | .steps[0].compute_s as $cf |
  (($cf / 2) as $c | ((.steps[0].time_s - ($t0 + $c * (1 / 0.5 - 1))) | fabs) < 1e-9 * $t0)'
expect_json slow.json '(.root_cause | length) == 3 and ([.root_cause[].causes[0].component] | unique) == ["gpu5"]'
# the 31 GPUs waiting for gpu5 are not computing (#13): in the step's idle share, closed form
# (gpu5 computes C/f, the others C, of 32 x the step), and in the GPU series alike
expect_json slow.json '.steps[0].compute_s as $cf | .steps[0].time_s as $t |
  ((.step.gpu_idle_frac - (1 - ($cf + 31 * $cf * 0.5) / (32 * $t))) | fabs) < 1e-9 and
  ((.telemetry.gpu_time_share.compute - (1 - .step.gpu_idle_frac)) | fabs) < 1e-3 and
  .telemetry.gpu_time_share.network > 0.2'
expect_json slow.json '.root_cause[0].causes[0].kind == "gpu-slowdown" and
  (.root_cause[0].text | test("^step 1 \\+[0-9.]+ %: gpu5 slowed to 0.5 \\(node0, rack 0\\).*the other 31 GPUs waited"))'
expect_json slow.json '[.events[] | select(.kind == "gpu-slowdown" and .component == "gpu5")] | length == 1'
# the same slowdown for one step only (duration): steps 2 and 3 back at the baseline
expect_exit 0 "$FABSIM" run "${SMALL[@]}" --set output.dir=slow1 --set workload.steps=3 \
  --set 'faults=[{at: 0s, kind: gpu-slowdown, target: gpu5, factor: 0.5, duration: 2ms}]' --json
expect_json "$WORK/out" '(.steps[2].time_s - .steps[2].baseline_s | fabs) < 1e-12 and .root_cause[0].step == 1'

# --- a node fails in step 3 (7 ms: steps of about 3 ms): the job stops; work lost since the last checkpoint
#     (the window starts at one) = min(t mod (tau + delta), tau); restart = R + lost
expect_exit 4 "$FABSIM" run "${SMALL[@]}" --set output.dir=fail --set workload.steps=4 \
  --set 'faults=[{at: 7ms, kind: node-fail, target: node2}]' \
  --set reliability.checkpoint.interval=30min --set reliability.checkpoint.write_time=1min \
  --set reliability.restart_time=10min --json
cp "$WORK/out" fail.json
expect_json fail.json '(.steps | length) == 2 and .failure.kind == "node-fail" and .failure.component == "node2"'
expect_json fail.json '.failure.step == 3 and .failure.steps_completed == 2 and .failure.node == 2'
expect_json fail.json '(.failure.lost_work_s - 0.007 | fabs) < 1e-12 and (.failure.restart_cost_s - 600.007 | fabs) < 1e-9'
expect_json fail.json '(.failure.lost_gpu_hours - 0.007 * 32 / 3600 | fabs) < 1e-12'
expect_json fail.json '(.failure.expected_lost_work_s - (1800 * 1800 / 2 + 1800 * 60) / 1860 | fabs) < 1e-9'
expect_json fail.json '[.events[] | select(.kind == "node-fail" or .kind == "job-stopped")] | length == 2'
expect_exit 4 "$FABSIM" run "${SMALL[@]}" --set output.dir=fail2 --set workload.steps=4 \
  --set 'faults=[{at: 7ms, kind: node-fail, target: node2}]'
expect_out "failure      node-fail node2 at 7 ms in step 3: job stopped"
expect_out "(Daly)"

expect_json fail.json '.outcome == "failed" and .complete == false'
expect_err "the simulated job failed: node-fail node2"

# --- a job whose transfers fail has failed (#13): the leaf of every node down at 1 ms, no
#     route once routing reconverges (1 s): the job stops there, exit 4, never "done" faster
#     than its fault-free baseline
expect_exit 4 "$FABSIM" run "${SMALL[@]}" --set output.dir=lost --set workload.steps=3 \
  --set 'faults=[{at: 1ms, kind: switch-down, target: leaf0}]' --json
cp "$WORK/out" lost.json
expect_json lost.json '.outcome == "failed" and .complete == false and
  .failure.kind == "transfer-failed" and .failure.cause == "no route" and
  (.failure.at_s - 1.001 | fabs) < 1e-3 and (.steps | length) == 0'
expect_json lost.json '[.events[] | select(.kind == "job-stopped" and (.detail | test("^transfer gpu[0-9]+->gpu[0-9]+ failed \\(no route\\)")))] | length == 1'
expect_json lost/summary.json '.outcome == "failed"'
[ "$(sqlite3 lost/results.sqlite 'SELECT complete FROM runs')" = 0 ] && pass || fail "database row of a failed job says complete"
expect_err "the simulated job failed: transfer-failed"
expect_exit 4 "$FABSIM" run "${SMALL[@]}" --set output.dir=lost2 --set workload.steps=3 \
  --set 'faults=[{at: 1ms, kind: switch-down, target: leaf0}]'
expect_out "failure      transfer-failed gpu"
expect_out "  cause      transfer gpu"
# a collective that lost 480 transfers failed too: no time, no bandwidth, the count and the cause
# (the ring, protocol simple: the bytes on the wire are the data; each transfer of the plan,
# NVLink hand-overs of the rail-aligned rings included, carries one chunk S / (ranks x channels);
# auto would run NVLSTree here, one phase)
expect_exit 4 "$FABSIM" run --set cluster.nodes=2 --set simulation.fidelity=flow \
  --set workload.collective.size=64MiB --set 'faults=[{at: 10us, kind: switch-down, target: leaf0}]' \
  --set workload.collective.algorithm=ring \
  --set workload.collective.protocol=simple --set output.dir=lostc --json
expect_json "$WORK/out" '.outcome == "failed" and .complete == false and .failure.transfers_failed == 480 and
  .network.transfers_failed == 480 and .failure.cause == "no route" and
  .collectives[0].busbw_GBps == null and .collectives[0].time_s == null and
  .collectives[0].delivered_bytes < .collectives[0].transfers * (64 * 1048576 / (16 * .collectives[0].channels))'
expect_json "$WORK/out" '[.events[] | select(.kind == "job-failed")] | length == 1'
expect_exit 4 "$FABSIM" run --set cluster.nodes=2 --set simulation.fidelity=flow \
  --set workload.collective.size=64MiB --set 'faults=[{at: 10us, kind: switch-down, target: leaf0}]' \
  --set workload.collective.algorithm=ring --set output.dir=lostc2
expect_out "FAILED: no time or bandwidth"
expect_out "failure      480 transfers failed"

# --- a lossy link the flow fidelity cannot get a packet through (ber 0.01 on a 4 KiB MTU:
#     (1 - 0.01)^33k = 1e-144 of the link): the transfers on it give up after the transport's
#     retry window (8.6 s without progress, as the packet fidelity), never a stall "bug"
expect_exit 4 "$FABSIM" run "${SMALL[@]}" --set output.dir=ber --set workload.steps=2 \
  --set 'faults=[{at: 0s, kind: link-degraded, target: nic0-leaf0, factor: 1, ber: 0.01}]' --json
expect_json "$WORK/out" '.outcome == "failed" and .failure.kind == "transfer-failed" and
  .failure.cause == "retry limit" and .failure.at_s > 8.589934592 and .failure.at_s < 8.6'
# a mild error rate only slows it (goodput 0.9967 at 1e-7): done
expect_exit 0 "$FABSIM" run "${SMALL[@]}" --set output.dir=ber2 --set workload.steps=2 \
  --set 'faults=[{at: 0s, kind: link-degraded, target: nic0-leaf0, factor: 1, ber: 1e-7}]' --json
expect_json "$WORK/out" '.outcome == "done" and (.steps | length) == 2'

# --- silent data corruption in step 1, replica checksums every 2 steps: detected at the end of step 2
expect_exit 0 "$FABSIM" run "${SMALL[@]}" --set output.dir=sdc --set workload.steps=3 \
  --set 'faults=[{at: 1ms, kind: sdc, target: gpu9}]' --set reliability.sdc_check_interval=2 --json
cp "$WORK/out" sdc.json
expect_json sdc.json '.sdc[0].diverge_step == 1 and .sdc[0].detect_step == 2 and .sdc[0].detect_estimated == false'
expect_json sdc.json '(.sdc[0].detect_at_s - (.steps[1].start_s + .steps[1].time_s) | fabs) < 1e-12'
expect_json sdc.json '.sdc[0].diverge_at_s > .sdc[0].at_s and .sdc[0].diverge_at_s < .steps[0].time_s'
expect_json sdc.json '[.events[].kind] | contains(["sdc", "sdc-diverge", "sdc-detected"])'
expect_exit 0 "$FABSIM" run "${SMALL[@]}" --set output.dir=sdc0 --set workload.steps=3 \
  --set 'faults=[{at: 1ms, kind: sdc, target: gpu9}]' --json
expect_json "$WORK/out" '.sdc[0].diverge_step == 1 and .sdc[0].detect_step == null'

# --- packet fidelity, an oversubscribed RoCE fabric with low ECN/PFC thresholds: the
#     PFC pauses and ECN marks of each step are events; per step they add up to the run's
expect_exit 0 "$FABSIM" run "${SMALL[@]}" --set output.dir=pfc --set workload.steps=2 \
  --set simulation.fidelity=packet --set fabric.transport=roce --set fabric.switch_radix=8 \
  --set fabric.oversubscription=3 --set fabric.ecn.kmin=10KiB --set fabric.ecn.kmax=100KiB \
  --set fabric.pfc.xoff=64KiB --json
cp "$WORK/out" pfc.json
expect_json pfc.json '.network.pfc_pauses > 0 and .network.ecn_marks > 0'
expect_json pfc.json '[.events[] | select(.kind == "pfc-pauses")] | length == 2'
expect_json pfc.json '([.events[] | select(.kind == "pfc-pauses") | .detail | capture(": (?<n>[0-9]+) PFC").n | tonumber] | add) == .network.pfc_pauses'
expect_json pfc.json '([.events[] | select(.kind == "ecn-marks") | .detail | capture(": (?<n>[0-9]+) packets").n | tonumber] | add) == .network.ecn_marks'

# --- examples/failure-throttle.yaml: the throttled GPU in every step; the leaf-spine link
#     that carries the cross-leaf reduction fails during step 2's reduction and its flows
#     stall until routing reconverges (1 s on InfiniBand): step 2 names both
expect_exit 0 "$FABSIM" run "$SRC/examples/failure-throttle.yaml" --set output.dir=example --json
cp "$WORK/out" example.json
expect_json example.json '[.root_cause[].step] == [1, 2, 3] and ([.root_cause[].causes[0].component] | unique) == ["gpu12"]'
# compute C at 0.8 takes C / 0.8, and the step's compute_s adds what communication kernels'
# SMs took from it (comm_sm_lost_s): the GPU's share is C (1/0.8 - 1) = (compute_s -
# comm_sm_lost_s) (1 - 0.8)
expect_json example.json '.steps[0].comm_sm_lost_s > 0'
expect_json example.json '(.root_cause[0].causes[0].effect_s - (.steps[0].compute_s - .steps[0].comm_sm_lost_s) * 0.2 | fabs) < 1e-6 * .root_cause[0].excess_s'
expect_json example.json '.root_cause[1].causes[1].component == "leaf0-spine0" and .root_cause[1].causes[1].kind == "link-down"'
expect_json example.json '.root_cause[1].causes[1].effect_s > 0.5 and .root_cause[1].causes[1].effect_s < 1.0'
expect_json example.json '(.root_cause[0].causes | length) == 1 and (.root_cause[2].causes | length) == 1'
expect_json example.json '[.events[].kind] | contains(["gpu-slowdown", "link-down", "reroute", "straggler"])'

# --- same scenario, same faults, same seed: the same bytes (wall clock aside)
for i in 1 2; do
  expect_exit 4 "$FABSIM" run "${SMALL[@]}" --set output.dir=same --set workload.steps=3 \
    --set 'faults=[{at: 0s, kind: gpu-slowdown, target: gpu5, factor: 0.5}, {at: 1ms, kind: sdc, target: gpu9}, {at: 5ms, kind: gpu-fail, target: gpu2}]' --json
  jq -S 'del(.sim.wall_s)' "$WORK/out" > "same$i.json"
  cp same/events.csv "same$i.csv"
done
cmp -s same1.json same2.json && pass || fail "two runs of the same faults differ (summary)"
cmp -s same1.csv same2.csv && pass || fail "two runs of the same faults differ (events.csv)"

# --- Ctrl-C stops a long training run cleanly: exit 130, the steps done so far, complete false
#     (stopped by itself after its first slice of simulated time, SIGINT
#     sent while stopped: no guessed delay)
FABSIM_TEST_PAUSE=simulate "$FABSIM" run "${SMALL[@]}" --set output.dir=int \
  --set workload.steps=1000000 >"$WORK/out" 2>"$WORK/err" &
pid=$!
wait_stopped $pid && pass || fail "the training run did not reach its first slice"
kill -INT $pid
kill -CONT $pid
wait $pid
code=$?
[ $code = 130 ] && pass || fail "Ctrl-C on a training run: exit $code (want 130)"
expect_err "marked \"complete\": false"
# stopped in its first slice: the steps finished by then (none or a few), never all
expect_json int/summary.json '.complete == false and .sim.sim_time_s > 0 and (.steps | length) < 1000000'
expect_json int/summary.json '(.steps | length) == ([.steps[] | select(.time_s > 0)] | length)'

# --- a run that would pass the horizon of simulated time (2^62 ps) is refused before it runs,
#     at the key that takes it there (#13): never a wrapped time, never a loop
expect_exit 2 "$FABSIM" run "${SMALL[@]}" --set output.dir=far --set workload.steps=3 \
  --set 'faults=[{at: 1ms, kind: gpu-slowdown, target: gpu0, factor: 1e-12}]'
expect_err "faults[0].factor: 1e-12 stretches the"
expect_err "past the horizon of simulated time, 4.612e+06 s (2^62 ps, 53.4 days); allowed: at least"
[ -e far ] && fail "a refused run wrote files" || pass
expect_exit 2 "$FABSIM" run --set workload.kind=traffic --set cluster.nodes=2 \
  --set workload.traffic.start=staggered --set workload.traffic.stagger=5d --set output.dir=far
expect_err "workload.traffic.stagger: 16 phases started 432000 s apart"
expect_err "allowed: at most"

# --- bad input
expect_exit 2 "$FABSIM" run "${SMALL[@]}" --set output.dir=bad \
  --set 'faults=[{at: 1ms, kind: gpu-fail, target: gpu99}]'
expect_err "gpu99"
expect_exit 2 "$FABSIM" run "${SMALL[@]}" --set output.dir=bad --set power.rack.cooling_failure=7:20
expect_err "power.rack.cooling_failure"
expect_err "rack of 0..0"
expect_exit 2 "$FABSIM" run "${SMALL[@]}" --set output.dir=bad --set workload.steps=0
expect_err "workload.steps"

# --- a collective timed once sees neither checkpoint writes nor network faults: one warning
#     names both (stderr printed only the last of two before)
expect_exit 0 "$FABSIM" run "${SMALL[@]}" --set output.dir=reuse --set workload.steps=2 \
  --set workload.comm_model=reuse --set workload.checkpoint.every=1 --set storage.servers=1 \
  --set 'faults=[{at: 1ms, kind: link-down, target: leaf0-spine0}]' --quiet
expect_err "so the checkpoint writes do not slow the steps' collectives and the network faults do not change the steps' times"
if [ "$(grep -c 'fabsim: warning: workload.comm_model' "$WORK/err")" = 1 ]; then pass; else fail "want one comm_model warning"; fi

# --- a collective run carries power too (power.utilization over its time)
expect_exit 0 "$FABSIM" run --set cluster.nodes=2 --set output.dir=coll --json
expect_json "$WORK/out" '.power.utilization_source == "power.utilization" and .power.it_kw > 0 and .events == []'

finish
