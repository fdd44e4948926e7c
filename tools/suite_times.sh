#!/usr/bin/env bash
# The CPU time (user + sys seconds of the test and of every process it waits
# for, mpirun's ranks included) and the wall time of each test of a built
# ctest folder, with no time limit. On a shared, loaded machine the CPU
# seconds are the figure to compare: their sum over 2 is about what `ctest
# -j2` takes on an idle 2-core machine.
#
#   tools/suite_times.sh build      [REGEX] > release.tsv
#   JOBS=2 tools/suite_times.sh build-asan "" "-LE long" > asan.tsv
#   sort -t$'\t' -k2,2gr release.tsv | head -20
#
# Args: BUILD, a ctest -R regex (or ""), further ctest selection options
# (e.g. "-LE long"). JOBS tests at a time (default 1: wall times as
# `ctest -j1` gives them; more changes no CPU figure). Output: one line per
# test, "name<TAB>cpu_s<TAB>wall_s<TAB>exit", in ctest's order, then a
# "total" line. Each test runs as ctest runs it (command, environment and
# working folder from `ctest --show-only=json-v1`), with ASAN_OPTIONS and
# UBSAN_OPTIONS as `make test-asan` sets them.
set -u
BUILD=$(realpath "$1")
REGEX=${2:-}
read -r -a SELECT <<<"${3:-}"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
export BUILD
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export WORK

run_one() { # run_one INDEX: the test in $WORK/INDEX.json -> $WORK/INDEX.tsv
  local t name dir rc u s e cpu
  t=$(cat "$WORK/$1.json")
  name=$(jq -r .name <<<"$t")
  mapfile -t cmd < <(jq -r '.command[]' <<<"$t")
  mapfile -t envs < <(jq -r '(.properties // [])[] | select(.name == "ENVIRONMENT") | .value[]' <<<"$t")
  dir=$(jq -r '((.properties // [])[] | select(.name == "WORKING_DIRECTORY") | .value) // empty' <<<"$t")
  (cd "${dir:-$BUILD}" && env "${envs[@]}" /usr/bin/time -f 'T %U %S %e' -o "$WORK/$1.time" \
    "${cmd[@]}" >/dev/null 2>&1)
  rc=$?
  read -r _ u s e < <(grep '^T ' "$WORK/$1.time")
  cpu=$(awk -v u="${u:-0}" -v s="${s:-0}" 'BEGIN { printf "%.2f", u + s }')
  printf '%s\t%s\t%s\t%s\n' "$name" "$cpu" "${e:-0}" "$rc" >"$WORK/$1.tsv"
}
export -f run_one

args=()
[ -n "$REGEX" ] && args=(-R "$REGEX")
n=0
while IFS= read -r t; do
  printf '%s\n' "$t" >"$WORK/$n.json"
  n=$((n + 1))
done < <(cd "$BUILD" && ctest --show-only=json-v1 "${args[@]}" "${SELECT[@]}" | jq -c '.tests[]')
[ "$n" -gt 0 ] || { echo "no tests selected in $BUILD" >&2; exit 1; }
seq 0 $((n - 1)) | xargs -P "${JOBS:-1}" -I{} bash -c 'run_one {}'
for i in $(seq 0 $((n - 1))); do cat "$WORK/$i.tsv"; done |
  awk -F'\t' '{ print; c += $2; w += $3 } END { printf "total\t%.2f\t%.2f\t-\n", c, w }'
