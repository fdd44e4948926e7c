#!/usr/bin/env bash
# Every output fabsim writes for the examples, normalized (wall clock out),
# into one directory, so two builds can be compared byte for byte:
#
#   tools/golden.sh ./build/fabsim /tmp/before     # on the old commit
#   tools/golden.sh ./build/fabsim /tmp/after      # on the new one
#   diff -r /tmp/before /tmp/after                 # nothing: no output changed
#
# A refactoring that must not change any figure (issue 15: the run layer)
# is checked this way. What is kept, per example and fidelity (the scenario's
# own, analytic and flow; faults at flow and packet): summary.json less
# sim.wall_s, timeseries.csv, events.csv, scenario.yaml, the data report.html
# embeds, the rows of results.sqlite less started_at/wall_s (each run's
# run_id with its point and output_dir: a sweep numbers its runs in point
# order; not for compare, whose parallel runs are numbered as they finish);
# the terminal summary less its wall-clock line; the other verbs' JSON and
# text (topo, memory, reliability, sweep, compare, calibrate).
set -u
FABSIM=$(realpath "$1")
OUT=$(realpath -m "$2")
SRC=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$OUT"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK" || exit 1

# normalize DIR NAME: DIR's files into $OUT/NAME.*
normalize() {
  local d=$1 n=$2 f
  [ -f "$d/summary.json" ] && jq -S 'del(.sim.wall_s)' "$d/summary.json" > "$OUT/$n.summary.json"
  for f in timeseries.csv events.csv scenario.yaml; do
    [ -f "$d/$f" ] && cp "$d/$f" "$OUT/$n.$f"
  done
  if [ -f "$d/report.html" ]; then # the page less the run's wall clock
    sed -E -e 's/"wall_s": ?[0-9.e+-]+,?//g' -e "s|$WORK|WORK|g" \
      -e 's/(sweep|compare)-[0-9]{8}T[0-9]{6}Z-[0-9]+/\1-ID/g' "$d/report.html" | md5sum > "$OUT/$n.report.md5"
  fi
  if [ -f "$d/results.sqlite" ]; then
    # rows in the order of their point, every table's joined to its run's
    # point and folder; then which run id each run has (the run ids of a
    # sweep or comparison follow its points or files, whatever order they
    # finished in)
    sqlite3 "$d/results.sqlite" \
      "SELECT scenario, overrides, seed, fidelity, version, sim_time_s, complete, sweep, point,
              scenario_yaml, json_remove(summary_json, '\$.sim.wall_s') FROM runs
         ORDER BY point, output_dir;
       SELECT r.point, r.output_dir, m.name, m.value FROM metrics m JOIN runs r USING (run_id)
         WHERE m.name != 'sim.wall_s' ORDER BY r.point, r.output_dir, m.name;" > "$OUT/$n.sqlite.txt" 2>&1
    # tables by name (".tables" lays names out in columns: a new table reorders them)
    for t in $(sqlite3 "$d/results.sqlite" "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"); do
      case $t in runs|metrics) continue ;; esac
      cols=$(sqlite3 "$d/results.sqlite" \
        "SELECT group_concat('t.' || name) FROM pragma_table_info('$t') WHERE name != 'run_id'")
      sqlite3 "$d/results.sqlite" "SELECT r.point, r.output_dir, $cols FROM $t t JOIN runs r USING (run_id)
        ORDER BY 1, 2, 3, 4, 5;" >> "$OUT/$n.sqlite.txt"
    done
    sqlite3 "$d/results.sqlite" \
      "SELECT 'run_id', run_id, point, output_dir FROM runs ORDER BY run_id" >> "$OUT/$n.sqlite.txt"
  fi
}

# run NAME ARGS...: fabsim run, its terminal output, exit code and files
run() {
  local n=$1
  shift
  rm -rf "o-$n"
  "$FABSIM" run "$@" --set output.dir="o-$n" > "$WORK/t" 2> "$WORK/e"
  echo "exit $?" > "$OUT/$n.exit"
  grep -v -i 'wall' "$WORK/t" > "$OUT/$n.terminal"
  grep -v -i 'wall' "$WORK/e" > "$OUT/$n.stderr"
  normalize "o-$n" "$n"
}

for f in "$SRC"/examples/*.yaml "$SRC"/examples/tour/*.yaml; do
  name=$(basename "$f" .yaml)
  run "$name" "$f"
  if grep -q '^faults:' "$f"; then
    run "$name-packet" "$f" --set simulation.fidelity=packet --set cluster.nodes=4
  else
    for fid in analytic flow; do run "$name-$fid" "$f" --set simulation.fidelity=$fid; done
  fi
done
# the reproduced model paths the examples do not reach by themselves
run fail-spines "$SRC/examples/failure-throttle.yaml" \
  --set "faults=[{at: 1s, kind: switch-down, target: spine0}]"
run ckpt "$SRC/examples/reliability-llama3.yaml" --set simulation.fidelity=analytic
run power "$SRC/examples/failure-throttle.yaml" --set power.rack.cooling_failure=0:20
run sdc "$SRC/examples/failure-throttle.yaml" \
  --set "faults=[{at: 1s, kind: sdc, target: gpu3}]"

for f in "$SRC"/examples/*.yaml; do
  name=$(basename "$f" .yaml)
  "$FABSIM" topo "$f" --json > "$OUT/$name.topo.json" 2>&1
  "$FABSIM" memory "$f" --json > "$OUT/$name.memory.json" 2>&1
  "$FABSIM" reliability "$f" --json > "$OUT/$name.reliability.json" 2>&1
done
"$FABSIM" sweep "$SRC/examples/default.yaml" --vary cluster.nodes=2,4 \
  --vary workload.collective.size=1MiB,64MiB --jobs 2 --out sw --quiet > "$OUT/sweep.terminal" 2>&1
grep -v -i wall "$OUT/sweep.terminal" > "$WORK/t" && mv "$WORK/t" "$OUT/sweep.terminal"
[ -f sw/sweep.csv ] && grep -v -i wall sw/sweep.csv > "$OUT/sweep.csv"
normalize sw sweep
"$FABSIM" compare "$SRC/examples/default.yaml" "$SRC/examples/rail-roce.yaml" --out cmp --quiet \
  > "$OUT/compare.txt" 2>&1
grep -v -i wall "$OUT/compare.txt" > "$WORK/t" && mv "$WORK/t" "$OUT/compare.txt"
normalize cmp compare
"$FABSIM" calibrate "$SRC"/examples/nccl-tests/* --json > "$OUT/calibrate.json" 2>&1
# the temporary directory and the wall-clock ids of sweeps and comparisons
sed -i -E -e "s|$WORK|WORK|g" -e 's/(sweep|compare)-[0-9]{8}T[0-9]{6}Z-[0-9]+/\1-ID/g' "$OUT"/*
echo "golden: $(ls "$OUT" | wc -l) files in $OUT"
