# Console blocks of a document, run and compared: sourced by test_readme.sh and
# test_tour.sh after lib.sh. A block is a ```console fence whose first line is
# "$ CMD" (CMD starting with "fabsim " or "./build/fabsim "); the lines after
# it are the output the document shows. A line that is "..." alone (any
# indent) stands for any number of lines; "..." inside a line for any text.
# Every other line must be the output's, in order, trailing blanks aside, and
# the output must end where the block does unless the block ends with "...".
# A block of the command alone only has to succeed. Success is exit 0, or 4
# (the simulated job failed: a result the document may show, fabsim --help).

# doc_blocks DOC DIR: DIR/N.cmd (the command, fabsim's path as "fabsim") and
# DIR/N.want (the shown output) for every console block of DOC, in order.
doc_blocks() {
  mkdir -p "$2"
  awk -v dir="$2" '
    /^```console/ { inb = 1; first = 1; next }
    /^```/ && inb { inb = 0; next }
    inb && first {
      first = 0
      if ($0 !~ /^\$ (\.\/build\/)?fabsim /) { inb = 0; next }
      n++; cmd = $0; sub(/^\$ (\.\/build\/)?/, "", cmd)
      print cmd > (dir "/" n ".cmd"); close(dir "/" n ".cmd")
      printf "" > (dir "/" n ".want")
      next
    }
    inb { print >> (dir "/" n ".want") }
  ' "$1"
}

# block_matches WANT GOT: exit 0 when GOT (a file of output) is what WANT shows.
block_matches() {
  awk '
    function rtrim(s) { sub(/[ \t]+$/, "", s); return s }
    # one line against a shown line with "..." inside it
    function line_ok(w, a,    parts, k, np, pos, p) {
      if (index(w, "...") == 0) return w == a
      np = split(w, parts, /\.\.\./)
      if (substr(a, 1, length(parts[1])) != parts[1]) return 0
      pos = length(parts[1]) + 1
      for (k = 2; k < np; k++) {
        p = index(substr(a, pos), parts[k]); if (p == 0) return 0
        pos += p - 1 + length(parts[k])
      }
      return length(a) - pos + 1 >= length(parts[np]) && \
             substr(a, length(a) - length(parts[np]) + 1) == parts[np]
    }
    FNR == NR { m++; W[m] = rtrim($0); wild[m] = (W[m] ~ /^[ \t]*\.\.\.$/); next }
    { n++; A[n] = rtrim($0) }
    END {
      # ok[i, j]: W[i..m] matches A[j..n]
      for (i = m + 1; i >= 1; i--)
        for (j = n + 1; j >= 1; j--) {
          if (i > m) { ok[i, j] = (j > n); continue }
          if (wild[i]) { ok[i, j] = ok[i + 1, j] || (j <= n && ok[i, j + 1]); continue }
          ok[i, j] = j <= n && line_ok(W[i], A[j]) && ok[i + 1, j + 1]
        }
      exit !ok[1, 1]
    }
  ' "$1" "$2"
}

# check_doc DOC: every console block of DOC (in $SRC) runs from the current
# folder (where examples/ is the source tree's) and prints what DOC shows.
check_doc() {
  local doc=$1 dir n cmd i rc
  dir=blocks-$(basename "$doc" .md)
  doc_blocks "$SRC/$doc" "$dir"
  [ -e "$dir/1.cmd" ] || { fail "$doc: no console block"; return; }
  for ((i = 1; ; i++)); do
    n=$dir/$i cmd=$dir/$i.cmd
    [ -e "$cmd" ] || break
    # as a shell line (quotes, pipes), fabsim being the binary under test
    fabsim() { "$FABSIM" "$@"; }
    (eval "$(cat "$cmd")") >"$n.got" 2>"$n.err"
    rc=$?
    if [ $rc != 0 ] && [ $rc != 4 ]; then
      fail "$doc: '$(cat "$cmd")' exited $rc: $(head -c 300 "$n.err")"
      continue
    fi
    if [ ! -s "$n.want" ] || block_matches "$n.want" "$n.got"; then pass; else
      fail "$doc: '$(cat "$cmd")' prints other than the document shows:
$(diff "$n.want" "$n.got" | head -30)"
    fi
  done
}
