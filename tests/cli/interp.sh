#!/bin/sh
# tests/cli/interp.sh: interpolation that knows GEMMs (issue 27 item 8), measured by
# tools/interp/interp_loo.sh: every second row of each dense table left out and predicted by
# `tpsplit predict --gemm HALF`.  Asserts the numbers doc/fitting.md gives (pooled median and
# max over the 32 tables; before, with the monotone log-log curve of main a1d1dc7: 1.86% and
# 137.4%), the rows left out counted from the raw files, and one value checked against a
# straight log-log line computed here from the raw table.
. "$top_srcdir/tests/cli/lib.sh"
sh "$top_srcdir/tools/interp/interp_loo.sh" "$TPSPLIT" > "$tmp/loo" 2> "$tmp/looerr"
[ $? -eq 0 ] && ok || fail "interp_loo.sh failed: $(head -c 300 "$tmp/looerr")"
n=$(grep -c '^2026\|^gemm_' "$tmp/loo")
[ "$n" -eq 32 ] && ok || fail "$n tables, want 32 (8 bench, 24 AIConfigurator)"
# left out per bench table: every second of its rows, the last always kept = floor((rows - 1) / 2)
f="$top_srcdir/data/calibrate/2026-12-05-run3/dense_5120x1792_dense-bf16.tsv"
want=$(awk -F'\t' '!/^#/ && $1 ~ /^[0-9]/ { n++ } END { print int((n - 1) / 2) }' "$f")
got=$(awk -F'\t' '$1 == "2026-12-05-run3/dense_5120x1792_dense-bf16" { print $2 }' "$tmp/loo")
[ "$got" = "$want" ] && ok || fail "run3 5120x1792 bf16: $got rows left out, want $want"
# pooled (the model's shape and falling twins merged, model/predict/parts.c): median <= 1.75%,
# max <= 110% (measured 1.69%, 105.6%; the log-log curve of every raw row before: 1.86%, 137.4%)
med=$(awk -F'\t' '$1 == "all" { sub(/%/, "", $3); print $3 }' "$tmp/loo")
max=$(awk -F'\t' '$1 == "all" { sub(/%/, "", $4); print $4 }' "$tmp/loo")
awk -v m="$med" 'BEGIN { exit !(m > 0 && m <= 1.75) }' && ok || fail "pooled median $med%, want <= 1.75%"
awk -v m="$max" 'BEGIN { exit !(m > 0 && m <= 110) }' && ok || fail "pooled max $max%, want <= 110%"
# the issue's case (H200 AIC bf16 K 5120 N 2048, a gap 4353 -> 8192): 5000 and 6000 rows within 3%
# of a straight log-log line computed here from the raw rows, through the falling twins
# 4352/4353 as one point (their geometric mean at 4352) and 8192
aic="$top_srcdir/data/aic/gemm_h200_sxm_k5120.tsv.gz"
expect_rc 0 "$TPSPLIT" predict --gpu H200 --tp 2 --path dense-bf16 --n 2048 --gemm "$aic:dtype=bfloat16" --tokens 5000,6000 -o "$tmp/i.tsv"
for m in 5000 6000; do
  want=$(gzip -dc "$aic" | awk -F'\t' -v m=$m '!/^#/ && $4 == "bfloat16" && $6 == 2048 && $7 == 5120 { t[$5] = $8 }
    END { a = sqrt(t[4352] * t[4353]); s = log(t[8192] / a) / log(8192 / 4352); printf "%.6f", a * exp(s * log(m / 4352)) }')
  got=$(awk -F'\t' -v m=$m '$1 == m { print $3 }' "$tmp/i.tsv")
  expect_near "$got" "$want" 0.03 "H200 bf16 N 2048 at $m rows vs the log-log line through the twins and 8192"
done
# the twin pairs doc/fitting.md counts: what tools/interp/twin_pairs.sh finds in the bundled tables
sh "$top_srcdir/tools/interp/twin_pairs.sh" "$top_srcdir" > "$tmp/twins"
tw=$(sed -n 's/^pairs \([0-9]*\): M+1 faster (one point) \([0-9]*\), M+1 slower or equal (a tile step, kept) \([0-9]*\)$/\1 \2 \3/p' "$tmp/twins")
set -- $tw
fmt() { echo "$1" | sed ':a; s/\([0-9]\)\([0-9]\{3\}\)\($\|,\)/\1,\2\3/; ta'; }
[ $# -eq 3 ] && [ $(($2 + $3)) -eq "$1" ] && [ "$2" -gt 0 ] && ok || fail "twin_pairs.sh: '$(head -c 200 "$tmp/twins")'"
grep -q "$(fmt "$1") such pairs" "$top_srcdir/doc/fitting.md" && grep -q "slower ($(fmt "$3") of them" "$top_srcdir/doc/fitting.md" &&
  grep -q "faster ($(fmt "$2"):" "$top_srcdir/doc/fitting.md" && ok || fail "doc/fitting.md does not quote twin_pairs.sh's $1 / $2 / $3"
finish
