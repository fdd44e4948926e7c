#!/usr/bin/env bash
# Paths a user gives that cannot serve (issue 27, defects 4 and 16): refused as bad input,
# exit 2, before anything runs, and nothing left behind. On f65f882 a FIFO as
# workload.trace.path blocked forever, a text file as output.database or sweep --db failed
# (exit 1) only after the simulation, and sweep --out FILE, compare --db TEXTFILE and
# topo --dot FOLDER exited 1.
. "$(dirname "$0")/lib.sh"

echo "not a database" >text.txt
mkdir folder
mkfifo fifo
sqlite3 other.sqlite 'CREATE TABLE t (x)' && pass || fail "sqlite3 cannot make a database"

# a FIFO as the trace: refused at the key without waiting for a writer (timeout: 124)
expect_exit 2 timeout 30 "$FABSIM" run --set workload.kind=trace --set workload.trace.path=fifo \
  --set output.dir=tr --quiet
expect_err "--set:2:21: workload.trace.path: rank 0: fifo is a pipe; allowed: a regular file"
[ ! -e tr ] && pass || fail "a refused trace run left its output.dir"
expect_exit 2 "$FABSIM" run --set workload.kind=trace --set workload.trace.path=folder \
  --set output.dir=tr --quiet
expect_err "workload.trace.path: rank 0: folder is a folder; allowed: a regular file"

# output.database that is not a results database: refused before the run
for db in text.txt other.sqlite; do
  expect_exit 2 "$FABSIM" run --set cluster.nodes=2 --set output.database="$WORK/$db" \
    --set output.dir=run-$db --quiet
  expect_err "--set:2:17: output.database: $WORK/$db is"
  [ ! -e run-$db ] && pass || fail "a run refused for output.database=$db left its output.dir"
done
expect_err "is an SQLite database of 1 tables but not a fabsim results database (no table runs)"
# a results database of fabsim's, and an empty file, are taken
expect_exit 0 "$FABSIM" run --set cluster.nodes=2 --set output.dir=ok --quiet
: >empty.sqlite
expect_exit 0 "$FABSIM" run --set cluster.nodes=2 --set output.database="$WORK/ok/results.sqlite" \
  --set output.dir=ok2 --quiet
expect_exit 0 "$FABSIM" run --set cluster.nodes=2 --set output.database="$WORK/empty.sqlite" \
  --set output.dir=ok3 --quiet

# sweep: --out a file, --db a text file
expect_exit 2 "$FABSIM" sweep --vary cluster.nodes=2 --out text.txt --quiet
expect_err "fabsim: --out text.txt:"
expect_err "not a folder; allowed: a folder this user can create and write"
expect_exit 2 "$FABSIM" sweep --vary cluster.nodes=2 --db text.txt --out sw --quiet
expect_err "fabsim: --db text.txt: is not an SQLite database"
[ ! -e sw ] && pass || fail "a sweep refused for its --db left its --out folder: $(ls -A sw)"

# compare --db: a text file, a database of another program, a folder, nothing
for db in text.txt other.sqlite folder absent.sqlite; do
  expect_exit 2 "$FABSIM" compare --db $db --out cmp-$db
  expect_err "fabsim: --db $db: "
  [ ! -e cmp-$db ] && pass || fail "compare --db $db left its --out folder"
done
expect_exit 0 "$FABSIM" compare --db ok/results.sqlite --out cmp --quiet

# topo --dot: a folder (before the topology is built), a path that cannot be made
expect_exit 2 "$FABSIM" topo --dot folder
expect_err "fabsim: --dot folder: is a folder; allowed: a file to write, or - (stdout)"
expect_exit 2 "$FABSIM" topo --dot "$WORK/absent/x.dot"
expect_err "cannot write: No such file or directory"
expect_exit 0 "$FABSIM" topo --dot x.dot
[ -s x.dot ] && pass || fail "topo --dot x.dot wrote nothing"

finish
