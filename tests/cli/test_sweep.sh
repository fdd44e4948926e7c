#!/usr/bin/env bash
# fabsim sweep and fabsim compare: the cross product in parallel processes,
# one database, the table, sweep.csv, the comparison report (in Chromium).
. "$(dirname "$0")/lib.sh"

expect_exit 0 "$FABSIM" sweep --help; expect_out "usage: fabsim sweep"; expect_out "--vary KEY=V1,V2"
expect_exit 0 "$FABSIM" compare --help; expect_out "usage: fabsim compare"
expect_exit 2 "$FABSIM" sweep; expect_err "at least one --vary"
expect_exit 2 "$FABSIM" sweep --vary cluster.nodes; expect_err "write KEY=V1,V2"
expect_exit 2 "$FABSIM" sweep --vary cluster.nodes=2,,4; expect_err "an empty value"
expect_exit 2 "$FABSIM" sweep --vary fabric.routing=ecmp,bogus --out bad
expect_err "--vary fabric.routing=bogus: fabric.routing: 'bogus' is not one of"
[ ! -e bad ] && pass || fail "a sweep with a bad value ran"
expect_exit 2 "$FABSIM" sweep --vary cluster.nodes=2,99999 --out bad; expect_err "--vary cluster.nodes=99999: cluster.nodes:"
expect_exit 2 "$FABSIM" sweep --vary cluster.nodes=2 --jobs 0; expect_err "--jobs '0'"
expect_exit 2 "$FABSIM" compare only.yaml; expect_err "two or more scenarios"

# --- a 2 x 3 sweep, two at a time, on the flow fidelity
expect_exit 0 "$FABSIM" sweep --set cluster.nodes=8 --set simulation.fidelity=flow \
  --set workload.kind=traffic --set workload.traffic.pattern=permutation \
  --vary fabric.ecmp.hash_seed=0,1 --vary workload.traffic.size=64KB,1MB,4MB --jobs 2 --out sw
[ "$(grep -c '^[0-9]' "$WORK/out")" = 6 ] && pass || fail "sweep table rows: $(cat "$WORK/out")"
head -1 "$WORK/out" | grep -q '^#  fabric.ecmp.hash_seed  workload.traffic.size  traffic time' && pass \
  || fail "sweep table header: $(head -1 "$WORK/out")"
sed -n 2p "$WORK/out" | grep -q '^1  0 *64KB ' && pass || fail "point order (last --vary fastest)"
expect_err "[6/6]"
for p in 1 2 3 4 5 6; do [ -s sw/point-00$p/summary.json ] && pass || fail "point $p has no summary"; done
expect_json sw/point-006/summary.json '.traffic.bytes_per_flow == 4000000 and .scenario.seed == 1'
DB=sw/results.sqlite
[ "$(sqlite3 $DB 'SELECT count(*), count(DISTINCT sweep) FROM runs')" = "6|1" ] && pass || fail "6 runs of one sweep"
[ "$(sqlite3 $DB "SELECT point FROM runs WHERE output_dir LIKE '%point-004'")" = \
  "fabric.ecmp.hash_seed=1 workload.traffic.size=64KB" ] && pass || fail "runs.point"
# the table is the database's figures: bigger flows take longer
sqlite3 $DB "SELECT r.point, m.value FROM runs r JOIN metrics m USING (run_id) WHERE m.name = 'traffic.time_s' ORDER BY m.value" > times
[ "$(head -2 times | grep -c '64KB')" = 2 ] && [ "$(tail -2 times | grep -c '4MB')" = 2 ] && pass || fail "times: $(cat times)"
[ "$(wc -l < sw/sweep.csv)" = 7 ] && pass || fail "sweep.csv rows"
head -1 sw/sweep.csv | grep -q '^point,complete,fabric.ecmp.hash_seed,workload.traffic.size (B),time_s (s)' && pass \
  || fail "sweep.csv header: $(head -1 sw/sweep.csv)"
# numbers as numbers: every field of every row reads back whole as a number (the sizes in bytes)
awk -F, 'NR > 1 { for (i = 1; i <= NF; i++) if ($i !~ /^-?[0-9]+(\.[0-9]+)?(e[-+][0-9]+)?$/) bad++ } END { exit bad > 0 }' \
  sw/sweep.csv && pass || fail "sweep.csv has a field that is not a number: $(cat sw/sweep.csv)"
[ "$(cut -d, -f4 sw/sweep.csv | tail -6 | tr '\n' ' ')" = "64000 1000000 4000000 64000 1000000 4000000 " ] && pass \
  || fail "sweep.csv sizes: $(cut -d, -f4 sw/sweep.csv)"
# the same sweep again: the same table, CSV and report, whatever order the points ended in
cp "$WORK/out" table1
expect_exit 0 "$FABSIM" sweep --set cluster.nodes=8 --set simulation.fidelity=flow \
  --set workload.kind=traffic --set workload.traffic.pattern=permutation \
  --vary fabric.ecmp.hash_seed=0,1 --vary workload.traffic.size=64KB,1MB,4MB --jobs 3 --out swb --quiet
cmp -s table1 "$WORK/out" && pass || fail "a second identical sweep printed another table"
cmp -s sw/sweep.csv swb/sweep.csv && pass || fail "sweep.csv differs between identical sweeps"
cmp -s sw/report.html <(sed 's|/swb/|/sw/|g' swb/report.html) \
  && pass || fail "report.html differs between identical sweeps"
# a second sweep adds to the same database
expect_exit 0 "$FABSIM" sweep --set cluster.nodes=2 --vary workload.collective.size=1MiB,2MiB --db "$DB" --out sw2 --quiet
[ "$(sqlite3 $DB 'SELECT count(*), count(DISTINCT sweep) FROM runs')" = "8|2" ] && pass || fail "a second sweep in the same file"
[ ! -s "$WORK/err" ] && pass || fail "--quiet printed: $(cat "$WORK/err")"
expect_exit 0 "$FABSIM" sweep --set cluster.nodes=2 --vary workload.collective.size=1MiB --json --out sw3 --quiet
jq -e 'length == 1 and .[0].point == "workload.collective.size=1MiB" and .[0].summary.complete' "$WORK/out" >/dev/null \
  && pass || fail "sweep --json"

# --- compare: two scenarios, then runs from a database
expect_exit 0 "$FABSIM" compare "$SRC/examples/default.yaml" "$SRC/examples/rail-roce.yaml" \
  --set cluster.nodes=16 --out cmp --quiet
expect_out "figure"; expect_out "default"; expect_out "rail-roce"; expect_out "fabric cost"
grep -q '^collective time .*([+-]\{0,1\}[0-9.]*%)' "$WORK/out" && pass || fail "compare: no difference column: $(cat "$WORK/out")"
[ -s cmp/1-default/report.html ] && [ -s cmp/2-rail-roce/summary.json ] && pass || fail "compare run folders"
[ "$(sqlite3 cmp/results.sqlite 'SELECT count(*) FROM runs')" = 2 ] && pass || fail "compare database"
expect_exit 0 "$FABSIM" compare --db "$DB" 1 2 --out cmpdb --quiet
expect_out "run 1: fabric.ecmp.hash_seed="
expect_exit 2 "$FABSIM" compare --db "$DB" 99 --out cmpdb2; expect_err "no run with id 99"
expect_exit 2 "$FABSIM" compare --db nothere.sqlite; expect_err "--db nothere.sqlite: cannot read: No such file"
expect_exit 2 "$FABSIM" compare "$SRC/examples/default.yaml" odd.yaml
expect_err "odd.yaml"
# runs of different fidelities (issue 27, defect 17: compared without a word): each label names
# its fidelity and a warning says so; runs of one fidelity keep their labels (above)
printf 'simulation:\n  fidelity: flow\n' >flow.yaml
expect_exit 0 "$FABSIM" compare "$SRC/examples/default.yaml" flow.yaml --set cluster.nodes=2 --out cmpfid
expect_err "warning: the runs were simulated at different fidelities (default [analytic], flow [flow])"
expect_out "default [analytic]"; expect_out "flow [flow]"
grep -q 'default \[analytic\]' cmpfid/report.html && pass || fail "compare report.html lacks the fidelities"
expect_exit 0 "$FABSIM" compare --db cmpfid/results.sqlite --json --out cmpfid2 --quiet
jq -e '[.[].label] == ["run 1: default [analytic]", "run 2: flow [flow]"]' "$WORK/out" >/dev/null \
  && pass || fail "compare --db --json labels: $(jq -c '[.[].label]' "$WORK/out")"

# --- the comparison reports render in Chromium
if [ -x /usr/bin/chromium ] && [ -d "$SRC/report/node_modules/playwright-core" ]; then
  node "$SRC/tests/cli/check_report.mjs" "$SRC" sw/report.html:cmp-0,cmp-series-0 cmp/report.html:cmp-0 \
    cmpdb/report.html > browser.log 2>&1 && pass || fail "comparison reports in Chromium: $(cat browser.log)"
  cat browser.log
else
  fail "needs /usr/bin/chromium and report/node_modules (run make deps)"
fi
finish
