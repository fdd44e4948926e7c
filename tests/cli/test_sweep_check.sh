#!/usr/bin/env bash
# fabsim sweep and fabsim compare check every point before any runs with
# every check `fabsim run` makes before it simulates (run_check): a value
# that loads and builds its topology but fails a later check (a fault target,
# output.ports, a training job's parallelism, a trace file, power, a job's
# placement) is refused with exit 2, located at its key and naming the --vary
# value or the scenario, and nothing runs: no --out folder, no point folder,
# no database. A good sweep over the same keys still runs.
. "$(dirname "$0")/lib.sh"

# refused SUBDIR: the last command made nothing under SUBDIR
refused() {
  if [ ! -e "$1" ]; then pass; else fail "$1 exists after a refused sweep: $(find "$1" | head)"; fi
}

FLOW=(--set cluster.nodes=2 --set simulation.fidelity=flow --set workload.collective.size=1MiB)
TINY=(--set cluster.nodes=1 --set workload.kind=training --set workload.steps=1
      --set workload.model.layers=2 --set workload.model.hidden=512 --set workload.model.heads=8
      --set workload.model.seq_len=256 --set workload.global_batch=8)
# a fault list in YAML block style: --vary splits its values at commas
BADFAULT=$(printf -- '- at: 1us\n  kind: link-down\n  target: nosuch')
GOODFAULT=$(printf -- '- at: 1us\n  kind: link-down\n  target: nic0-leaf0')

# --- sweep: the second value of a --vary is bad only for a check after the load
expect_exit 2 "$FABSIM" sweep "${FLOW[@]}" --vary "faults=[],$BADFAULT" --out s1
expect_err "--vary faults=- at: 1us"; expect_err "faults[0].target: no link 'nosuch'"; refused s1
expect_exit 2 "$FABSIM" sweep "${FLOW[@]}" --vary output.ports=nic0,nosuchport --out s2
expect_err "--vary output.ports=nosuchport: output.ports: 'nosuchport' is neither"; refused s2
expect_exit 2 "$FABSIM" sweep "${TINY[@]}" --vary workload.parallel.tp=2,3 --out s3
expect_err "--vary workload.parallel.tp=3: workload.parallel.tp: 3 does not divide"; refused s3
expect_exit 2 "$FABSIM" sweep "$SRC/examples/trace.yaml" \
  --vary "workload.trace.path=$SRC/examples/traces/et.%d.et,$WORK/missing/et.%d.et" --out s4
expect_err "--vary workload.trace.path=$WORK/missing/et.%d.et: workload.trace.path: rank 0: cannot open"
refused s4
expect_exit 2 "$FABSIM" sweep "${FLOW[@]}" --vary workload.collective.algorithm=ring,nvls --out s9
expect_err "--vary workload.collective.algorithm=nvls: workload.collective.algorithm: nvls reduces in one node"
refused s9
expect_exit 2 "$FABSIM" sweep "${FLOW[@]}" --vary power.utilization=0.5,2 --out s5
expect_err "--vary power.utilization=2: power.utilization: 2 is above 1"; refused s5
# a key set for every point that only the second point's value breaks: the
# error at the --set, naming the point
expect_exit 2 "$FABSIM" sweep "${FLOW[@]}" --set 'faults=[{at: 1us, kind: link-down, target: leaf1-spine0}]' \
  --vary cluster.nodes=16,2 --out s6
expect_err "faults[0].target: no element 'leaf1'"; expect_err "(the sweep's point cluster.nodes=2)"; refused s6
expect_exit 2 "$FABSIM" sweep --set simulation.fidelity=flow \
  --set 'jobs=[{name: big, gpus: 64, workload: {kind: collective}}]' \
  --vary cluster.nodes=8,4 --out s7
expect_err "jobs[0]"; expect_err "(the sweep's point cluster.nodes=4)"; refused s7
# --db: the database named is not created either
expect_exit 2 "$FABSIM" sweep "${FLOW[@]}" --vary output.ports=nic0,nosuchport --db s8.sqlite --out s8
refused s8; refused s8.sqlite

# --- the same keys with good values: the sweep runs every point
expect_exit 0 "$FABSIM" sweep "${FLOW[@]}" --vary "faults=[],$GOODFAULT" --vary output.ports=nic0,nic1 \
  --jobs 2 --out good --quiet
[ "$(sqlite3 good/results.sqlite 'SELECT count(*) FROM runs')" = 4 ] && pass || fail "4 good points"
for p in 1 2 3 4; do [ -s good/point-00$p/summary.json ] && pass || fail "point $p has no summary"; done

# --- compare: one bad scenario among good ones, refused at its file:line:col before any runs
cat > a.yaml <<'YAML'
cluster:
  nodes: 2
simulation:
  fidelity: flow
YAML
cp a.yaml c.yaml
{ cat a.yaml; printf 'faults:\n  - {at: 1us, kind: switch-down, target: spine99}\n'; } > b.yaml
expect_exit 2 "$FABSIM" compare a.yaml b.yaml c.yaml --out cmp1
expect_err "b.yaml:6:"; expect_err "faults[0].target"; refused cmp1
{ cat a.yaml; printf 'output:\n  ports: nosuchport\n'; } > d.yaml
expect_exit 2 "$FABSIM" compare a.yaml d.yaml --out cmp2
expect_err "d.yaml:6:"; expect_err "output.ports: 'nosuchport'"; refused cmp2
{ printf 'cluster:\n  nodes: 1\nworkload:\n  kind: training\n  steps: 1\n'
  printf '  model: {layers: 2, hidden: 512, heads: 8, seq_len: 256}\n  global_batch: 8\n'
  printf '  parallel: {tp: 3}\n'; } > e.yaml
expect_exit 2 "$FABSIM" compare a.yaml e.yaml --out cmp3
expect_err "e.yaml:8:"; expect_err "workload.parallel.tp: 3 does not divide"; refused cmp3
# the --set common to every scenario is checked in each
expect_exit 2 "$FABSIM" compare a.yaml c.yaml --set power.gpu_idle_w=2000 --out cmp4
expect_err "power.gpu_idle_w"; refused cmp4
expect_exit 0 "$FABSIM" compare a.yaml c.yaml --out cmp5 --quiet
[ "$(sqlite3 cmp5/results.sqlite 'SELECT count(*) FROM runs')" = 2 ] && pass || fail "good compare"
finish
