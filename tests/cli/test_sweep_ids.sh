#!/usr/bin/env bash
# fabsim sweep: run ids in point order, whatever order the points finished in
# (they run in parallel: --jobs), so two identical sweeps give identical
# databases (wall clock aside). The finishing order is forced, not hoped for:
# every point stops itself once simulating (FABSIM_TEST_PAUSE=simulate,
# fabsim/core.h) and the test lets them go on one by one, later points first.
. "$(dirname "$0")/lib.sh"

ARGS=(--set cluster.nodes=8 --set simulation.fidelity=flow --set workload.kind=traffic
      --set workload.traffic.pattern=permutation)

# point_stopped SWEEP N: the pid of point N of the sweep (process SWEEP), once
# it has stopped itself at its pause; returns 1 if the sweep ended first.
point_stopped() {
  local pid
  while kill -0 "$1" 2>/dev/null; do
    for pid in $(pgrep -P "$1"); do
      case $(ps -o args= -p "$pid") in
        *"/point-00$2 "*) wait_stopped "$pid" && { echo "$pid"; return 0; } ;;
      esac
    done
    sleep 0.05
  done
  return 1
}
# gone PID: wait until the process (not ours to wait for) has ended.
gone() {
  local st
  while st=$(ps -o stat= -p "$1" 2>/dev/null); do
    case $st in Z*) return 0 ;; esac
    sleep 0.05
  done
}
# int_pending PID: wait until the (stopped) process has a SIGINT pending.
int_pending() {
  local mask
  while mask=$(awk '/^(SigPnd|ShdPnd):/ { printf "%s ", $2 }' "/proc/$1/status" 2>/dev/null); do
    for m in $mask; do (( 0x$m & 2 )) && return 0; done
    sleep 0.05
  done
  return 1
}
ids() { sqlite3 "$1" "SELECT run_id, point FROM runs ORDER BY run_id"; }

# --- forced: point 2 ends first, then point 1, then point 3 (--jobs 2)
FABSIM_TEST_PAUSE=simulate "$FABSIM" sweep "${ARGS[@]}" --vary workload.traffic.size=4MB,64KB,1MB \
  --jobs 2 --out forced --quiet > forced.out 2> forced.err &
sweep=$!
p1=$(point_stopped $sweep 1) && p2=$(point_stopped $sweep 2) && pass || fail "points 1 and 2 did not stop"
kill -CONT "$p2"; gone "$p2"
p3=$(point_stopped $sweep 3) && pass || fail "point 3 did not stop"
kill -CONT "$p1"; gone "$p1"
kill -CONT "$p3"
wait $sweep
rc=$?
[ $rc = 0 ] && pass || fail "forced sweep exit $rc: $(cat forced.err)"
want="1|workload.traffic.size=4MB
2|workload.traffic.size=64KB
3|workload.traffic.size=1MB"
[ "$(ids forced/results.sqlite)" = "$want" ] && pass || fail "run ids follow the finishing order: $(ids forced/results.sqlite)"
# the ids are the only thing that moved: each run's rows are its own
[ "$(sqlite3 forced/results.sqlite "SELECT count(*) FROM runs r JOIN metrics m USING (run_id)
     WHERE m.name = 'traffic.bytes_per_flow' AND r.point = 'workload.traffic.size=' ||
       CASE m.value WHEN 4000000 THEN '4MB' WHEN 64000 THEN '64KB' WHEN 1000000 THEN '1MB' END")" = 3 ] \
  && pass || fail "a run's metrics are another point's"
[ "$(sqlite3 forced/results.sqlite 'PRAGMA foreign_key_check')" = "" ] && pass || fail "dangling rows"
[ "$(sqlite3 forced/results.sqlite 'PRAGMA integrity_check')" = ok ] && pass || fail "integrity"
for p in 1 2 3; do
  jq -e --arg d "$PWD/forced/results.sqlite" '.database == $d' forced/point-00$p/summary.json >/dev/null \
    && pass || fail "point $p names another database"
done

# --- Ctrl-C: point 2 ended, then the sweep is stopped with points 1 and 3
#     running; every run present is in point order. The points go on only
#     once the sweep has passed them its SIGINT (one: a second one, or one
#     after the simulation, would kill a run before it wrote its row).
FABSIM_TEST_PAUSE=simulate "$FABSIM" sweep "${ARGS[@]}" --vary workload.traffic.size=4MB,64KB,1MB \
  --jobs 2 --out stopped --quiet > stopped.out 2> stopped.err &
sweep=$!
p1=$(point_stopped $sweep 1) && p2=$(point_stopped $sweep 2) && pass || fail "points 1 and 2 did not stop"
kill -CONT "$p2"; gone "$p2"
p3=$(point_stopped $sweep 3) && pass || fail "point 3 did not stop"
kill -INT $sweep
int_pending "$p1" && int_pending "$p3" && pass || fail "the sweep did not pass SIGINT to its points"
kill -CONT "$p3" "$p1"
wait $sweep
rc=$?
[ $rc = 130 ] && pass || fail "stopped sweep exit $rc (want 130): $(cat stopped.err)"
[ "$(ids stopped/results.sqlite)" = "$want" ] && pass || fail "stopped sweep: $(ids stopped/results.sqlite)"
[ "$(sqlite3 stopped/results.sqlite "SELECT group_concat(complete) FROM (SELECT complete FROM runs ORDER BY run_id)")" = "0,1,0" ] \
  && pass || fail "point 2 ran to its end, points 1 and 3 were stopped"
[ "$(sqlite3 stopped/results.sqlite 'PRAGMA foreign_key_check')" = "" ] && pass || fail "dangling rows after Ctrl-C"

# --- unforced: the first point much slower than the second (packet level,
#     4 MB against 64 KB), two at a time, twice; and a --db holding earlier runs
SLOW=(--set cluster.nodes=8 --set simulation.fidelity=packet --set workload.kind=traffic
      --set workload.traffic.pattern=permutation --vary workload.traffic.size=4MB,64KB)
dump() {
  sqlite3 "$1" "SELECT run_id, point, sim_time_s, complete FROM runs ORDER BY run_id;
    SELECT run_id, name, value FROM metrics WHERE name NOT LIKE '%wall%' ORDER BY run_id, name;
    SELECT run_id, metric, entity, t_s, value FROM timeseries ORDER BY 1, 2, 3, 4;
    SELECT run_id, t_s, component, kind, value FROM events ORDER BY 1, 2, 3, 4;
    SELECT run_id, rank, port, bytes FROM hot_ports ORDER BY 1, 2;"
}
for s in a b; do
  expect_exit 0 "$FABSIM" sweep "${SLOW[@]}" --jobs 2 --out slow-$s --quiet --json
  jq -S 'map(del(.summary.sim.wall_s))' "$WORK/out" | sed "s|/slow-$s/|/slow/|g" > slow-$s.json
done
want="1|workload.traffic.size=4MB
2|workload.traffic.size=64KB"
[ "$(ids slow-a/results.sqlite)" = "$want" ] && pass || fail "slow first point: $(ids slow-a/results.sqlite)"
dump slow-a/results.sqlite > dump-a
dump slow-b/results.sqlite > dump-b
[ -s dump-a ] && cmp -s dump-a dump-b && pass || fail "two identical sweeps differ: $(diff dump-a dump-b | head -5)"
jq -e 'map(.run_id) == [1, 2]' slow-a.json >/dev/null && cmp -s slow-a.json slow-b.json \
  && pass || fail "sweep --json differs between identical sweeps"
# a database with three runs already: the sweep's take 4 and 5, in point order
cp forced/results.sqlite shared.sqlite
expect_exit 0 "$FABSIM" sweep "${SLOW[@]}" --jobs 2 --out slow-c --db shared.sqlite --quiet
[ "$(ids shared.sqlite)" = "1|workload.traffic.size=4MB
2|workload.traffic.size=64KB
3|workload.traffic.size=1MB
4|workload.traffic.size=4MB
5|workload.traffic.size=64KB" ] && pass || fail "--db with earlier runs: $(ids shared.sqlite)"
[ "$(sqlite3 shared.sqlite "SELECT count(*) FROM runs WHERE run_id <= 3 AND output_dir LIKE '%/forced/%'")" = 3 ] \
  && pass || fail "the earlier runs lost their ids"
[ "$(sqlite3 shared.sqlite "SELECT group_concat(run_id) FROM runs WHERE output_dir LIKE '%/slow-c/%'")" = "4,5" ] \
  && pass || fail "the sweep's runs are not 4 and 5"
finish
