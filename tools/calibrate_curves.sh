#!/bin/bash
# fabsim calibrate on every stored curve of the validation table, each file
# alone, with the --set keys of its first case in validate/cases.json
# (workload.collective.op left out); prints one markdown row a file: rms of
# ln(fitted / measured time) before -> after, rows, in the small (< 64 KiB,
# target 0.10) and large (>= 64 KiB, target 0.05) ranges, and the
# algorithms kept. usage: tools/calibrate_curves.sh [FABSIM]
set -eu
SRC=$(cd "$(dirname "$0")/.." && pwd)
FABSIM=$(realpath "${1:-$SRC/build/fabsim}")
WORK=$(mktemp -d); trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
echo "| file | < 64 KiB (target 0.10) | >= 64 KiB (target 0.05) | kept |"
echo "|---|---|---|---|"
for f in $(jq -r '[.[] | select(.curve) | .curve] | unique[]' "$SRC/validate/cases.json"); do
  mapfile -t args < <(jq -r --arg c "$f" '[.[] | select(.curve == $c)][0].runs[0][1:] as $a
      | [range(0; $a | length; 2) as $i | select($a[$i+1] | startswith("workload.collective.op=") | not)
         | $a[$i], $a[$i+1]] | .[]' "$SRC/validate/cases.json")
  gpu=()
  printf '%s\n' "${args[@]}" | grep -q '^cluster.gpu=' || gpu=(--set cluster.gpu=H100)
  if ! "$FABSIM" calibrate "$SRC/$f" "${args[@]}" "${gpu[@]}" -o out.yaml --json >o.json 2>e.txt; then
    echo "| $(basename "$f" .txt) | refused: $(head -c 120 e.txt | tr '\n|' '  ') | | |"; continue
  fi
  jq -r --arg n "$(basename "$f" .txt)" '
    def r(x): if x.rows == 0 then "-" else
      "\(x.rms_log_residual_before*1000|round/1000) -> \(x.rms_log_residual_after*1000|round/1000) (\(x.rows))\(if x.met then " met" else "" end)" end;
    "| \($n) | \(r(.files[0].small)) | \(r(.files[0].large)) | \(.algorithms.kept // .algorithms | tostring | .[0:40]) |"' o.json
done
