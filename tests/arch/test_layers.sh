#!/usr/bin/env bash
# Every #include of src/ and include/fabsim/ against docs/architecture.md's
# module map: a file of module M may include its own private headers and the
# public headers of M and of the modules M's row allows; the "Debts" table
# lists the exceptions still allowed. A new folder or public header must be
# added to the map first.
# Usage: test_layers.sh SOURCE_DIR
set -u
src=${1:?usage: test_layers.sh SOURCE_DIR}
doc="$src/docs/architecture.md"
[ -f "$doc" ] || { echo "missing $doc"; exit 1; }

declare -A allow header debt
# | src/M | prefix | owns | may include |
while IFS='|' read -r _ folder _ _ may _; do
  folder=$(echo "$folder" | tr -d ' `'); m=${folder#src/}
  may=$(echo "$may" | tr -d ' '); [ "$may" = "-" ] && may=""
  allow[$m]=",$m,$may,"
done < <(grep -E '^\| src/[a-z_]+ \|' "$doc")
# | fabsim/x.h | module |
while IFS='|' read -r _ h m _; do
  header[$(echo "$h" | tr -d ' ')]=$(echo "$m" | tr -d ' ')
done < <(grep -E '^\| fabsim/[a-z_]+\.h \|' "$doc")
# | module | header | why |  (debts)
while IFS='|' read -r _ m h _; do
  debt["$(echo "$m" | tr -d ' '):$(echo "$h" | tr -d ' ')"]=1
done < <(sed -n '/^## Debts/,$p' "$doc" | grep -E '^\| [a-z_]+ \| [a-z_]+/[a-z_]+\.h \|')

fail=0
complain() { echo "$1"; fail=1; }

check_file() { # file module
  local f=$1 m=$2 line inc to
  while IFS= read -r line; do
    inc=${line#*\"}; inc=${inc%%\"*}
    case $inc in
      fabsim/*)
        to=${header[$inc]:-}
        [ -n "$to" ] || { complain "$f: $inc is not in docs/architecture.md's header table"; continue; } ;;
      */*) to=${inc%%/*}
        if [ "$to" != "$m" ] && [ -z "${debt[$m:$inc]:-}" ]; then
          complain "$f: includes $inc, a private header of $to (only $to's files may)"
        fi
        continue ;;
      *) continue ;; # beside the file
    esac
    if [[ ${allow[$m]} != *",$to,"* ]] && [ -z "${debt[$m:$inc]:-}" ]; then
      complain "$f: module $m includes $inc ($to); its row in docs/architecture.md allows:${allow[$m]//,/ }"
    fi
  done < <(grep -E '^[[:space:]]*#[[:space:]]*include[[:space:]]+"' "$f")
}

for d in "$src"/src/*/; do
  m=$(basename "$d")
  [ -n "${allow[$m]:-}" ] || { complain "src/$m: no row in docs/architecture.md's module map"; continue; }
  for f in "$d"*.c "$d"*.h; do [ -f "$f" ] && check_file "$f" "$m"; done
done
for f in "$src"/include/fabsim/*.h; do
  h="fabsim/$(basename "$f")"; m=${header[$h]:-}
  [ -n "$m" ] || { complain "$h: not in docs/architecture.md's header table"; continue; }
  check_file "$f" "$m"
done
# the map itself has no cycle between folders: a may-include edge back is an error
for a in "${!allow[@]}"; do
  for b in $(echo "${allow[$a]}" | tr ',' ' '); do
    [ "$a" = "$b" ] && continue
    if [[ ${allow[$b]:-} == *",$a,"* ]]; then complain "map cycle: $a may include $b and $b may include $a"; fi
  done
done
[ $fail = 0 ] && echo "layers: ${#allow[@]} modules, every include inside the map"
exit $fail
