#!/usr/bin/env bash
# Ctrl-C in every phase of a run (issue 27, defect 4): the setup, the timing of a job's
# collectives before the run, the simulation, each job's run alone after it, the telemetry
# replay, the writing of the files. Each honours the first Ctrl-C: the files are finished
# (every one summary.json lists exists, the database has the run), marked "complete": false
# ("outcome": "stopped") unless the simulation and everything computed from it had ended
# before (a Ctrl-C while the files are written: they cover the whole run), and the exit
# status is 130. On f65f882 the handler was installed around the event loop only: a Ctrl-C
# in the other phases killed the run at once (events.csv and timeseries.csv without
# summary.json). Each run stops itself at the phase (FABSIM_TEST_PAUSE, fabsim/core.h), is
# sent SIGINT there and continued: a condition, not a delay.
. "$(dirname "$0")/lib.sh"

# stop_at POINT DIR ARGS...: run, Ctrl-C at POINT; checks the exit status and the files
stop_at() {
  local point=$1 dir=$2
  interrupt_at "$@"
  [ -n "$stop_rc" ] || return
  [ "$stop_rc" = 130 ] && pass || fail "$dir: exit $stop_rc after SIGINT at $point (want 130): $(cat "$dir.err")"
  if [ ! -s "$dir/summary.json" ]; then
    fail "$dir: no summary.json after SIGINT at $point: $(ls "$dir" 2>&1 | tr '\n' ' ')"
    return
  fi
  pass
  local f missing=""
  for f in $(jq -r '.files[]' "$dir/summary.json"); do [ -s "$dir/$f" ] || missing="$missing $f"; done
  [ -z "$missing" ] && pass || fail "$dir: files summary.json lists are missing:$missing"
  [ "$(sqlite3 "$dir/results.sqlite" 'SELECT count(*) FROM runs')" = 1 ] && pass \
    || fail "$dir: the database lacks the run"
}
# stopped DIR: the files say the run stopped
stopped() {
  expect_json "$1/summary.json" '.complete == false and .outcome == "stopped"'
  [ "$(sqlite3 "$1/results.sqlite" 'SELECT complete FROM runs')" = 0 ] && pass \
    || fail "$1: the database says the run completed"
  grep -q ',job,stopped,' "$1/events.csv" && pass || fail "$1: events.csv has no stopped event"
}

SMALL=(--set cluster.nodes=2)
TRAIN=(--set cluster.nodes=4 --set workload.kind=training --set workload.model.layers=4
       --set workload.model.hidden=1024 --set workload.model.heads=16
       --set workload.model.seq_len=2048 --set workload.model.vocab=0
       --set workload.global_batch=32 --set workload.bucket_size=1TiB
       --set workload.grad_overlap=false --set simulation.fidelity=flow)
# two training jobs on their own leaves that time their collectives before the run (reuse),
# and each runs alone after it
cat >jobs.yaml <<'EOF'
cluster: {nodes: 8, gpus_per_node: 8}
fabric: {topology: fat-tree, tiers: 2, switch_radix: 32}
jobs:
  - name: a
    gpus: 32
    placement: topology-aware
    workload: &w {kind: training, comm_model: reuse, model: {layers: 4, hidden: 1024, heads: 16,
                  seq_len: 2048, vocab: 0}, global_batch: 32, bucket_size: 1TiB,
                  grad_overlap: false}
  - name: b
    gpus: 32
    placement: topology-aware
    workload: *w
simulation: {fidelity: flow}
EOF

# the setup: output.dir taken, the topology not built; nothing simulated
stop_at setup setup "${SMALL[@]}"
stopped setup
expect_json setup/summary.json '.sim.sim_time_s == 0 and .collectives[0].time_s == null'
grep -q "stopped at 0 s of simulated time" setup.err && pass || fail "setup: $(cat setup.err)"

# timing a training job's collectives (reuse) in its first slice: the job never ran
stop_at timing timing "${TRAIN[@]}" --set workload.comm_model=reuse
stopped timing
expect_json timing/summary.json '.steps == []'

# timing the jobs' collectives before the run: no job started, no slowdown
stop_at timing jobs-timing jobs.yaml
stopped jobs-timing
expect_json jobs-timing/summary.json '[.jobs[].slowdown] == [null, null]'
expect_json jobs-timing/summary.json \
  '[.events[] | select(.kind == "stopped") | .detail] == ["stopped (Ctrl-C) while the jobs'"'"' collectives were timed before the run: no job ran"]'

# each job alone after the run: the run's figures stand, the slowdowns are not known
stop_at alone jobs-alone jobs.yaml
stopped jobs-alone
expect_json jobs-alone/summary.json '[.jobs[].slowdown] == [null, null] and ([.jobs[].time_s] | all(. > 0))'
grep -q "stopped (Ctrl-C) after the simulation, while each job ran alone" jobs-alone.err && pass \
  || fail "jobs-alone: $(cat jobs-alone.err)"
[ "$(grep -c ',job,stopped,' jobs-alone/events.csv)" = 1 ] && pass \
  || fail "jobs-alone: one stopped event, not $(grep ',job,stopped,' jobs-alone/events.csv)"

# the telemetry replay: the simulation had ended, its figures are whole, marked stopped
stop_at telemetry telemetry "${SMALL[@]}"
stopped telemetry
expect_json telemetry/summary.json '.collectives[0].time_s > 0'
grep -q "stopped (Ctrl-C) after the simulation had ended" telemetry/events.csv && pass \
  || fail "telemetry: events.csv lacks the stop"

# writing the files (timeseries.csv written, the others not): all are written, they cover
# the whole run, and the run exits 130
stop_at write write "${SMALL[@]}"
expect_json write/summary.json '.complete == true and .outcome == "done" and .collectives[0].time_s > 0'
grep -q "stopped (Ctrl-C) while the files were written" write.err && pass || fail "write: $(cat write.err)"

# without a Ctrl-C, the same runs complete (the hooks alone change nothing)
expect_exit 0 "$FABSIM" run jobs.yaml --set output.dir=whole --quiet
expect_json whole/summary.json '.complete == true and ([.jobs[].slowdown] | all(. > 0))'

finish
