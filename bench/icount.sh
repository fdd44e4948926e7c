#!/usr/bin/env bash
# Instruction counts of the packet benchmarks against their references
# (bench/icount.ref), so that a slowdown of the packet fidelity shows in the
# next benchmark run, whatever the load of the machine: valgrind's callgrind
# counts the instructions a run executes (Ir), which do not depend on the
# load, the cache or the clock. A benchmark, not a test (minutes under
# valgrind; not part of make test).
#
#   bench/icount.sh                   the default cases, against the reference
#   bench/icount.sh --all             also the 1,024-host permutation (~10 min)
#   bench/icount.sh CASE...           only these cases (names as in icount.ref)
#   bench/icount.sh --update [CASE]   measure and write the reference lines
#   options: --build DIR (default build), --tolerance PCT (default 2)
#
# Per case it prints the instructions, the events the benchmark ran and the
# instructions per event, and compares them with the reference line: a rise
# of more than the tolerance is a REGRESSION (exit 1); a fall of more than
# the tolerance asks for --update (exit 0). It also compares a digest of the
# benchmark's deterministic output (wall, CPU, RSS and rates left out): a
# different digest means the results changed (exit 1), and then the counts
# are not comparable either.
#
# Reference lines (tab-separated): case, benchmark and arguments, Ir, events,
# output digest, commit, valgrind version, compiler, date. Counts depend on
# the compiler and its flags: compare Release builds (make's default) by the
# same compiler as the reference line's.
set -u
cd "$(dirname "$0")/.." || exit 2
REF=bench/icount.ref
BUILD=build
TOL=2
UPDATE=0
ALL=0
WANT=()
while [ $# -gt 0 ]; do
  case $1 in
    --build) BUILD=$2; shift 2 ;;
    --tolerance) TOL=$2; shift 2 ;;
    --update) UPDATE=1; shift ;;
    --all) ALL=1; shift ;;
    -h|--help) sed -n '2,26p' "$0"; exit 0 ;;
    -*) echo "icount.sh: unknown option $1" >&2; exit 2 ;;
    *) WANT+=("$1"); shift ;;
  esac
done
command -v valgrind > /dev/null || { echo "icount.sh: valgrind not found (apt-get install valgrind)" >&2; exit 2; }

# The cases: name, benchmark and arguments, default (1) or --all only (0).
CASES=(
  "perm-128	bench_packet_perm --radix 8 --rate 100	1"
  "perm-128-ack1	bench_packet_perm --radix 8 --rate 100 --set cluster.nic.ack_every=1	1"
  "incast-32	bench_packet_incast --rate 100	1"
  "perm-1024	bench_packet_perm --radix 16 --rate 100	0"
)

# The benchmark's deterministic output: wall and CPU seconds, peak RSS and
# per-second rates out.
digest() {
  grep -v -E '^  (wall|peak RSS) ' | sed -E -e 's/, [0-9.]+ M\/s (wall|CPU)//g' | md5sum | cut -c1-12
}

commit=$(git rev-parse --short=7 HEAD 2> /dev/null || echo unknown)
[ -n "$(git status --porcelain -- src include bench CMakeLists.txt 2> /dev/null)" ] && commit="$commit+dirty"
vg=$(valgrind --version)
cc=$(sed -n 's/^CMAKE_C_COMPILER:[A-Z]*=//p' "$BUILD/CMakeCache.txt" 2> /dev/null)
ccv=$("${cc:-cc}" --version 2> /dev/null | head -1 | sed -E 's/ \(.*\)//')
bt=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$BUILD/CMakeCache.txt" 2> /dev/null)
[ "$bt" = Release ] || echo "icount.sh: $BUILD is a '$bt' build; the references are Release" >&2

rc=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%-14s %15s %15s %10s %8s  %s\n' case Ir reference Ir/event change verdict
for c in "${CASES[@]}"; do
  IFS=$'\t' read -r name cmd dflt <<< "$c"
  if [ ${#WANT[@]} -gt 0 ]; then
    [[ " ${WANT[*]} " == *" $name "* ]] || continue
  elif [ "$dflt" = 0 ] && [ "$ALL" = 0 ]; then
    continue
  fi
  read -r bin args <<< "$cmd"
  [ -x "$BUILD/$bin" ] || { echo "icount.sh: $BUILD/$bin not built (cmake --build $BUILD --target $bin)" >&2; exit 2; }
  # shellcheck disable=SC2086
  nice valgrind --tool=callgrind --callgrind-out-file=/dev/null "$BUILD/$bin" $args \
    > "$tmp/out" 2> "$tmp/err"
  ir=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$tmp/err")
  ev=$(sed -n 's/^  events *\([0-9]*\).*/\1/p' "$tmp/out")
  dg=$(digest < "$tmp/out")
  if [ -z "$ir" ] || [ -z "$ev" ]; then
    echo "icount.sh: $name: no count (see below)" >&2
    cat "$tmp/err" >&2
    exit 2
  fi
  ipe=$(awk -v a="$ir" -v b="$ev" 'BEGIN { printf "%.1f", a / b }')
  if [ "$UPDATE" = 1 ]; then
    line=$(printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s' "$name" "$cmd" "$ir" "$ev" "$dg" "$commit" \
      "$vg" "$ccv" "$(date -u +%F)")
    { grep -v -P "^$name\t" "$REF" 2> /dev/null; echo "$line"; } > "$tmp/ref"
    { grep '^#' "$tmp/ref"; grep -v '^#' "$tmp/ref" | sort; } > "$REF"
    printf '%-14s %15s %15s %10s %8s  %s\n' "$name" "$ir" - "$ipe" - "written to $REF"
    continue
  fi
  ref=$(grep -P "^$name\t" "$REF" 2> /dev/null)
  if [ -z "$ref" ]; then
    printf '%-14s %15s %15s %10s %8s  %s\n' "$name" "$ir" - "$ipe" - "no reference (--update)"
    continue
  fi
  IFS=$'\t' read -r _ rcmd rir rev rdg rcommit _ rcc _ <<< "$ref"
  pct=$(awk -v a="$ir" -v b="$rir" 'BEGIN { printf "%+.2f", (a / b - 1) * 100 }')
  verdict=ok
  if [ "$rcmd" != "$cmd" ]; then
    verdict="reference is for another command ($rcmd)"
  elif [ "$dg" != "$rdg" ]; then
    verdict="RESULTS CHANGED (digest $dg, reference $rdg at $rcommit; events $ev, reference $rev)"
    rc=1
  elif awk -v p="$pct" -v t="$TOL" 'BEGIN { exit !(p > t) }'; then
    verdict="REGRESSION (more than +$TOL % against $rcommit)"
    rc=1
  elif awk -v p="$pct" -v t="$TOL" 'BEGIN { exit !(p < -t) }'; then
    verdict="faster than $rcommit by more than $TOL %: --update the reference"
  fi
  [ "$rcc" != "$ccv" ] && verdict="$verdict (reference compiler: $rcc)"
  printf '%-14s %15s %15s %10s %7s%%  %s\n' "$name" "$ir" "$rir" "$ipe" "$pct" "$verdict"
done
exit $rc
