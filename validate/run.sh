#!/usr/bin/env bash
# make validate: fabsim's figures against published measurements of real clusters.
#
# Each case of validate/cases.json runs fabsim (one or more runs of `run` or
# `topo`, default settings plus the case's --set keys, which describe the
# measured system, never a tuning knob), reduces the runs' JSON to one figure
# with a jq expression, and compares it with the published figure:
#   error = fabsim / published - 1; inside target when |error| <= tolerance
# (defaults by kind: bandwidth 10 %, latency 20 %, step time or MFU 15 %,
# cost and power 5 %, reliability (MTTF, ETTR) 15 %). A case outside its target must carry an "explained"
# text saying why; an unexplained miss makes the script exit 1.
#
# Usage: validate/run.sh [--fabsim PATH] [--only REGEX] [--regression]
#                        [--markdown FILE]
#   --regression  only the cases marked "regression": true (cheap; make test),
#                 and each must be inside its target (an explanation is no excuse)
#   --markdown    also write the table as Markdown (docs/validation.md keeps it)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
fabsim=$here/../build/fabsim
only=.
regression=0
markdown=
while [ $# -gt 0 ]; do
  case $1 in
    --fabsim) fabsim=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --regression) regression=1; shift ;;
    --markdown) markdown=$2; shift 2 ;;
    *) echo "validate: unknown argument '$1' (see the header of $0)" >&2; exit 2 ;;
  esac
done
command -v jq >/dev/null || { echo "validate: needs jq (make deps)" >&2; exit 2; }
[ -x "$fabsim" ] || { echo "validate: no fabsim at $fabsim (make build)" >&2; exit 2; }
cases=$here/cases.json
jq -e 'type == "array" and length > 0' "$cases" >/dev/null \
  || { echo "validate: $cases is not a non-empty JSON array" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

tolerance_of() { # kind -> default tolerance
  case $1 in
    bandwidth) echo 0.10 ;; latency) echo 0.20 ;; step|mfu) echo 0.15 ;;
    cost|power|ratio) echo 0.05 ;; reliability) echo 0.15 ;;
    *) echo "validate: unknown kind '$1'" >&2; exit 2 ;;
  esac
}

rows=$work/rows.tsv
: >"$rows"
fails=0 misses=0 oks=0
n=$(jq length "$cases")
for ((i = 0; i < n; i++)); do
  c=$(jq -c ".[$i]" "$cases")
  id=$(jq -r .id <<<"$c")
  [[ $id =~ $only ]] || continue
  if [ $regression = 1 ] && [ "$(jq -r '.regression // false' <<<"$c")" != true ]; then continue; fi
  kind=$(jq -r .kind <<<"$c")
  tol=$(jq -r --arg d "$(tolerance_of "$kind")" '.tolerance // ($d | tonumber)' <<<"$c")
  published=$(jq -r .published <<<"$c")
  # every run of the case, its JSON in $work/$id.K.json
  runs=$(jq '.runs | length' <<<"$c")
  ok=1
  for ((k = 0; k < runs; k++)); do
    mapfile -t argv < <(jq -r ".runs[$k][]" <<<"$c")
    verb=${argv[0]}
    extra=()
    [ "$verb" = run ] && extra=(--set "output.dir=$work/out" --set output.report=false
                                --set output.database=none --quiet)
    if ! "$fabsim" "${argv[@]}" "${extra[@]}" --json >"$work/$id.$k.json" 2>"$work/$id.$k.err"; then
      ok=0
      echo "validate: $id: fabsim ${argv[*]} failed: $(tail -n 3 "$work/$id.$k.err")" >&2
    fi
  done
  if [ $ok = 1 ]; then
    figure=$(jq -s "$(jq -r .figure <<<"$c")" "$work/$id".*.json) || figure=null
  else
    figure=null
  fi
  explained=$(jq -r '.explained // ""' <<<"$c")
  read -r err status < <(awk -v f="$figure" -v p="$published" -v t="$tol" -v e="$explained" \
      -v strict=$regression 'BEGIN {
    if (f == "null" || f == "") { print "nan", (e != "" && !strict ? "miss" : "FAIL"); exit }
    r = f / p - 1; a = r < 0 ? -r : r
    print r, (a <= t ? "ok" : (e != "" && !strict ? "miss" : "FAIL")) }')
  case $status in ok) oks=$((oks + 1)) ;; miss) misses=$((misses + 1)) ;; *) fails=$((fails + 1)) ;; esac
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$id" "$(jq -r .what <<<"$c")" \
    "$(jq -r .unit <<<"$c")" "$published" "$figure" "$err" "$tol" "$status" \
    "$(jq -r .source <<<"$c")" "$explained" >>"$rows"
done

# the terminal table
awk -F'\t' 'BEGIN { printf "%-22s %-52s %11s %11s %8s %6s  %s\n", "case", "what", "published", "fabsim", "error", "target", "" }
  { fig = ($5 == "null") ? "-" : sprintf("%.4g", $5)
    er = ($6 == "nan") ? "-" : sprintf("%+.1f%%", 100 * $6)
    printf "%-22s %-52s %11s %11s %8s %5.0f%%  %s %s\n", $1, substr($2, 1, 52), sprintf("%.4g", $4), fig, er, 100 * $7, $8, $3 }' "$rows"
echo "validate: $oks inside target, $misses explained misses, $fails unexplained failures"
if [ $misses -gt 0 ]; then
  echo "explained misses:"
  awk -F'\t' '$8 == "miss" { printf "  %s: %s\n", $1, $10 }' "$rows"
fi
if [ -n "$markdown" ]; then
  {
    echo "| case | what | unit | published | fabsim | error | target | status | source |"
    echo "|---|---|---|---:|---:|---:|---:|---|---|"
    awk -F'\t' '{ fig = ($5 == "null") ? "-" : sprintf("%.4g", $5)
      er = ($6 == "nan") ? "-" : sprintf("%+.1f %%", 100 * $6)
      printf "| %s | %s | %s | %.4g | %s | %s | %.0f %% | %s | %s |\n", $1, $2, $3, $4, fig, er, 100 * $7, $8, $9 }' "$rows"
  } >"$markdown"
fi
[ $fails = 0 ]
