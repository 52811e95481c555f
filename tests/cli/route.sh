#!/bin/sh
# tests/cli/route.sh: doc/architecture.md's "The route of one datum" is true (issue 26 item 8).
#  - every function its table names (in backticks) is defined in the file of its row;
#  - the table's distinct files are as many as the doc says ("Route files: **N**"), and at most
#    ROUTE_MAX when that is set (tests/cli/route_target.sh: 6, the issue's target);
#  - with gdb: the doc's command run, from where the log enters the part set, with a breakpoint
#    (once) on each function: every function is reached, in the file of its row, and no src/ or
#    model/ file in their call stacks is missing from the table (src/cli/main.c, the dispatcher,
#    aside): the files come from the real call path.
. "$top_srcdir/tests/cli/lib.sh"
doc="$top_srcdir/doc/architecture.md"
awk '/^## The route of one datum/ { f = 1; next } /^## / { f = 0 } f && /^\| [0-9]+ \|/' "$doc" >"$tmp/rows"
[ -s "$tmp/rows" ] && ok || fail "no route table in $doc"
# "file<TAB>function" per function named on a row
awk -F'|' '{ files = ""; s = $3; while (match(s, /`[^`]+`/)) { files = files " " substr(s, RSTART + 1, RLENGTH - 2); s = substr(s, RSTART + RLENGTH) }
  s = $4; while (match(s, /`[a-z_][a-z0-9_]*`/)) { print files "\t" substr(s, RSTART + 1, RLENGTH - 2); s = substr(s, RSTART + RLENGTH) } }' \
  "$tmp/rows" | sed 's/^ //' >"$tmp/fns"
[ "$(wc -l <"$tmp/fns")" -ge 6 ] && ok || fail "fewer than 6 functions read from the route table"
while IFS='	' read -r files fn; do
  found=0
  for f in $files; do
    [ -f "$top_srcdir/$f" ] || { fail "route table: no file $f"; continue; }
    grep -qE "^[A-Za-z].*[ *]$fn\\(" "$top_srcdir/$f" && found=1
  done
  [ "$found" -eq 1 ] && ok || fail "route table: $fn is not defined in $files"
done <"$tmp/fns"
cut -f1 "$tmp/fns" | tr ' ' '\n' | sed '/^$/d' | sort -u >"$tmp/files"
n=$(wc -l <"$tmp/files" | tr -d ' ')
said=$(sed -n 's/^Route files: \*\*\([0-9]*\)\*\*.*/\1/p' "$doc")
[ "$n" = "$said" ] && ok || fail "the route table has $n distinct files, the doc says '${said:-nothing}' (Route files: **N**)"
if [ -n "${ROUTE_MAX:-}" ]; then
  [ "$n" -le "$ROUTE_MAX" ] && ok || fail "the route crosses $n files, more than $ROUTE_MAX"
fi

# the real call path, where gdb can run the binary
if command -v gdb >/dev/null 2>&1 && [ -z "${ROUTE_MAX:-}" ]; then
  { # stop where the log enters the part set, then a breakpoint (once) on each function of the table
    echo 'set pagination off'; echo 'set confirm off'
    echo 'break tps_partset_user_gather'; echo 'run'; echo 'bt'; echo 'delete'
    cut -f2 "$tmp/fns" | sort -u | while read -r fn; do
      printf 'tbreak %s\ncommands\nsilent\nbt\ncontinue\nend\n' "$fn"
    done
    echo 'continue'; echo 'quit'
  } >"$tmp/gdb.cmd"
  timeout 300 gdb -q -batch -x "$tmp/gdb.cmd" --args "$TPSPLIT" predict --gpu H20 --tp 8 --path dense-bf16 \
    --gather "nccl=$top_srcdir/tests/data/ncclt/current.txt" >"$tmp/gdb.out" 2>&1
  top='s#^\(.*/\)\{0,1\}\(\(src\|model\)/.*\)$#\2#p' # a source file from the top of the tree, as the build named it
  if grep -q '^#0 ' "$tmp/gdb.out"; then
    sed -n 's/^#[0-9]* *\(0x[0-9a-f]* in \)\{0,1\}\([a-z_][a-z0-9_]*\) .*/\2/p' "$tmp/gdb.out" | sort -u >"$tmp/hit"
    # where each was reached: the file of its row
    sed -n 's/^#0 *\(0x[0-9a-f]* in \)\{0,1\}\([a-z_][a-z0-9_]*\) .* at \(.*\):[0-9]*$/\2 \3/p' "$tmp/gdb.out" |
      while read -r fn at; do
        rel=$(echo "$at" | sed -n "$top")
        grep "	$fn\$" "$tmp/fns" | cut -f1 | tr ' ' '\n' | grep -qx "$rel" && ok || fail "route table: $fn was reached in $at, not in its row's file"
      done
    cut -f2 "$tmp/fns" | sort -u >"$tmp/want"
    missed=$(comm -23 "$tmp/want" "$tmp/hit" | paste -sd' ' -)
    [ -z "$missed" ] && ok || fail "route table: never reached on the real call path: $missed"
    grep '^#[0-9]' "$tmp/gdb.out" | sed -n 's/.* at \(.*\):[0-9]*$/\1/p' | sed -n "$top" |
      sort -u | grep -vx 'src/cli/main.c' >"$tmp/stack"
    extra=$(comm -23 "$tmp/stack" "$tmp/files" | paste -sd' ' -)
    [ -z "$extra" ] && ok || fail "files on the real call path that the route table leaves out: $extra"
  else
    echo "route.sh: gdb ran no breakpoint here (no debug info, no ptrace?): the call path is not checked"
  fi
elif [ -z "${ROUTE_MAX:-}" ]; then
  echo "route.sh: no gdb: the call path is not checked"
fi
echo "route: $n files"
finish
