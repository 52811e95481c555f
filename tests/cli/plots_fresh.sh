#!/bin/sh
# tests/cli/plots_fresh.sh: the figures' data committed in plots/ (read by README.md, doc/figures.md
# and their tests/docs cases) are what the main job writes now.  `tpsplit -o DIR` is run with
# gnuplot off (TPSPLIT_GNUPLOT empty: .dat and .gp only); every plots/*.dat and plots/*.gp must
# equal the fresh file but for its '# command:' line, and neither side may have a file the other
# lacks.  A change to the model that moves a figure fails here until `tpsplit -o plots` is rerun
# (and the doc numbers with it, tests/cli/docs.sh).
. "$top_srcdir/tests/cli/lib.sh"
export TPSPLIT_GNUPLOT=
expect_rc 0 "$TPSPLIT" -o "$tmp/p"
( cd "$top_srcdir/plots" && ls -- *.dat *.gp ) | sort >"$tmp/committed"
( cd "$tmp/p" && ls -- *.dat *.gp ) | sort >"$tmp/fresh"
if cmp -s "$tmp/committed" "$tmp/fresh"; then ok; else fail "plots/ and the main job's files differ: $(diff "$tmp/committed" "$tmp/fresh" | tr '\n' ' ')"; fi
n=0
while read -r f; do
  [ -f "$tmp/p/$f" ] || continue
  n=$((n + 1))
  grep -v '^# command: ' "$top_srcdir/plots/$f" >"$tmp/a"; grep -v '^# command: ' "$tmp/p/$f" >"$tmp/b"
  cmp -s "$tmp/a" "$tmp/b" && ok || fail "plots/$f is not what 'tpsplit -o plots' writes now (rerun it): $(diff "$tmp/a" "$tmp/b" | head -4 | tr '\n' ' ')"
done <"$tmp/committed"
[ "$n" -ge 10 ] && ok || fail "only $n figure files compared"
finish
