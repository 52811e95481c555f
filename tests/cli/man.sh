#!/bin/sh
# tests/cli/man.sh: the man page (doc/man.sh: help2man over `tpsplit --help` and doc/tpsplit.x)
# has one EXIT STATUS section, the exit table of `tpsplit --help`, and every option of every
# command's and subcommand's --help (and of the main job's).  Made here from the binary under
# test; skipped (77) where help2man is not installed.
. "$top_srcdir/tests/cli/lib.sh"
command -v help2man >/dev/null 2>&1 || { echo "help2man not installed: skipped"; exit 77; }
sh "$top_srcdir/doc/man.sh" "$TPSPLIT" "$top_srcdir" /usr/share/tpsplit help2man "$tmp/tpsplit.1" >"$tmp/log" 2>&1 &&
  ok || fail "doc/man.sh failed: $(head -c 400 "$tmp/log")"
# the page as text: roff's \- and \e undone
sed -e 's/\\-/-/g' -e 's/\\e/\\/g' -e 's/\\&//g' "$tmp/tpsplit.1" >"$tmp/page"
n=$(grep -c '^\.SH "EXIT STATUS"' "$tmp/page")
[ "$n" -eq 1 ] && ok || fail "$n EXIT STATUS sections, want 1"
n=$(grep -ciE '^\.S[SH] "?exit status' "$tmp/page")
[ "$n" -eq 1 ] && ok || fail "$n exit-status headings (sections or subsections), want 1"
# its rows: the codes of src/base/exit.h
for code in 0 1 2 77 130; do
  sed -n '/^\.SH "EXIT STATUS"/,/^\.SH /p' "$tmp/page" | grep -qE "^  $code[ ,]" && ok || fail "EXIT STATUS lacks $code"
done
# every option of every command's --help is on the page, in that command's section
for c in "" inspect fit "fit --loo-gpu" "fit --xgpu" predict crossover plot simulate decide validate calibrate \
         bench "bench gemm" "bench split" "bench allgather"; do
  if [ -z "$c" ]; then title="tpsplit (the main job)"; h=--no-plots; else title="tpsplit $c"; h=; fi
  # shellcheck disable=SC2086
  "$TPSPLIT" $c $h --help | grep -oE '^  (-[a-zA-Z], )?--[a-z][a-z0-9-]+' | grep -oE -- '--[a-z][a-z0-9-]+' | sort -u >"$tmp/opts"
  [ -s "$tmp/opts" ] || [ "$c" = bench ] || fail "'$c --help' lists no option"
  awk -v t=".SS \"$title\"" '$0 == t { f = 1; next } f && /^\.S[SH] / { exit } f' "$tmp/page" >"$tmp/sect"
  [ -s "$tmp/sect" ] && ok || fail "no section '$title' on the page"
  while read -r o; do
    grep -qE -- "$o([^a-z0-9-]|\$)" "$tmp/sect" || fail "'$title' on the page lacks $o"
  done <"$tmp/opts"
  ok
done
# the page renders
if command -v groff >/dev/null 2>&1; then
  groff -man -Tutf8 "$tmp/tpsplit.1" >"$tmp/txt" 2>"$tmp/gerr" && ok || fail "groff: $(head -c 300 "$tmp/gerr")"
  grep -q 'tpsplit bench allgather' "$tmp/txt" && ok || fail "the rendered page lacks the commands"
fi
finish
