# Helpers for CLI tests: sourced, not run. $FABSIM is the binary, $SRC the tree.
set -u
FABSIM=$1
SRC=$2
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
failures=0
checks=0

pass() { checks=$((checks + 1)); }
fail() { checks=$((checks + 1)); failures=$((failures + 1)); echo "FAIL: $*" >&2; }

# expect_exit CODE CMD...: run CMD, capture stdout/stderr in $WORK/out, $WORK/err
expect_exit() {
  local want=$1; shift
  "$@" >"$WORK/out" 2>"$WORK/err"
  local got=$?
  if [ "$got" = "$want" ]; then pass; else fail "exit $got (want $want): $* -- $(head -c 400 "$WORK/err")"; fi
}
# expect_err TEXT: the last command's stderr contains TEXT exactly (fixed string)
expect_err() {
  if grep -qF -- "$1" "$WORK/err"; then pass; else fail "stderr lacks [$1]; got: $(head -c 400 "$WORK/err")"; fi
}
expect_out() {
  if grep -qF -- "$1" "$WORK/out"; then pass; else fail "stdout lacks [$1]; got: $(head -c 400 "$WORK/out")"; fi
}
# expect_json FILE JQ-EXPR: the expression is true
expect_json() {
  if jq -e "$2" "$1" >/dev/null 2>&1; then pass; else fail "$1: jq '$2' is not true"; fi
}
# wait_stopped PID: wait until the process has stopped itself at a
# FABSIM_TEST_PAUSE point (state T; fabsim/core.h). A condition, not a delay:
# returns 1 if the process ended instead. Polls ps, portable to macOS.
wait_stopped() {
  local st
  while :; do
    st=$(ps -o stat= -p "$1" 2>/dev/null) || return 1
    case $st in T*) return 0 ;; esac
    sleep 0.05
  done
}
# interrupt_at POINT DIR ARGS...: fabsim run ARGS into DIR, stopped at the FABSIM_TEST_PAUSE
# point POINT, sent SIGINT there and continued; $stop_rc: its exit status, or empty (and a
# failure) when it ended before reaching POINT. Its stderr: DIR.err.
interrupt_at() {
  local point=$1 dir=$2; shift 2
  rm -rf "$dir"
  stop_rc=
  FABSIM_TEST_PAUSE=$point "$FABSIM" run "$@" --set output.dir="$dir" --quiet 2>"$dir.err" &
  local pid=$!
  if ! wait_stopped $pid; then
    wait $pid
    fail "$dir: the run ended (exit $?) before $point: $(cat "$dir.err")"
    return
  fi
  kill -INT $pid
  kill -CONT $pid
  wait $pid
  stop_rc=$?
}
finish() {
  echo "$((checks - failures)) passed, $failures failed"
  [ "$failures" = 0 ]
}
