#!/usr/bin/env bash
# results.sqlite: the schema and its indexes, several runs in one file,
# concurrent writers, a killed run that leaves earlier runs whole, Ctrl-C
# (outputs finished and marked incomplete), deterministic contents.
. "$(dirname "$0")/lib.sh"
command -v sqlite3 >/dev/null || { fail "needs the sqlite3 command (make deps)"; finish; exit; }
DB=$WORK/shared.sqlite
q() { sqlite3 -batch -noheader "$@"; }

# --- one run: every table, the indexes, the schema version
expect_exit 0 "$FABSIM" run "$SRC/examples/default.yaml" --set output.dir=r1 --set cluster.nodes=16 --quiet
D=r1/results.sqlite
[ "$(q $D 'PRAGMA integrity_check')" = ok ] && pass || fail "integrity_check"
[ "$(q $D 'PRAGMA user_version')" = 2 ] && pass || fail "user_version"
for t in runs metrics series timeseries events hot_ports flows; do
  [ "$(q $D "SELECT count(*) FROM sqlite_master WHERE type='table' AND name='$t'")" = 1 ] && pass || fail "no table $t"
done
for i in runs_by_scenario runs_by_sweep metrics_by_name events_by_time events_by_component; do
  [ "$(q $D "SELECT count(*) FROM sqlite_master WHERE type='index' AND name='$i'")" = 1 ] && pass || fail "no index $i"
done
# the series query a user writes uses the primary key, not a scan
q $D "EXPLAIN QUERY PLAN SELECT t_s, value FROM timeseries WHERE run_id=1 AND metric='nic_tx_gbps_total' ORDER BY t_s" \
  | grep -q 'USING PRIMARY KEY' && pass || fail "timeseries lookups do not use the key"
[ "$(q $D "SELECT scenario LIKE '%examples/default.yaml', seed, fidelity, complete, version FROM runs")" = "1|1|analytic|1|0.1.0" ] \
  && pass || fail "runs row: $(q $D 'SELECT * FROM runs' | head -c 300)"
# metrics are the summary's numbers
busbw=$(jq '.collectives[0].busbw_GBps' r1/summary.json)
q $D "SELECT abs(value - $busbw) < 1e-9 * $busbw FROM metrics WHERE name='collectives.0.busbw_GBps'" | grep -qx 1 \
  && pass || fail "metric busbw"
# the time series in SQL is the CSV
rows=$(($(wc -l < r1/timeseries.csv) - 1))
[ "$(q $D "SELECT count(*) FROM timeseries WHERE metric='nic_tx_gbps_total'")" = "$rows" ] && pass || fail "timeseries rows"
[ "$(q $D "SELECT unit FROM series WHERE metric='nic_tx_gbps_total'")" = "Gb/s" ] && pass || fail "series unit"
[ "$(q $D "SELECT count(*) FROM events WHERE kind='workload-start'")" = 1 ] && pass || fail "events"
[ "$(q $D "SELECT count(*) FROM hot_ports")" = 10 ] && pass || fail "hot_ports (output.top_ports = 10)"

# --- several runs share one file (output.database), including concurrent writers
for i in 1 2 3 4; do
  "$FABSIM" run --set cluster.nodes=$((i * 2)) --set output.dir=s$i --set output.database="$DB" --quiet &
done
wait
[ "$(q "$DB" 'SELECT count(*) FROM runs')" = 4 ] && pass || fail "4 concurrent runs: $(q "$DB" 'SELECT count(*) FROM runs')"
[ "$(q "$DB" "SELECT count(DISTINCT run_id) FROM timeseries")" = 4 ] && pass || fail "each run's series"
[ ! -e s1/results.sqlite ] && pass || fail "a run with output.database wrote its own file too"
expect_json s1/summary.json ".database == \"$DB\""
# a database another writer holds locked is waited for, not refused as "not an SQLite database"
# (the check before the run read the schema before it set its busy timeout: a sweep's workers
# sharing results.sqlite failed at random)
printf 'BEGIN EXCLUSIVE;\nDELETE FROM runs WHERE 0;\n.shell sleep 2\nCOMMIT;\n' | q "$DB" &
sleep 0.5
expect_exit 0 "$FABSIM" run --set cluster.nodes=2 --set output.dir=s6 --set output.database="$DB" --quiet
wait
[ "$(q "$DB" 'SELECT count(*) FROM runs')" = 5 ] && pass || fail "the run after the lock: $(q "$DB" 'SELECT count(*) FROM runs') runs"
expect_exit 0 "$FABSIM" run --set cluster.nodes=2 --set output.dir=s5 --set output.database=none --quiet
[ ! -e s5/results.sqlite ] && pass || fail "output.database=none wrote a database"

# --- a run killed while it writes never harms the runs before it. Each kill -9
#     lands at a known point (the run stops itself there: FABSIM_TEST_PAUSE,
#     fabsim/core.h): while simulating, with a file's temporary whole but not
#     renamed, and inside the database transaction with every row inserted
#     but not committed (the case a rollback journal exists for).
before=$(q "$DB" 'SELECT count(*) FROM runs')
for point in simulate rename db-commit; do
  FABSIM_TEST_PAUSE=$point "$FABSIM" run "$SRC/examples/default.yaml" --set output.sample_interval=200ns \
    --set output.report=false --set output.dir=k --set output.database="$DB" --quiet &
  pid=$!
  wait_stopped $pid && pass || fail "the run did not stop at $point"
  kill -9 $pid
  wait $pid 2>/dev/null
  [ $? = 137 ] && pass || fail "the run was not killed at $point"
  [ "$(q "$DB" 'PRAGMA integrity_check')" = ok ] && pass || fail "integrity after kill -9 at $point"
  [ "$(q "$DB" 'SELECT count(*) FROM runs')" = "$before" ] && pass || fail "runs lost or half-added after kill -9 at $point"
  [ "$(q "$DB" "SELECT count(*) FROM runs r WHERE NOT EXISTS (SELECT 1 FROM metrics m WHERE m.run_id = r.run_id)")" = 0 ] \
    && pass || fail "a half-written run after kill -9 at $point"
done
ls -A k | grep -q '^\.summary\|^\.events\|^\.timeseries\|^\.scenario' && pass || fail "kill -9 at rename: no temporary was pending (the hook did not hit a file write)"
expect_exit 0 "$FABSIM" run --set cluster.nodes=2 --set output.dir=s6 --set output.database="$DB" --quiet
[ "$(q "$DB" 'SELECT count(*) FROM runs')" = $((before + 1)) ] && pass || fail "appending after the kills"

# --- Ctrl-C: the run stops, every file is whole and says "complete": false.
#     The run stops itself after its first slice of simulated time; SIGINT
#     sent then is handled when it continues (no guessed delay).
FABSIM_TEST_PAUSE=simulate "$FABSIM" run --set simulation.fidelity=flow --set cluster.nodes=32 --set workload.kind=traffic \
  --set fabric.routing=ecmp \
  --set workload.traffic.pattern=all-to-all --set workload.traffic.size=256KB --set output.dir=c \
  --quiet 2>c.err &
pid=$!
wait_stopped $pid && pass || fail "the run did not reach its first slice"
kill -INT $pid
kill -CONT $pid
wait $pid
rc=$?
[ $rc = 130 ] && pass || fail "exit $rc after SIGINT (want 130)"
grep -q 'marked "complete": false' c.err && pass || fail "no message on SIGINT: $(cat c.err)"
expect_json c/summary.json '.complete == false and .sim.sim_time_s > 0'
[ "$(q c/results.sqlite 'SELECT complete FROM runs')" = 0 ] && pass || fail "database row not marked incomplete"
grep -q ',job,stopped,' c/events.csv && pass || fail "events.csv lacks the stop"
grep -q '"complete":false' c/report.html && pass || fail "report.html not marked incomplete"
ls c/*.tmp.* >/dev/null 2>&1 && fail "temporary files left behind" || pass

# --- the same run twice: the same rows (wall-clock columns aside)
for i in 1 2; do
  "$FABSIM" run --set cluster.nodes=4 --set output.dir=det --quiet
  mv det/results.sqlite det$i.sqlite
done
dump() { q "$1" "SELECT scenario, overrides, seed, fidelity, version, sim_time_s, complete, scenario_yaml FROM runs;
  SELECT name, value FROM metrics WHERE name NOT LIKE 'sim.wall_s';
  SELECT * FROM series; SELECT * FROM timeseries; SELECT * FROM events; SELECT * FROM hot_ports;"; }
cmp -s <(dump det1.sqlite) <(dump det2.sqlite) && pass || fail "two identical runs stored different rows"
finish
