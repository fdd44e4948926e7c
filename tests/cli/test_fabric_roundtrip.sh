#!/usr/bin/env bash
# fabric.topology: file (docs/fabric-import.md): a generated fabric written
# with fabsim topo --export and read back gives byte-identical fabsim topo
# output (inventory, cost, bisection) and byte-identical fabsim run files at
# the analytic and flow fidelities, for every family fabsim generates (and
# at the packet fidelity for a 3-tier one).
. "$(dirname "$0")/lib.sh"

# normalize DIR: its files less the run's wall clock (as tools/golden.sh):
# summary.json and report.html less sim.wall_s, results.sqlite as its rows
# less started_at and wall_s; every other file byte for byte
normalize() {
  local d=$1
  jq -S 'del(.sim.wall_s)' "$d/summary.json" > "$d/summary.norm" && rm "$d/summary.json"
  sed -E 's/"wall_s": ?[0-9.e+-]+,?//g' "$d/report.html" > "$d/report.norm" && rm "$d/report.html"
  if command -v sqlite3 >/dev/null; then
    sqlite3 "$d/results.sqlite" "SELECT scenario, overrides, scenario_yaml,
        json_remove(summary_json, '\$.sim.wall_s') FROM runs;
      SELECT name, value FROM metrics WHERE name != 'sim.wall_s' ORDER BY name;" > "$d/sqlite.norm"
  fi
  rm -f "$d/results.sqlite"
}

# roundtrip NAME SETS...: export the generated fabric, import it, compare
roundtrip() {
  local name=$1; shift
  local sets=() s
  for s in "$@"; do sets+=(--set "$s"); done
  expect_exit 0 "$FABSIM" topo "${sets[@]}" --export "$name.json"
  printf 'fabric:\n  topology: file\n  file: %s.json\n' "$name" > "$name.yaml"
  # the file gives the fabric's keys: only what it does not describe is set
  local rest=() kept
  for s in "$@"; do
    case $s in
      workload.*|simulation.*|fabric.routing=*|fabric.transport=*) rest+=(--set "$s") ;;
    esac
  done
  "$FABSIM" topo "${sets[@]}" --json > "$name.gen.topo" 2>&1
  "$FABSIM" topo "$name.yaml" "${rest[@]}" --json > "$name.imp.topo" 2>&1
  cmp -s "$name.gen.topo" "$name.imp.topo" && pass ||
    fail "$name: fabsim topo differs: $(diff "$name.gen.topo" "$name.imp.topo" | head -5)"
  "$FABSIM" topo "${sets[@]}" > "$name.gen.txt" 2>&1
  "$FABSIM" topo "$name.yaml" "${rest[@]}" > "$name.imp.txt" 2>&1
  cmp -s "$name.gen.txt" "$name.imp.txt" && pass || fail "$name: fabsim topo text differs"
  # both runs from a scenario file of the same name (the report's title names
  # it) with the same overrides (summary.json lists them): the generated one
  # names its family in the file, the imported one names the fabric file, and
  # a key set on both sides must agree with the file
  local family=fat-tree runsets=()
  for s in "$@"; do
    case $s in
      fabric.topology=*) family=${s#*=} ;;
      *) runsets+=(--set "$s") ;;
    esac
  done
  mkdir -p gen imp
  printf 'simulation:\n  seed: 1\nfabric:\n  topology: %s\n' "$family" > "gen/$name.yaml"
  printf 'simulation:\n  seed: 1\nfabric:\n  topology: file\n  file: ../%s.json\n' "$name" \
    > "imp/$name.yaml"
  for fid in analytic flow ${PACKET:-}; do
    (cd gen && "$FABSIM" run "$name.yaml" "${runsets[@]}" --set simulation.fidelity=$fid \
      --set output.dir=$name-$fid --quiet 2>"../$name.gen.err")
    kept=$?
    (cd imp && "$FABSIM" run "$name.yaml" "${runsets[@]}" --set simulation.fidelity=$fid \
      --set output.dir=$name-$fid --quiet 2>"../$name.imp.err")
    local got=$?
    if [ $kept != 0 ] || [ $got != 0 ]; then
      fail "$name $fid: a run failed: $(head -c 300 "$name.gen.err" "$name.imp.err")"
      continue
    fi
    normalize gen/$name-$fid
    normalize imp/$name-$fid
    diff -r gen/$name-$fid imp/$name-$fid > "$name.$fid.diff" && pass ||
      fail "$name $fid: fabsim run files differ: $(head -5 "$name.$fid.diff")"
  done
}

small="workload.collective.size=64MiB"
PACKET=packet roundtrip ft3pk cluster.nodes=9 cluster.gpus_per_node=2 fabric.switch_radix=8 \
  fabric.tiers=3 workload.collective.size=1MiB
roundtrip ft2 cluster.nodes=6 cluster.gpus_per_node=4 fabric.switch_radix=16 $small
roundtrip ft2os cluster.nodes=5 cluster.gpus_per_node=4 fabric.switch_radix=16 \
  fabric.oversubscription=3 fabric.routing=ecmp $small
roundtrip ft3 cluster.nodes=9 cluster.gpus_per_node=4 fabric.switch_radix=8 fabric.tiers=3 $small
roundtrip ft3full cluster.nodes=16 fabric.switch_radix=4 fabric.tiers=3 cluster.gpus_per_node=2 \
  cluster.nic.per_node=1 $small
roundtrip rail cluster.nodes=6 cluster.gpus_per_node=4 fabric.topology=rail-optimized \
  fabric.switch_radix=8 fabric.transport=roce $small
roundtrip planes cluster.nodes=4 fabric.topology=multi-plane fabric.planes=4 \
  fabric.switch_radix=8 $small
roundtrip pcie cluster.nodes=3 cluster.gpus_per_node=4 cluster.nic.per_node=8 \
  fabric.switch_radix=16 $small
roundtrip shared cluster.nodes=3 cluster.gpus_per_node=8 cluster.nic.per_node=2 \
  fabric.switch_radix=8 fabric.link_bandwidth=800Gbps $small
roundtrip train cluster.nodes=4 cluster.gpus_per_node=4 fabric.switch_radix=8 \
  workload.kind=training workload.model.layers=4 workload.model.hidden=1024 \
  workload.model.heads=8 workload.global_batch=32 workload.steps=1

# the resolved scenario names the family, so it reruns without the file
grep -q '^  topology: fat-tree' imp/ft2-analytic/scenario.yaml && ! grep -q "ft2.json" imp/ft2-analytic/scenario.yaml && pass ||
  fail "resolved scenario keeps fabric.topology: file"

# a key the scenario sets must agree with the file
expect_exit 2 "$FABSIM" topo ft2.yaml --set cluster.nodes=5
expect_err "cluster.nodes: the scenario sets it, but fabric.file"
expect_exit 0 "$FABSIM" topo ft2.yaml --set cluster.nodes=6

finish
