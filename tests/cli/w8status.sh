#!/bin/sh
# tests/cli/w8status.sh: the status table of our W8A16 kernels at the top of doc/gemm-kernels.md
# ("Where our W8A16 kernels stand") says what the bundled tables say.  For each shape the speed
# dense-bf16 / w8a16 (median times of data/h100_w8a16_grid_<K>x<N>_<path>.tsv, same M) is
# recomputed over M <= 64, 128..1024 and M >= 4096, its range printed as the table prints it
# ("lo-hix", two decimals) and looked for in the shape's row; the met/missed words follow the
# targets (1.5x, 1.0x, 0.9x) from the recomputed range; the README's W8A16 limits bullet must quote
# the same ranges.  The M >= 4096 rows of K 7168 below 0.9x, which the row names with their
# speeds, are recomputed from the same tables.
. "$top_srcdir/tests/cli/lib.sh"
doc="$top_srcdir/doc/gemm-kernels.md"
awk '/^\*\*Where our W8A16 kernels stand\*\*/ { f = 1 } f && /^\| [0-9]/ { print } f && /^$/ && n++ > 0 { exit }' "$doc" >"$tmp/rows"
[ "$(wc -l <"$tmp/rows")" -eq 2 ] && ok || fail "doc/gemm-kernels.md: the status table has $(wc -l <"$tmp/rows") shape rows, want 2"
for kn in 5120x1792 7168x2112; do
  k=${kn%x*} n=${kn#*x}
  d="$top_srcdir/data/h100_w8a16_grid_${kn}_dense-bf16.tsv" w="$top_srcdir/data/h100_w8a16_grid_${kn}_w8a16.tsv"
  for f in "$d" "$w"; do [ -r "$f" ] || fail "missing $f"; done
  # rows time_us of both, joined on M; then per band the range and whether it meets the target
  awk -F'\t' 'FNR == 1 { file++ } /^#/ || $1 == "rows" { next } file == 1 { dn[$1] = $2; next }
    ($1 in dn) { r = dn[$1] / $2; b = $1 <= 64 ? 1 : ($1 >= 128 && $1 <= 1024) ? 2 : $1 >= 4096 ? 3 : 0
      if (!b) next; if (!(b in lo) || r < lo[b]) lo[b] = r; if (!(b in hi) || r > hi[b]) hi[b] = r }
    END { split("1.5 1.0 0.9", tgt, " ")
      for (b = 1; b <= 3; b++) printf "%.2f-%.2fx, %s\n", lo[b], hi[b], (lo[b] >= tgt[b] - 1e-9 ? "met" : "missed") }' "$d" "$w" >"$tmp/want"
  [ "$(grep -c x, "$tmp/want")" -eq 3 ] && ok || fail "K $k N $n: the three bands could not be recomputed from $d and $w"
  row=$(grep -F "| $k x $n |" "$tmp/rows")
  [ -n "$row" ] && ok || fail "no status row for $k x $n"
  i=0
  while IFS= read -r cell; do
    i=$((i + 1))
    case "$row" in *"| $cell"*) ok ;; *) fail "K $k N $n band $i: the table's row lacks '$cell' (recomputed from $w): $row" ;; esac
  done <"$tmp/want"
  # the README's limits quote the same ranges (without the verdicts)
  while IFS= read -r cell; do
    r=${cell%%,*}
    awk '/^- Our W8A16 kernels against dense-bf16/ { f = 1 } f && /^$/ { exit } f && /^- / && !/^- Our W8A16/ { exit } f' \
      "$top_srcdir/README.md" | tr '\n' ' ' | grep -qF " $r" && ok || fail "README.md's W8A16 limits lack '$r' (K $k N $n, recomputed from $w)"
  done <"$tmp/want"
done
# the M >= 4096 misses at K 7168, named in its row: "missed at M1 and M2 (s1x, s2x)" from the same tables
d="$top_srcdir/data/h100_w8a16_grid_7168x2112_dense-bf16.tsv" w="$top_srcdir/data/h100_w8a16_grid_7168x2112_w8a16.tsv"
miss=$(awk -F'\t' 'FNR == 1 { file++ } /^#/ || $1 == "rows" { next } file == 1 { dn[$1] = $2; next }
  ($1 in dn) && $1 >= 4096 && dn[$1] / $2 < 0.9 { m = m (m ? " and " : "") $1; s = s (s ? ", " : "") sprintf("%.3fx", dn[$1] / $2) }
  END { if (m) printf "missed at %s (%s)", m, s }' "$d" "$w")
[ -n "$miss" ] && ok || fail "no M >= 4096 below 0.9x at K 7168 in $w: the row's words need a new check"
grep -F "| 7168 x 2112 |" "$tmp/rows" | grep -qF "$miss" && ok || fail "the K 7168 row does not say '$miss' (recomputed from $w)"
finish
