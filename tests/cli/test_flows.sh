#!/usr/bin/env bash
# output.flows (issue 29): flows.csv and the database's flows table hold one
# row per transfer, checked against closed forms of the traffic patterns:
# a permutation of N GPUs moves N flows of B bytes, each GPU the source of
# one and the destination of one; an all-to-all N (N - 1), every ordered
# pair once. In every row fct_ps = end_ps - start_ps >= 0, the path runs
# from the source to the destination, and rows come by start, then id. The
# database holds the same rows; the same scenario and seed give the same
# bytes; output.max_flows keeps the earliest rows and says how many were
# left out; with the key off nothing changes (no file, no rows).
. "$(dirname "$0")/lib.sh"
T=(--set workload.kind=traffic --set workload.traffic.size=2MB --quiet)

# check_rows DIR N: N rows, each a valid transfer (fct, order, path ends, ids)
check_rows() {
  local d=$1 n=$2 bad
  [ "$(head -1 "$d/flows.csv")" = "id,start_ps,end_ps,fct_ps,src,dst,src_nic,dst_nic,bytes,class,job,phase,path,spread" ] &&
    pass || fail "$d/flows.csv: header $(head -1 "$d/flows.csv")"
  [ "$(($(wc -l < "$d/flows.csv") - 1))" = "$n" ] && pass || fail "$d/flows.csv: $(wc -l < "$d/flows.csv") lines, want $n rows"
  bad=$(awk -F, 'NR > 1 {
      np = split($13, v, ">")
      if ($1 != NR - 1) { print "id " $1 " on line " NR; exit }
      if ($4 != $3 - $2 || $3 < $2) { print "fct of id " $1; exit }
      if (NR > 2 && $2 < last) { print "start order at id " $1; exit }
      if (np < 2 || v[1] != $5 || v[np] != $6) { print "path of id " $1 ": " $13; exit }
      if ($7 != "" && v[2] != $7) { print "source NIC of id " $1; exit }
      if ($9 != 2000000) { print "bytes of id " $1; exit }
      last = $2 }' "$d/flows.csv")
  [ -z "$bad" ] && pass || fail "$d/flows.csv: $bad"
  local db
  db=$(sqlite3 "$d/results.sqlite" "SELECT count(*), sum(fct_ps), sum(bytes) FROM flows")
  local csv
  csv=$(awk -F, 'NR > 1 { n++; f += $4; b += $9 } END { printf "%d|%.0f|%.0f", n, f, b }' "$d/flows.csv")
  [ "$db" = "$csv" ] && pass || fail "$d: database $db, flows.csv $csv (rows|fct|bytes)"
}

# a permutation of 32 GPUs (4 nodes), flow and packet fidelities
for fid in flow packet; do
  expect_exit 0 "$FABSIM" run "${T[@]}" --set workload.traffic.pattern=permutation \
    --set cluster.nodes=4 --set simulation.fidelity=$fid --set output.flows=true --set output.dir=perm-$fid
  check_rows perm-$fid 32
  [ "$(cut -d, -f5 perm-$fid/flows.csv | tail -n +2 | sort -u | wc -l)" = 32 ] && pass || fail "perm-$fid: sources not distinct"
  [ "$(cut -d, -f6 perm-$fid/flows.csv | tail -n +2 | sort -u | wc -l)" = 32 ] && pass || fail "perm-$fid: destinations not distinct"
  expect_json perm-$fid/summary.json '.files | index("flows.csv") == 2'
  # the FCT statistics of the summary are those of the rows: max and mean
  max=$(awk -F, 'NR > 1 && $4 > m { m = $4 } END { print m }' perm-$fid/flows.csv)
  expect_json perm-$fid/summary.json "(.network.fct_us.max * 1e6 | round) == $max"
  mean=$(awk -F, 'NR > 1 { s += $4; n++ } END { printf "%.0f", s / n }' perm-$fid/flows.csv)
  expect_json perm-$fid/summary.json "(.network.fct_us.mean * 1e6 - $mean | fabs) <= 1"
done

# an all-to-all of 16 GPUs (2 nodes): 240 flows, every ordered pair once
expect_exit 0 "$FABSIM" run "${T[@]}" --set workload.traffic.pattern=all-to-all --set cluster.nodes=2 \
  --set simulation.fidelity=packet --set output.flows=true --set output.dir=a2a
check_rows a2a 240
[ "$(cut -d, -f5,6 a2a/flows.csv | tail -n +2 | sort -u | wc -l)" = 240 ] && pass || fail "a2a: pairs not distinct"
# the last flow ends by the pattern's end; the summary's FCT percentiles are the rows'
p50=$(tail -n +2 a2a/flows.csv | cut -d, -f4 | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR * 50 + 99) / 100)] }')
expect_json a2a/summary.json "(.network.fct_us.p50 * 1e6 | round) == $p50"
end=$(awk -F, 'NR > 1 && $3 > m { m = $3 } END { print m }' a2a/flows.csv)
expect_json a2a/summary.json ".traffic.time_s * 1e12 >= $end"

# same scenario and seed, same bytes
expect_exit 0 "$FABSIM" run "${T[@]}" --set workload.traffic.pattern=all-to-all --set cluster.nodes=2 \
  --set simulation.fidelity=packet --set output.flows=true --set output.dir=a2a-again
cmp -s a2a/flows.csv a2a-again/flows.csv && pass || fail "a2a: flows.csv differs between two runs"

# the cap keeps the earliest rows (the same as the whole log's first ones) and says so
expect_exit 0 "$FABSIM" run "${T[@]}" --set workload.traffic.pattern=all-to-all --set cluster.nodes=2 \
  --set simulation.fidelity=packet --set output.flows=true --set output.max_flows=10 --set output.dir=a2a-10
cmp -s <(head -11 a2a/flows.csv) a2a-10/flows.csv && pass || fail "a2a-10: not the first 10 rows"
expect_json a2a-10/summary.json '[.events[] | select(.kind == "flows-truncated")] | length == 1'
expect_json a2a-10/summary.json '.events[] | select(.kind == "flows-truncated") | .detail | startswith("230 more transfers")'
[ "$(sqlite3 a2a-10/results.sqlite 'SELECT count(*) FROM flows')" = 10 ] && pass || fail "a2a-10: database rows"

# a collective at the analytic fidelity: each repetition of its phase's transfers
expect_exit 0 "$FABSIM" run --set cluster.nodes=2 --set workload.collective.size=16MiB \
  --set workload.collective.algorithm=ring --set output.flows=true --set output.dir=ring --quiet
rows=$(($(wc -l < ring/flows.csv) - 1))
[ "$rows" -gt 0 ] && pass || fail "ring: no rows"
fct=$(awk -F, 'NR > 1 && $4 != $3 - $2 { print $1; exit }' ring/flows.csv)
[ -z "$fct" ] && pass || fail "ring: fct of id $fct"

# stopped early (Ctrl-C) at the analytic fidelity, which times a phase at its submission:
# only transfers that ended by the run's end are rows
interrupt_at simulate stop --set cluster.nodes=2 --set workload.collective.algorithm=ring \
  --set workload.collective.size=1GiB --set output.flows=true
[ "$stop_rc" = 130 ] && pass || fail "stop: exit $stop_rc"
expect_json stop/summary.json '.complete == false'
late=$(jq '.sim.sim_time_s * 1e12 | round' stop/summary.json)
over=$(awk -F, -v e="$late" 'NR > 1 && $3 > e { print $1; exit }' stop/flows.csv)
[ -z "$over" ] && pass || fail "stop: id $over ends after the run's end, $late ps"

# jobs sharing a fabric: each row names its job
expect_exit 0 "$FABSIM" run "$SRC/examples/shared/two-jobs.yaml" --set cluster.nodes=16 \
  --set 'jobs[0].gpus=16' --set 'jobs[1].gpus=16' --set 'jobs[0].workload.collective.size=1MiB' \
  --set 'jobs[1].workload.collective.size=1MiB' --set output.flows=true --set output.dir=jobs --quiet
[ "$(cut -d, -f11 jobs/flows.csv | tail -n +2 | sort -u | tr '\n' ' ')" = "train-a train-b " ] &&
  pass || fail "jobs: job names $(cut -d, -f11 jobs/flows.csv | tail -n +2 | sort -u | tr '\n' ' ')"

# spray: the path is each row's ECMP path, marked spread
expect_exit 0 "$FABSIM" run "${T[@]}" --set workload.traffic.pattern=permutation --set cluster.nodes=4 \
  --set simulation.fidelity=flow --set fabric.routing=spray --set output.flows=true --set output.dir=spray
check_rows spray 32
[ "$(cut -d, -f14 spray/flows.csv | tail -n +2 | sort -u)" = 1 ] && pass || fail "spray: spread column"

# a training job whose collectives are timed apart from the fabric has no per-transfer record
expect_exit 2 "$FABSIM" run "$SRC/examples/mlp-1node.yaml" --set workload.comm_model=reuse \
  --set output.flows=true --set output.dir=reuse
expect_err "output.flows: the training job times its collectives once each apart from the run's fabric"
# jobs that may meet at the analytic fidelity are timed by class, not on the backend
expect_exit 2 "$FABSIM" run "$SRC/examples/shared/two-jobs-random.yaml" --set simulation.fidelity=analytic \
  --set output.flows=true --set output.dir=timed
expect_err "output.flows: train-a may share links with another job and is timed by class"
[ ! -e reuse ] && pass || fail "reuse: output.dir left behind"
expect_exit 2 "$FABSIM" run --set output.flows=maybe --set output.dir=bad
expect_err "--set:1:14: output.flows: expected true or false, got 'maybe'"

# the key off: no file, no rows, the summary's files as before
expect_exit 0 "$FABSIM" run "${T[@]}" --set workload.traffic.pattern=permutation --set cluster.nodes=4 \
  --set simulation.fidelity=flow --set output.dir=off
[ ! -e off/flows.csv ] && pass || fail "off: flows.csv written"
[ "$(sqlite3 off/results.sqlite 'SELECT count(*) FROM flows')" = 0 ] && pass || fail "off: database rows"
expect_json off/summary.json '.files | index("flows.csv") == null'
grep -q flows off/scenario.yaml && fail "off: scenario.yaml names the flows keys" || pass
finish
