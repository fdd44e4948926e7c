#!/usr/bin/env bash
# The link graph against docs/architecture.md's module map: every symbol an
# object file of module M uses from another module N (nm: undefined in M's
# object, defined in N's) must be an edge M -> N that M's row allows ("may
# include"), so the map cannot miss an edge the linker sees. And no
# namesakes: every global symbol a module defines starts with one of its
# row's prefixes (main aside), and no module has a file-local symbol (a
# static function or variable) named like another module's global one.
# Edges the map allows but no symbol uses are printed, not failed: a module
# may include a header for its types alone.
# Usage: test_links.sh SOURCE_DIR BUILD_DIR
set -u
src=${1:?usage: test_links.sh SOURCE_DIR BUILD_DIR}
build=${2:?usage: test_links.sh SOURCE_DIR BUILD_DIR}
doc="$src/docs/architecture.md"
NM=${NM:-nm}
command -v gcc-nm >/dev/null && NM=gcc-nm # reads LTO objects

declare -A allow prefixes
while IFS='|' read -r _ folder prefix _ may _; do
  folder=$(echo "$folder" | tr -d ' `'); m=${folder#src/}
  may=$(echo "$may" | tr -d ' '); [ "$may" = "-" ] && may=""
  allow[$m]=",$m,$may,"
  prefixes[$m]=$(echo "$prefix" | tr -d ' ')
done < <(grep -E '^\| src/[a-z_]+ \|' "$doc")

fail=0
complain() { echo "$1"; fail=1; }

# The objects: the library's modules, then the verbs (the fabsim executable).
objs=$(mktemp); trap 'rm -f "$objs" "$defs" "$uses" "$locals"' EXIT
defs=$(mktemp); uses=$(mktemp); locals=$(mktemp)
for d in "$build"/CMakeFiles/fabsim_lib.dir/src/*/ "$build"/CMakeFiles/fabsim.dir/src/*/; do
  [ -d "$d" ] || continue
  m=$(basename "$d")
  for o in "$d"*.o; do [ -f "$o" ] && echo "$m $o"; done
done > "$objs"
[ -s "$objs" ] || { echo "no object files under $build/CMakeFiles (build fabsim first)"; exit 1; }

while read -r m o; do
  [ -n "${allow[$m]:-}" ] || { complain "src/$m: no row in docs/architecture.md's module map"; continue; }
  "$NM" "$o" 2>/dev/null | awk -v m="$m" -v f="${o#"$build"/}" -v D="$defs" -v U="$uses" -v L="$locals" '
    $1 == "U" { print m, $2, f >> U; next }
    NF >= 3 && $2 ~ /^[TDBRGSC]$/ { print m, $3, f >> D; next }
    NF >= 3 && $2 ~ /^[tdbrgs]$/ && $3 !~ /\./ { print m, $3, f >> L }'
done < "$objs"

declare -A owner
while read -r m s f; do
  if [ -n "${owner[$s]:-}" ] && [ "${owner[$s]}" != "$m" ]; then
    complain "$s: defined by both ${owner[$s]} and $m ($f)"
  fi
  owner[$s]=$m
  [ "$s" = main ] && continue
  ok=0
  IFS=, read -ra ps <<< "${prefixes[$m]}"
  for p in "${ps[@]}"; do [[ $s == "$p"* ]] && ok=1; done
  [ $ok = 1 ] || complain "$f: global $s lacks module $m's prefix (${prefixes[$m]})"
done < "$defs"

declare -A seen used
while read -r m s f; do
  n=${owner[$s]:-}
  [ -n "$n" ] && [ "$n" != "$m" ] || continue
  used[$m:$n]=1
  [ -n "${seen[$m:$n]:-}" ] && continue
  seen[$m:$n]=1
  [[ ${allow[$m]} == *",$n,"* ]] ||
    complain "$f: module $m uses $s of module $n; its row in docs/architecture.md allows:${allow[$m]//,/ }"
done < "$uses"

while read -r m s f; do
  n=${owner[$s]:-}
  [ -n "$n" ] && [ "$n" != "$m" ] &&
    complain "$f: file-local $s of module $m is a namesake of module $n's global one"
done < "$locals"

# Namesakes in the source: a static function named with another module's
# prefix (the compiler may inline it away, so nm cannot see it).
for d in "$src"/src/*/; do
  m=$(basename "$d")
  [ -n "${prefixes[$m]:-}" ] || continue
  for f in "$d"*.c "$d"*.h; do
    [ -f "$f" ] || continue
    while IFS=: read -r ln name; do
      IFS=, read -ra own <<< "${prefixes[$m]}"
      mine=0
      for p in "${own[@]}"; do [[ $name == "$p"* ]] && mine=1; done
      [ $mine = 1 ] && continue
      for n in "${!prefixes[@]}"; do
        [ "$n" = "$m" ] && continue
        IFS=, read -ra theirs <<< "${prefixes[$n]}"
        for p in "${theirs[@]}"; do
          [[ $name == "$p"* ]] &&
            complain "${f#"$src"/}:$ln: static $name of module $m carries module $n's prefix $p"
        done
      done
    done < <(grep -nE '^static[[:space:]]+(inline[[:space:]]+)?[A-Za-z_][A-Za-z0-9_ *]*[[:space:]*]([a-z][a-z0-9_]*)[[:space:]]*\(' "$f" |
             sed -E 's/^([0-9]+):static[[:space:]]+(inline[[:space:]]+)?[A-Za-z_][A-Za-z0-9_ *]*[[:space:]*]([a-z][a-z0-9_]*)[[:space:]]*\(.*/\1:\3/')
  done
done

for m in "${!allow[@]}"; do
  IFS=, read -ra ns <<< "${allow[$m]}"
  for n in "${ns[@]}"; do
    [ -n "$n" ] && [ "$n" != "$m" ] && [ -z "${used[$m:$n]:-}" ] &&
      echo "note: $m may include $n, and no symbol of $n is linked from it (types or inline functions only)"
  done
done | sort

[ $fail = 0 ] && echo "link graph within the module map" || exit 1
