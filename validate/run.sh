#!/usr/bin/env bash
# make validate: fabsim's figures against published measurements of real clusters.
#
# Each case of validate/cases.json runs fabsim (default settings plus the case's
# --set keys, which describe the measured system, never a tuning knob) and
# compares one figure with the published one. Three shapes of case:
#   point  "runs" and "figure": one or more runs of `run`, `topo` or
#          `reliability`, reduced to one figure by a jq expression;
#          error = fabsim / published - 1, inside target when |error| <= tolerance
#          (defaults by kind: bandwidth 10 %, latency 20 %, step time or MFU 15 %,
#          cost and power 5 %, reliability (MTTF, ETTR) 15 %).
#   band   "curve" and "band": one band of a published nccl-tests curve stored
#          under validate/curves/ (small: sizes below 64 KiB, compared on time,
#          20 %; mid: 64 KiB up to below 64 MiB, on busbw, 10 %; large: 64 MiB
#          and up, on busbw, 10 %). fabsim runs once per size (the case's "runs"
#          plus --set workload.collective.size=SIZE, analytic fidelity; a size
#          shared by several bands runs once). The band's error is the rms over
#          its sizes of ln(fabsim / published), signed by their mean; inside
#          target when exp(rms) - 1 <= tolerance. The table shows the worst size.
#   parts  a point case of kind step with "parts" ({"compute_s", "exposed_comm_s",
#          "bubble_s"}, any subset, from the first run's summary .step): inside
#          target only when the total and every given part are; a part under 5 %
#          of the published step is compared on its share of the step (within 5
#          points), any other on its value (the step tolerance).
# A case outside its target must carry an "explained" text saying why; an
# unexplained miss makes the script exit 1.
#
# Sets (issue 26): every case is "fit" (may inform a default) or "check" (never
# used to set anything), by a fixed rule on its "source_key" that this script
# recomputes for every case before anything runs, and exits 2 naming the case
# whose "set" disagrees (docs/validation.md, "The fit and check sets"):
#   - a case marked "shaped_defaults": true (the 37 cases before issue 26) is fit;
#     its source_key and "also_cites" keys are the fit sources;
#   - a case whose source_key is a fit source is fit;
#   - any other case is check when the first hex digit of
#     printf %s "$source_key" | sha256sum is 0-7, else fit.
# Two tables are printed (fit, then check), each with its pass rate.
#
# Usage: validate/run.sh [--fabsim PATH] [--only REGEX] [--regression]
#                        [--baseline] [--markdown FILE] [--cases FILE]
#   --regression  only the cases marked "regression": true (cheap; make test),
#                 and each must be inside its target (an explanation is no excuse)
#   --baseline    a case added for issue 26 (not shaped_defaults) outside its
#                 target without an explanation is reported as "base" (a miss
#                 recorded at the baseline, docs/validation.md) instead of failing
#   --markdown    also write both tables as Markdown (docs/validation.md keeps them)
#   --cases       read the cases from FILE instead of validate/cases.json (tests)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
fabsim=$here/../build/fabsim
only=.
regression=0
baseline=0
markdown=
cases=$here/cases.json
while [ $# -gt 0 ]; do
  case $1 in
    --fabsim) fabsim=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --regression) regression=1; shift ;;
    --baseline) baseline=1; shift ;;
    --markdown) markdown=$2; shift 2 ;;
    --cases) cases=$2; shift 2 ;;
    *) echo "validate: unknown argument '$1' (see the header of $0)" >&2; exit 2 ;;
  esac
done
command -v jq >/dev/null || { echo "validate: needs jq (make deps)" >&2; exit 2; }
command -v sha256sum >/dev/null || { echo "validate: needs sha256sum (coreutils)" >&2; exit 2; }
case $fabsim in /*) ;; *) fabsim=$PWD/$fabsim ;; esac
[ -x "$fabsim" ] || { echo "validate: no fabsim at $fabsim (make build)" >&2; exit 2; }
jq -e 'type == "array" and length > 0' "$cases" >/dev/null \
  || { echo "validate: $cases is not a non-empty JSON array" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# ---- the set rule, checked for every case before anything runs ----
jq -r '.[] | [.id // "", .set // "", .source_key // "", (.shaped_defaults // false | tostring)] | @tsv' \
  "$cases" >"$work/keys.tsv"
jq -r '.[] | select(.shaped_defaults == true) | .source_key, (.also_cites // [])[]' "$cases" \
  | sort -u >"$work/fit-sources"
key_re='^(github:[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+(#[0-9]+|:[^[:space:]]+)|arxiv:[0-9]{4}\.[0-9]{4,5}|doi:10\.[^[:space:]]+|url:[^[:space:]:/?#]+(/[^[:space:]?#]*[^[:space:]?#/])?)$'
while IFS=$'\t' read -r id set key shaped; do
  [ -n "$id" ] || { echo "validate: a case without an id in $cases" >&2; exit 2; }
  [[ $key =~ $key_re ]] || {
    echo "validate: $id: source_key '$key' is not github:OWNER/REPO#N, github:OWNER/REPO:PATH," \
      "arxiv:NNNN.NNNNN, doi:... or url:HOST/PATH (no scheme, query or trailing slash)" >&2; exit 2; }
  if [ "$shaped" = true ]; then rule=fit why="shaped the defaults (before issue 26)"
  elif grep -qxF -- "$key" "$work/fit-sources"; then rule=fit why="its source is a fit source"
  else
    h=$(printf %s "$key" | sha256sum | cut -c1)
    case $h in [0-7]) rule=check ;; *) rule=fit ;; esac
    why="sha256 of '$key' begins with $h"
  fi
  [ "$set" = "$rule" ] || {
    echo "validate: $id: \"set\" is \"$set\" but the fixed rule gives \"$rule\" ($why);" \
      "cases are never moved between sets (docs/validation.md)" >&2; exit 2; }
done <"$work/keys.tsv"
dups=$(jq -r '.[].id' "$cases" | sort | uniq -d)
[ -z "$dups" ] || { echo "validate: duplicate case ids: $dups" >&2; exit 2; }


# fabsim ARGV... -> the path of its JSON (each distinct command line runs once)
fabsim_json() {
  local key out
  key=$(printf '%s\x1f' "$@" | sha256sum | cut -c1-24)
  out=$work/runs/$key.json
  if [ ! -e "$out" ]; then
    mkdir -p "$work/runs"
    local extra=()
    [ "$1" = run ] && extra=(--set "output.dir=$work/out" --set output.report=false
                             --set output.database=none --quiet)
    if ! "$fabsim" "$@" "${extra[@]}" --json >"$out.tmp" 2>"$work/runs/$key.err"; then
      echo "validate: fabsim $* failed: $(tail -n 3 "$work/runs/$key.err")" >&2
      return 1
    fi
    mv "$out.tmp" "$out"
  fi
  printf '%s\n' "$out"
}

# A curve file -> "size time_us busbw_GBps" per row (out-of-place columns; "-"
# where the format has no such column). nccl-tests output: the columns are found
# by the header line (size ... time algbw busbw ...); a Markdown busbw table
# (| 1K | 0.07 |): its size labels are renderings of powers of two, rounded to
# the nearest one.
curve_rows() {
  awk '
    function pow2(label,   v, u) {
      v = label + 0; u = toupper(substr(label, length(label)))
      if (u == "K") v *= 1024; else if (u == "M") v *= 1048576; else if (u == "G") v *= 1073741824
      return 2 ^ int(log(v) / log(2) + 0.5)
    }
    /^[[:space:]]*#[[:space:]]*(source|cluster|not stated|fit source|rank lines|transcribed|the )/ { next }
    /Avg bus bandwidth/ { done = 1 }
    done { next }
    /^\|[[:space:]]*[0-9.]+[KMG]?[[:space:]]*\|[[:space:]]*[0-9.]+[[:space:]]*\|/ {
      split($0, c, "|"); gsub(/[[:space:]]/, "", c[2]); gsub(/[[:space:]]/, "", c[3])
      printf "%.0f - %s\n", pow2(c[2]), c[3]; next
    }
    !tcol {
      line = $0; sub(/^[[:space:]]*#/, "", line); n = split(line, h, " ")
      for (i = 1; i <= n; i++) if (h[i] == "size") sz = i
      if (sz) for (i = 1; i <= n; i++) {
        if (h[i] == "time" && !tcol) tcol = i
        if (h[i] == "busbw" && !bcol) bcol = i
      }
      if (!(sz && tcol && bcol)) { sz = tcol = bcol = 0 }
      next
    }
    $1 ~ /^[0-9]+$/ && NF >= bcol { printf "%s %s %s\n", $(sz), $(tcol), $(bcol) }
  ' "$1"
}

rows=$work/rows.tsv
: >"$rows"
# one jq call for every case's scalar fields (jq starts slowly; the loop below
# calls it once per case at most)
jq -r --argjson d '{"bandwidth":0.10,"latency":0.20,"step":0.15,"mfu":0.15,"cost":0.05,"power":0.05,"ratio":0.05,"reliability":0.15,"small":0.20,"mid":0.10,"large":0.10}' '
  .[] | [.id, .set, .kind, (.band // ""), (.tolerance // $d[.band // .kind] // "none" | tostring),
         (.explained // ""), (.shaped_defaults // false | tostring), .what, .source, (.unit // ""),
         (.published // "-" | tostring), (.regression // false | tostring), (.curve // ""),
         (.figure // ""), (has("parts") | tostring), (.runs | length | tostring)] | join("\u001f")' "$cases" >"$work/cases.tsv"
mapfile -t objs < <(jq -c '.[]' "$cases")
i=-1
while IFS=$'\x1f' read -r id set kind band tol explained shaped what source unit published regr curve figure parts nruns; do
  i=$((i + 1))
  [[ $id =~ $only ]] || continue
  [ $regression = 0 ] || [ "$regr" = true ] || continue
  [ "$tol" != none ] || { echo "validate: $id: unknown kind '$kind'" >&2; exit 2; }
  c=${objs[$i]}
  ok=1 detail=
  if [ -n "$band" ]; then
    # ---- one band of a curve ----
    case $curve in /*) ;; *) curve=$root/$curve ;; esac
    [ -r "$curve" ] || { echo "validate: $id: no curve file $curve" >&2; exit 2; }
    mapfile -t argv < <(jq -r '.runs[0][]' <<<"$c")
    case $band in
      small) lo=0 hi=65536 unit=us ;; mid) lo=65536 hi=67108864 unit="GB/s busbw" ;;
      large) lo=67108864 hi=1e30 unit="GB/s busbw" ;;
      *) echo "validate: $id: band '$band' is not small, mid or large" >&2; exit 2 ;;
    esac
    curve_rows "$curve" | awk -v lo=$lo -v hi=$hi '$1 > 0 && $1 >= lo && $1 < hi' >"$work/pub.txt"
    [ -s "$work/pub.txt" ] || { echo "validate: $id: $curve has no size in the $band band" >&2; exit 2; }
    files=()
    while read -r size _; do
      if f=$(fabsim_json "${argv[@]}" --set "workload.collective.size=$size"); then files+=("$f"); else ok=0; fi
    done <"$work/pub.txt"
    if [ $ok = 1 ]; then
      jq -r '"\(.collectives[0].time_s * 1e6) \(.collectives[0].busbw_GBps)"' "${files[@]}" >"$work/fab.txt"
      # per size: ln(fabsim / published) on time (small) or busbw (mid, large);
      # a table of busbw alone gives the time ratio as the inverse busbw ratio
      read -r err rms published figure detail < <(paste -d' ' "$work/pub.txt" "$work/fab.txt" | awk -v band=$band '
        function hs(b) {
          if (b >= 1073741824) return sprintf("%g_GiB", b / 1073741824)
          if (b >= 1048576) return sprintf("%g_MiB", b / 1048576)
          if (b >= 1024) return sprintf("%g_KiB", b / 1024)
          return sprintf("%d_B", b) }
        { s = $1; tp = $2; bp = $3; tf = $4; bf = $5
          if (band == "small") {
            if (tp != "-") { r = log(tf / tp); p = tp; f = tf }
            else if (bp > 0) { r = log(bp / bf); p = "-"; f = tf }
            else next
          } else { if (bp <= 0) next; r = log(bf / bp); p = bp; f = bf }
          k++; sum += r; sq += r * r
          if (k == 1 || (r < 0 ? -r : r) > wa) { wa = (r < 0 ? -r : r); wr = r; ws = s; wp = p; wf = f }
          if (k == 1) first = s; last = s }
        END {
          if (!k) { print "nan nan - - -"; exit }
          rms = sqrt(sq / k); sgn = (sum < 0 ? -rms : rms)
          printf "%.6f %.6f %s %.6g %d_sizes_%s-%s,_worst_%s:_%+.1f%%\n", exp(sgn) - 1, rms, wp, wf,
            k, hs(first), hs(last), hs(ws), 100 * (exp(wr) - 1) }')
      detail=${detail//_/ }
      status=$(awk -v r="$rms" -v t="$tol" 'BEGIN { print (r != "nan" && exp(r) - 1 <= t) ? "ok" : "out" }')
    else err=nan published=- figure=- status=out; fi
  else
    # ---- a point case (training cases may carry parts) ----
    files=()
    for ((k = 0; k < nruns; k++)); do
      mapfile -t argv < <(jq -r ".runs[$k][]" <<<"$c")
      if f=$(cd "$root" && fabsim_json "${argv[@]}"); then files+=("$f"); else ok=0; fi
    done
    if [ $ok = 1 ]; then
      figure=$(jq -s "$figure" "${files[@]}") || figure=null
    else figure=null; fi
    read -r err status < <(awk -v f="$figure" -v p="$published" -v t="$tol" 'BEGIN {
      if (f == "null" || f == "") { print "nan", "out"; exit }
      r = f / p - 1; a = r < 0 ? -r : r; print r, (a <= t ? "ok" : "out") }')
    if [ $ok = 1 ] && [ "$parts" = true ]; then
      # each given part of the step, against the first run's summary
      read -r pstat detail < <(jq -r --argjson P "$published" --argjson t "$tol" --slurpfile s "${files[0]}" '
        .parts as $parts | $s[0].step as $st
        | [ $parts | to_entries[] | .key as $k | .value as $p | ($st[$k] // null) as $f
            | if $f == null then {ok: false, txt: "\($k): fabsim has no .step.\($k)"}
              elif $p < 0.05 * $P then
                (($f / $st.time_s - $p / $P) * 100) as $d
                | {ok: (($d | fabs) <= 5), txt: "\($k | sub("_s$"; "")) \($f * 1000 | round / 1000)/\($p) s (share \($d * 10 | round / 10 | tostring) pt)"}
              else (($f / $p - 1) * 100) as $e
                | {ok: (($e | fabs) <= $t * 100), txt: "\($k | sub("_s$"; "")) \($f * 1000 | round / 1000)/\($p) s (\($e * 10 | round / 10 | tostring) %)"}
              end ]
        | "\(if all(.[]; .ok) then "ok" else "out" end) parts: \([.[].txt] | join(", "))"' <<<"$c")
      [ "$pstat" = ok ] || status=out
    fi
  fi
  # the status: ok, miss (explained), base (--baseline: issue 26's case, not yet
  # explained), FAIL
  if [ "$status" != ok ]; then
    if [ -n "$explained" ] && [ $regression = 0 ]; then status=miss
    elif [ $baseline = 1 ] && [ "$shaped" != true ] && [ $regression = 0 ]; then status=base
    else status=FAIL; fi
  fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$id" "$what" "$unit" "$published" \
    "$figure" "$err" "$tol" "$status" "$source" "$explained" "$set" "$detail" >>"$rows"
done <"$work/cases.tsv"

# ---- the tables: fit, then check ----
table() { # set
  awk -F'\t' -v s="$1" 'BEGIN { printf "%-34s %-46s %10s %10s %8s %6s  %s\n", "case", "what", "published", "fabsim", "error", "target", "" }
    $11 == s { fig = ($5 == "null" || $5 == "-") ? "-" : sprintf("%.4g", $5)
      pub = ($4 == "-") ? "-" : sprintf("%.4g", $4)
      er = ($6 == "nan") ? "-" : sprintf("%+.1f%%", 100 * $6)
      printf "%-34s %-46s %10s %10s %8s %5.0f%%  %-4s %s%s\n", $1, substr($2, 1, 46), pub, fig, er, 100 * $7, $8, $3,
        ($12 == "" ? "" : "; " $12) }' "$rows"
}
rate() { # set -> "N of M inside target"
  awk -F'\t' -v s="$1" '$11 == s { m++; if ($8 == "ok") k++ }
    END { printf "%s: %d of %d inside target", s, k, m; if (s == "check" && m) printf " (%.0f %%)", 100 * k / m; print "" }' "$rows"
}
for s in fit check; do
  echo "== $s set"
  table $s
  echo
done
oks=$(awk -F'\t' '$8 == "ok"' "$rows" | wc -l)
misses=$(awk -F'\t' '$8 == "miss"' "$rows" | wc -l)
bases=$(awk -F'\t' '$8 == "base"' "$rows" | wc -l)
fails=$(awk -F'\t' '$8 == "FAIL"' "$rows" | wc -l)
echo "validate: $oks inside target, $misses explained misses, $bases baseline misses, $fails unexplained failures"
if [ "$misses" -gt 0 ]; then
  echo "explained misses:"
  awk -F'\t' '$8 == "miss" { printf "  %s: %s\n", $1, $10 }' "$rows"
fi
rate fit
rate check
if [ -n "$markdown" ]; then
  {
    for s in fit check; do
      echo "#### The $s set"
      echo
      echo "| case | what | unit | published | fabsim | error | target | status | detail | source |"
      echo "|---|---|---|---:|---:|---:|---:|---|---|---|"
      awk -F'\t' -v s=$s '$11 == s { fig = ($5 == "null" || $5 == "-") ? "-" : sprintf("%.4g", $5)
        pub = ($4 == "-") ? "-" : sprintf("%.4g", $4)
        er = ($6 == "nan") ? "-" : sprintf("%+.1f %%", 100 * $6)
        printf "| %s | %s | %s | %s | %s | %s | %.0f %% | %s | %s | %s |\n", $1, $2, $3, pub, fig, er, 100 * $7, $8, $12, $9 }' "$rows"
      echo
      rate $s
      echo
    done
  } >"$markdown"
fi
[ "$fails" = 0 ]
