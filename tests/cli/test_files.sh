#!/usr/bin/env bash
# The files a run writes (issue #13, defect 7): temporaries nobody can plant
# a symlink at, one run per output.dir, a kill -9 while a file is being
# written leaves the earlier file whole under its name.
# Every step that must hit a moment of a run waits for the run to stop itself
# there (FABSIM_TEST_PAUSE, fabsim/core.h), never for a guessed delay.
. "$(dirname "$0")/lib.sh"

RUN=(run --set cluster.nodes=2 --set output.report=false)

# --- a symlink planted where the old temporaries were (NAME.tmp.PID, the pid
#     known in advance with exec) is neither followed nor overwritten
mkdir -p plant
echo precious > victim.txt
(
  for f in summary.json scenario.yaml timeseries.csv events.csv; do
    ln -s "$WORK/victim.txt" "plant/$f.tmp.$BASHPID"
  done
  exec "$FABSIM" "${RUN[@]}" --set output.dir=plant --quiet
) >"$WORK/out" 2>"$WORK/err"
code=$?
[ "$(cat victim.txt)" = precious ] && pass || fail "a planted symlink's target was overwritten: $(head -c 200 victim.txt)"
[ $code = 0 ] && pass || fail "exit $code beside planted symlinks: $(cat "$WORK/err")"
expect_json plant/summary.json '.complete == true'
[ ! -L plant/summary.json ] && pass || fail "summary.json is a symlink"
# a symlink at the final name is replaced, not written through
ln -s "$WORK/victim.txt" plant2-summary.json
mkdir -p plant2 && mv plant2-summary.json plant2/summary.json
expect_exit 0 "$FABSIM" "${RUN[@]}" --set output.dir=plant2 --quiet
[ "$(cat victim.txt)" = precious ] && pass || fail "a symlink at the final name was written through"
[ -f plant2/summary.json ] && [ ! -L plant2/summary.json ] && pass || fail "summary.json not replaced"
# temporaries are private (0600 while written) and none is left behind
rm plant/*.tmp.*
ls -A plant plant2 | grep -v '^\.fabsim\.lock$' | grep -q '^\.' && fail "a temporary left behind: $(ls -A plant plant2)" || pass

# --- one run per folder: a second run into a folder another run is writing is
#     refused before it simulates (exit 2, at output.dir), and the first ends whole
FABSIM_TEST_PAUSE=simulate "$FABSIM" "${RUN[@]}" --set output.dir=busy --quiet >a.out 2>a.err &
first=$!
wait_stopped $first && pass || fail "the first run did not reach the simulation"
expect_exit 2 "$FABSIM" "${RUN[@]}" --set output.dir=busy --set cluster.nodes=4 --quiet
expect_err "output.dir: busy: another fabsim run (process $first) is writing this folder"
expect_err "Set output.dir to another folder"
[ ! -e busy/summary.json ] && pass || fail "the refused run wrote files"
# located in the file when the folder comes from it
printf 'output:\n  dir: busy\n' > busy.yaml
expect_exit 2 "$FABSIM" run busy.yaml --quiet
expect_err "busy.yaml:2:8: output.dir: busy: another fabsim run"
kill -CONT $first
wait $first
code=$?
[ $code = 0 ] && pass || fail "the first run: exit $code: $(cat a.err)"
expect_json busy/summary.json '.complete == true and .nodes == 2'
# and once it ended, the folder is free again (the kernel dropped the lock)
expect_exit 0 "$FABSIM" "${RUN[@]}" --set output.dir=busy --set cluster.nodes=4 --quiet
expect_json busy/summary.json '.nodes == 4'
# a run killed with -9 frees the folder too
FABSIM_TEST_PAUSE=simulate "$FABSIM" "${RUN[@]}" --set output.dir=busy --quiet >/dev/null 2>&1 &
pid=$!
wait_stopped $pid && pass || fail "the run did not reach the simulation"
kill -9 $pid
wait $pid 2>/dev/null
expect_exit 0 "$FABSIM" "${RUN[@]}" --set output.dir=busy --quiet

# --- one sweep per --out DIR: its points stop themselves (the variable reaches
#     them), the sweep waits for its point holding DIR, a second sweep is refused
FABSIM_TEST_PAUSE=simulate "$FABSIM" sweep --vary cluster.nodes=2 --out swl --jobs 1 --quiet >sw.out 2>sw.err &
sw=$!
pt=""
while kill -0 $sw 2>/dev/null; do
  pt=$(pgrep -f "swl/point-001" | head -1)
  [ -n "$pt" ] && wait_stopped "$pt" && break
  sleep 0.05
done
[ -n "$pt" ] && pass || fail "the sweep's point never started: $(cat sw.err)"
expect_exit 2 "$FABSIM" sweep --vary cluster.nodes=4 --out swl --quiet
expect_err "another fabsim run (process $sw) is writing this folder; give this sweep another --out"
kill -CONT "$pt"
wait $sw
code=$?
[ $code = 0 ] && pass || fail "the first sweep: exit $code: $(cat sw.err)"
expect_json swl/point-001/summary.json '.nodes == 2'

# --- kill -9 while a file is being written: stopped with the temporary of
#     summary.json whole but not renamed, then killed; the previous
#     summary.json is whole under its name
expect_exit 0 "$FABSIM" "${RUN[@]}" --set output.dir=k9 --set output.database=none --quiet
cp k9/summary.json before.json
FABSIM_TEST_PAUSE=rename "$FABSIM" "${RUN[@]}" --set cluster.nodes=4 --set output.dir=k9 \
  --set output.database=none --quiet >/dev/null 2>&1 &
pid=$!
wait_stopped $pid && pass || fail "the run did not reach a rename"
kill -9 $pid
wait $pid 2>/dev/null
cmp -s before.json k9/summary.json && pass || fail "summary.json changed under a killed writer"
jq -e . k9/summary.json >/dev/null && pass || fail "summary.json is not whole JSON"
finish
