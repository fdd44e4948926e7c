#!/usr/bin/env bash
# Input that used to be accepted and then gave a wrong or unbounded run
# (issue #13, defects 8 and 9): each is refused before any simulation with
# FILE:LINE:COL, the key, what is allowed and exit status 2, or (a fault after
# the workload's end, known only once it ran) reported in the terminal, the
# summary and events.csv.
. "$(dirname "$0")/lib.sh"
SMALL=(--set cluster.nodes=4 --set workload.kind=training --set workload.model.layers=4
       --set workload.model.hidden=1024 --set workload.model.heads=16
       --set workload.model.seq_len=2048 --set workload.model.vocab=0
       --set workload.global_batch=32 --set workload.bucket_size=1TiB
       --set workload.grad_overlap=false --set simulation.fidelity=flow)

# --- files: regular files only, bounded size and nesting (defect 8)
expect_exit 2 "$FABSIM" run /dev/zero --quiet
expect_err "/dev/zero: is a character device; a scenario is a regular file"
expect_exit 2 "$FABSIM" topo "$WORK"
expect_err ": is a folder; a scenario is a regular file"
mkfifo pipe.yaml
expect_exit 2 "$FABSIM" topo pipe.yaml
expect_err "pipe.yaml: is a pipe; a scenario is a regular file"
head -c 4194305 /dev/zero | tr '\0' '#' > big.yaml
expect_exit 2 "$FABSIM" topo big.yaml
expect_err "big.yaml: 4194305 bytes; a scenario is at most 4194304 bytes (4 MiB)"
# 100,000 levels (200 KB; libyaml alone took 46 s on 500 KB of them): at once
awk 'BEGIN { printf "cluster: "; for (i = 0; i < 100000; i++) printf "["; for (i = 0; i < 100000; i++) printf "]"; print "" }' > deep.yaml
expect_exit 2 "$FABSIM" topo deep.yaml
expect_err "deep.yaml:1:25: YAML nested 17 levels deep here; allowed at most 16"
for verb in run topo memory reliability; do # every verb reads scenarios the same way
  expect_exit 2 "$FABSIM" $verb deep.yaml
  expect_err "deep.yaml:1:25: YAML nested 17 levels deep here"
done
expect_exit 2 "$FABSIM" sweep deep.yaml --vary cluster.nodes=2,4
expect_err "deep.yaml:1:25: YAML nested 17 levels deep here"
expect_exit 2 "$FABSIM" compare deep.yaml deep.yaml
expect_err "deep.yaml:1:25: YAML nested 17 levels deep here"
# databases too, and output.database is checked before the run, not after
expect_exit 2 "$FABSIM" compare --db /dev/zero
expect_err "fabsim: --db /dev/zero: is a character device; allowed: a fabsim results database"
expect_exit 2 "$FABSIM" run --set cluster.nodes=2 --set output.database=/dev/null --set output.dir=o --quiet
expect_err "--set:2:17: output.database: /dev/null is a character device; allowed: a fabsim results database"

# --- values accepted before and then wrong (defect 9)
# an RTO at or below the base RTT: every packet resent before its ACK could arrive
PKT=(--set simulation.fidelity=packet)
expect_exit 2 "$FABSIM" run "${PKT[@]}" --set cluster.nic.rto=0s --set output.dir=o --quiet
expect_err "--set:2:17: cluster.nic.rto: 0ns does not exceed the fabric's base RTT of 3511.04ns"
expect_err "allowed: more than 3511.04ns"
printf 'cluster:\n  nic:\n    rto: 2us\n' > rto.yaml
expect_exit 2 "$FABSIM" run rto.yaml "${PKT[@]}" --set output.dir=o --quiet
expect_err "rto.yaml:3:10: cluster.nic.rto: 2us does not exceed"
expect_exit 0 "$FABSIM" topo "${PKT[@]}" --set cluster.nic.rto=4us
expect_exit 0 "$FABSIM" topo --set cluster.nic.rto=0s # unused by the analytic fidelity
# a switch buffer smaller than what the switch model sets aside per port
expect_exit 2 "$FABSIM" run "${PKT[@]}" --set fabric.switch.buffer=1B --set output.dir=o --quiet
expect_err "--set:2:22: fabric.switch.buffer: 1B is less than a switch needs before any queue can grow; allowed: at least 2755328B, 64 ports x 43052B"
expect_exit 2 "$FABSIM" topo "${PKT[@]}" --set fabric.transport=roce --set fabric.switch.buffer=5MB
expect_err "allowed: at least 6473984B, 64 ports x 101156B: per port a 4 KB reserve for each of 8 traffic classes and PFC headroom"
expect_exit 0 "$FABSIM" topo "${PKT[@]}" --set fabric.transport=roce --set fabric.switch.buffer=7MB
# a reliability plan of 100,000 days ran with no progress and no bound
expect_exit 2 "$FABSIM" reliability --set reliability.days=1e5
expect_err "--set:1:18: reliability.days: 100000 days is not one training run; allowed: more than 0 and at most 3650"
expect_exit 0 "$FABSIM" reliability --set reliability.days=3650 --set cluster.nodes=16
# one key in two --vary: both columns were labelled with the first value
expect_exit 2 "$FABSIM" sweep --vary cluster.nodes=2,4 --vary cluster.nodes=8 --out sw
expect_err "--vary 'cluster.nodes=8': cluster.nodes is varied twice; allowed: each key in one --vary with all its values, such as --vary cluster.nodes=2,4,8"
[ ! -e sw ] && pass || fail "a refused sweep left a folder"
# refused input leaves no folder behind, also when refused after the run took output.dir
expect_exit 2 "$FABSIM" run --set workload.kind=training --set cluster.nodes=3 --set workload.model.layers=2 \
  --set workload.model.experts=24 --set workload.parallel.ep=12 --set output.dir=refused
[ ! -e refused ] && pass || fail "a refused run left its output.dir: $(ls -A refused)"

# --- a collective over 1 GPU is refused as ranks=1 is (issue 27, defect 17: it reported 0 s)
expect_exit 2 "$FABSIM" run --set cluster.nodes=1 --set cluster.gpus_per_node=1 --set output.dir=one
expect_err "--set:2:23: cluster.gpus_per_node: 1 GPU runs no collective (its time would be 0 s)"
[ ! -e one ] && pass || fail "a refused 1-GPU run left its output.dir"
expect_exit 2 "$FABSIM" run --set cluster.nodes=2 --set cluster.gpus_per_node=1 \
  --set 'jobs=[{name: a, gpus: 1, workload: {kind: collective}}]' --set output.dir=one
expect_err "jobs[0].gpus: 1 GPU runs no collective"
expect_exit 0 "$FABSIM" topo --set cluster.nodes=1 --set cluster.gpus_per_node=1 # no collective runs

# --- a fault after the workload's end: reported in the terminal, summary and events.csv
expect_exit 0 "$FABSIM" run "${SMALL[@]}" --set output.dir=late \
  --set 'faults=[{at: 1ms, kind: gpu-slowdown, target: gpu5, factor: 0.5}, {at: 1000s, kind: gpu-fail, target: gpu2}]'
expect_err "--set:13:72: warning: faults[1].at"
expect_err "warning: faults[1].at: faults[1] (gpu-fail of gpu2 at 1,000 s) came after the workload ended"
expect_err "allowed: faults[1].at before"
expect_json late/summary.json '[.events[] | select(.kind == "fault-after-end") | .component] == ["gpu2"]'
expect_json late/summary.json '[.events[] | select(.kind == "gpu-fail")] == []'
grep -q ',gpu2,fault-after-end,"faults\[1\] (gpu-fail of gpu2 at 1,000 s) came after' late/events.csv \
  && pass || fail "events.csv lacks the late fault: $(cat late/events.csv)"
expect_out "fault-after-end"
# a collective run applies it to an idle fabric: also said
expect_exit 0 "$FABSIM" run --set cluster.nodes=8 --set simulation.fidelity=flow --set output.dir=late2 \
  --set 'faults=[{at: 10s, kind: link-down, target: leaf0-spine0}]' --quiet
expect_err "warning: faults[0].at: faults[0] (link-down of leaf0-spine0 at 10 s) came after the workload ended"
expect_json late2/summary.json '[.events[] | select(.kind == "fault-after-end")] | length == 1'
# a fault within the run: no warning
expect_exit 0 "$FABSIM" run "${SMALL[@]}" --set output.dir=early --quiet \
  --set 'faults=[{at: 1ms, kind: gpu-slowdown, target: gpu5, factor: 0.5}]'
[ ! -s "$WORK/err" ] && pass || fail "a warning for a fault within the run: $(cat "$WORK/err")"
# the fault that stopped the job (exit 4) is its cause, not a fault after its end (issue 27,
# defect 15: it was warned as "came after the workload ended: no effect")
expect_exit 4 "$FABSIM" run "${SMALL[@]}" --set output.dir=stopped --quiet \
  --set 'faults=[{at: 1ms, kind: gpu-fail, target: gpu5}]'
expect_err "the simulated job failed: gpu-fail gpu5 at 1 ms"
grep -q "came after" "$WORK/err" && fail "the fault that stopped the job warned as after its end: $(cat "$WORK/err")" || pass
expect_json stopped/summary.json '[.events[] | select(.kind == "fault-after-end")] == [] and .outcome == "failed"'

# go-back-n under per-packet routing (defect 9): modelled as such NICs behave (a retransmission
# storm with no loss), and said before the run, at the key, and in the events
cat > gbn.yaml <<'YAML'
cluster: {nodes: 2, nic: {recovery: go-back-n}}
fabric: {transport: roce, routing: spray}
simulation: {fidelity: packet}
workload: {collective: {size: 1MiB}}
YAML
expect_exit 0 "$FABSIM" run gbn.yaml --set output.dir=gbn --quiet
expect_err "gbn.yaml:1:37: warning: cluster.nic.recovery: cluster.nic.recovery is go-back-n and fabric.routing is spray"
expect_json gbn/summary.json '[.events[] | select(.kind == "warning")] | length == 1'
expect_exit 0 "$FABSIM" run gbn.yaml --set output.dir=gbn2 --set cluster.nic.recovery=selective --quiet
[ ! -s "$WORK/err" ] && pass || fail "a warning for selective recovery: $(cat "$WORK/err")"

# a port watched twice would be two columns and two series rows of one name: refused at the key
expect_exit 2 "$FABSIM" run --set cluster.nodes=8 --set output.ports=leaf0-spine0,nic3,leaf0-spine0 \
  --set output.dir=twice --quiet
expect_err "output.ports: 'leaf0-spine0,nic3,leaf0-spine0' names leaf0-spine0 twice"
[ ! -e twice ] && pass || fail "a refused run left its output folder"

# --- keys a run once read only at its end (issue #15): refused at load, by
# every verb, before anything is simulated and before output.dir exists.
# A bad checkpoint interval in a run with a failure once exited 0 with zero
# lost work; a bad cooling failure was refused after the whole simulation.
cat > late.yaml <<'YAML'
reliability:
  checkpoint:
    interval: soon
YAML
for verb in run topo memory reliability; do
  expect_exit 2 "$FABSIM" $verb late.yaml "${SMALL[@]}" --set output.dir=endkeys
  expect_err "late.yaml:3:15: reliability.checkpoint.interval: 'soon' is not a checkpoint interval; allowed: auto"
done
expect_exit 2 "$FABSIM" sweep late.yaml "${SMALL[@]}" --vary cluster.nodes=2,4 --out endkeys-sweep --quiet
expect_err "late.yaml:3:15: reliability.checkpoint.interval"
expect_exit 2 "$FABSIM" run "${SMALL[@]}" --set "faults=[{at: 1ms, kind: gpu-fail, target: gpu1}]" \
  --set reliability.checkpoint.interval=0s --set output.dir=endkeys --quiet
expect_err "reliability.checkpoint.interval: '0s' is not a checkpoint interval"
for v in 2s 1:20 0:0 0:-5 :20 0:20x; do # 4 nodes, 4 per rack: rack 0 only
  expect_exit 2 "$FABSIM" run "${SMALL[@]}" --set power.rack.cooling_failure=$v --set output.dir=endkeys --quiet
  expect_err "--set:12:28: power.rack.cooling_failure: '$v' is not RACK:KW with a rack of 0..0"
done
expect_exit 2 "$FABSIM" topo --set power.rack.cooling_failure=99:20
expect_err "power.rack.cooling_failure: '99:20'"
expect_exit 2 "$FABSIM" sweep "${SMALL[@]}" --vary power.rack.cooling_failure=0:20,1:20 --out endkeys-sweep --quiet
expect_err "power.rack.cooling_failure: '1:20' is not RACK:KW"
[ ! -e endkeys ] && [ ! -e endkeys-sweep ] && pass || fail "a refused run left its output folder: $(ls -d endkeys*)"
finish
