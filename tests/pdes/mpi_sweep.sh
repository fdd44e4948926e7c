#!/usr/bin/env bash
# fabsim sweep under mpirun -np 2: the points spread over the ranks, one
# database with every run (merged by rank 0, paths rewritten), and the same
# table, sweep.csv, report.html and point files as the sweep without MPI.
# Args: FABSIM SRC MPIEXEC (Open MPI oversubscribes by OMPI_MCA_rmaps_base_oversubscribe=1,
# which CTest sets)
MPIEXEC=$3
. "$2/tests/cli/lib.sh" "$1" "$2"

ARGS=(--set cluster.nodes=8 --set simulation.fidelity=flow --set workload.kind=traffic
      --set workload.traffic.pattern=permutation
      --vary fabric.ecmp.hash_seed=0,1 --vary workload.traffic.size=64KB,1MB,4MB)
expect_exit 0 "$FABSIM" sweep "${ARGS[@]}" --jobs 2 --out seq
cp "$WORK/out" table-seq
export TMPDIR=$WORK/tmp
mkdir -p "$TMPDIR"
expect_exit 0 "$MPIEXEC" -np 2 "$FABSIM" sweep "${ARGS[@]}" --out par
cmp -s table-seq "$WORK/out" && pass || fail "table under MPI differs: $(diff table-seq "$WORK/out")"
expect_err "6 points over 2 MPI ranks"
[ "$(grep -c '^\[[123]/3\]' "$WORK/err")" = 6 ] && pass || fail "each rank ran 3 points: $(cat "$WORK/err")"
cmp -s seq/sweep.csv par/sweep.csv && pass || fail "sweep.csv differs"
cmp -s seq/report.html <(sed 's|/par/|/seq/|g' par/report.html) && pass || fail "report.html differs"
DB=par/results.sqlite
[ "$(sqlite3 $DB 'SELECT count(*), count(DISTINCT sweep) FROM runs')" = "6|1" ] && pass || fail "6 runs of one sweep"
for t in metrics timeseries events hot_ports series; do
  [ "$(sqlite3 seq/results.sqlite "SELECT count(*) FROM $t")" = "$(sqlite3 $DB "SELECT count(*) FROM $t")" ] \
    && pass || fail "table $t: $(sqlite3 $DB "SELECT count(*) FROM $t") rows"
done
# run ids in point order (rank 1's points were merged after rank 0's), as without MPI
[ "$(sqlite3 $DB "SELECT group_concat(run_id || ':' || substr(output_dir, -9), ' ') FROM runs")" = \
  "1:point-001 2:point-002 3:point-003 4:point-004 5:point-005 6:point-006" ] \
  && pass || fail "run ids not in point order: $(sqlite3 $DB 'SELECT run_id, output_dir FROM runs')"
q="SELECT run_id, point, sim_time_s, complete FROM runs ORDER BY run_id"
[ "$(sqlite3 seq/results.sqlite "$q")" = "$(sqlite3 $DB "$q")" ] && pass || fail "runs differ from the sweep without MPI"
[ "$(sqlite3 $DB "SELECT count(*) FROM runs WHERE summary_json LIKE '%-rank1-%' OR overrides LIKE '%rank1%'")" = 0 ] \
  && pass || fail "a merged run names the rank's database"
[ "$(sqlite3 $DB "SELECT count(*) FROM runs WHERE overrides LIKE '%$PWD/par/results.sqlite%'")" = 6 ] \
  && pass || fail "runs name the sweep's database"
for p in 1 2 3 4 5 6; do
  diff <(jq 'del(.sim.wall_s)' seq/point-00$p/summary.json) \
       <(sed 's|/par/|/seq/|g' par/point-00$p/summary.json | jq 'del(.sim.wall_s)') >/dev/null \
    && pass || fail "point $p summary differs (wall clock aside)"
done
[ -z "$(ls -A "$TMPDIR")" ] && pass || fail "rank databases left in TMPDIR: $(ls -A "$TMPDIR")"
# Files nobody else can guess, plant or replace (issue 13, defect 7): a
# rank's database and SQLite's journal beside it live in a folder of TMPDIR
# only this user can enter, and rank 0 merges each rank's bytes through a
# new temporary of a random name. Every point stops before it commits its
# rows (FABSIM_TEST_PAUSE=db-commit: its journal exists); while rank 1's
# point is stopped, TMPDIR holds nothing but such folders. A folder planted
# where rank 0's temporary used to be (DB.rank1.tmp) is left alone.
mkdir -p plant/results.sqlite.rank1.tmp
FABSIM_TEST_PAUSE=db-commit "$MPIEXEC" -np 2 "$FABSIM" sweep --set cluster.nodes=2 \
  --vary workload.collective.size=1MiB,2MiB --out plant --quiet >plant.out 2>plant.err &
pid=$!
seen=""
while kill -0 $pid 2>/dev/null; do
  for r in $(pgrep -f "output.dir=$PWD/plant/"); do # the points, stopped or not
    case $(ps -o stat= -p "$r" 2>/dev/null) in
      T*) # rank 1's point (its database in TMPDIR): look before it goes on
        if [ -z "$seen" ] && tr '\0' ' ' < "/proc/$r/cmdline" | grep -q "output.database=$TMPDIR/"; then
          seen=$(ls -lA "$TMPDIR" | tail -n +2)
        fi
        kill -CONT "$r" ;;
    esac
  done
  sleep 0.05
done
wait $pid
code=$?
[ $code = 0 ] && pass || fail "sweep beside a planted folder: exit $code, $(cat plant.err)"
[ -n "$seen" ] && pass || fail "rank 1's point was never seen stopped"
[ -n "$seen" ] && ! echo "$seen" | grep -qv '^drwx------ ' && pass ||
  fail "TMPDIR holds more than private folders while rank 1 writes: $seen"
[ "$(sqlite3 plant/results.sqlite 'SELECT count(*) FROM runs')" = 2 ] && pass || fail "2 runs merged"
[ -d plant/results.sqlite.rank1.tmp ] && [ -z "$(ls -A plant/results.sqlite.rank1.tmp)" ] && pass ||
  fail "the planted folder was touched"
[ -z "$(find plant -maxdepth 1 -name '*rank*' ! -name results.sqlite.rank1.tmp)" ] && pass ||
  fail "rank 0's temporaries left: $(ls -A plant)"
[ -z "$(ls -A "$TMPDIR")" ] && pass || fail "left in TMPDIR: $(ls -A "$TMPDIR")"
# bad input: reported once (by rank 0), every rank exits 2
expect_exit 2 "$MPIEXEC" -np 2 "$FABSIM" sweep --vary fabric.routing=ecmp,bogus --out bad
[ "$(grep -c "is not one of" "$WORK/err")" = 1 ] && pass || fail "bad value reported $(grep -c "is not one of" "$WORK/err") times"
# more ranks than points: the idle rank has nothing to merge
expect_exit 0 "$MPIEXEC" -np 3 "$FABSIM" sweep --set cluster.nodes=2 \
  --vary workload.collective.size=1MiB,2MiB --out few --quiet
[ "$(sqlite3 few/results.sqlite 'SELECT count(*) FROM runs')" = 2 ] && pass || fail "2 points on 3 ranks"
# fabsim run on several ranks would be N copies writing one folder: refused, nothing written
expect_exit 2 "$MPIEXEC" -np 2 "$FABSIM" run --set cluster.nodes=2 --set output.dir=many
expect_err "run under mpirun with more than one rank"
[ ! -e many ] && pass || fail "fabsim run on 2 ranks wrote output"
finish
