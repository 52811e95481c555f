#!/bin/sh
# tests/cli/w8head.sh: the numbers doc/gemm-kernels.md quotes in "Past one wave" (issue 28) are
# those of the measured tables: "w8a16 now" is data/h100_w8a16_head_<K>x<N>_w8a16.tsv's time_us,
# "speed vs dense now" that table's dense-bf16 twin over it, "dense-bf16" and "one launch" the
# sweep lines of data/h100_w8a16_head.txt, whose ratio section is recomputed from the tables.
# Data only (no GPU): awk, independent of tpsplit.
set -u
d="$top_srcdir/data"; doc="$top_srcdir/doc/gemm-kernels.md"
fail=0
t() { grep -v '^#' "$d/h100_w8a16_head_$1_$2.tsv" | awk -F'\t' 'NR > 1 { print $1, $2 }'; }
for kn in 5120x1792 7168x2112; do
  t $kn w8a16 | sed "s/^/$kn w /"; t $kn dense-bf16 | sed "s/^/$kn d /"
done >"${TMPDIR:-/tmp}/w8head.$$"
tab="${TMPDIR:-/tmp}/w8head.$$"
trap 'rm -f "$tab"' EXIT
# the doc's table rows
rows=$(awk '/^## Past one wave/ { on = 1; next } /^## / { on = 0 } on && /^\| [0-9]+x[0-9]+ \|/' "$doc")
[ -n "$rows" ] || { echo "FAIL: no table rows under 'Past one wave' in doc/gemm-kernels.md"; exit 1; }
echo "$rows" | awk -F' *\\| *' -v tab="$tab" -v sw="$d/h100_w8a16_head.txt" '
  BEGIN {
    while ((getline l < tab) > 0) { split(l, a, " "); v[a[1] " " a[2] " " a[3]] = a[4] }
    while ((getline l < sw) > 0) if (l ~ /^# [0-9]+x[0-9]+ +[0-9]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+x$/) {
      n = split(l, a, " "); one[a[2] " " a[3]] = a[5]; dn[a[2] " " a[3]] = a[4]; nw[a[2] " " a[3]] = a[6] }
  }
  { kn = $2; m = $3; key = kn " " m; rows++
    if (!((kn " w " m) in v)) { printf "FAIL: %s M %s: not in the w8a16 table\n", kn, m; bad++; next }
    now = sprintf("%.2f", v[kn " w " m]); sp = sprintf("%.2fx", v[kn " d " m] / v[kn " w " m])
    if ($6 != now) { printf "FAIL: %s M %s: doc says w8a16 now %s, the table %s\n", kn, m, $6, now; bad++ }
    if ($7 != sp) { printf "FAIL: %s M %s: doc says speed %s, the tables %s\n", kn, m, $7, sp; bad++ }
    if (!(key in one)) { printf "FAIL: %s M %s: no sweep line in data/h100_w8a16_head.txt\n", kn, m; bad++; next }
    if ($4 != dn[key] || $5 != one[key]) { printf "FAIL: %s M %s: doc %s / %s, sweep line %s / %s\n", kn, m, $4, $5, dn[key], one[key]; bad++ }
    if (nw[key] != now) { printf "FAIL: %s M %s: sweep line default %s, table %s\n", kn, m, nw[key], now; bad++ }
  }
  END { if (rows < 8) { print "FAIL: fewer than 8 rows"; bad++ } ; exit bad > 0 }' || fail=1
# the data file's ratio section against the tables
grep '^# [0-9]*x[0-9]* *[0-9]*  dense' "$d/h100_w8a16_head.txt" | awk -v tab="$tab" '
  BEGIN { while ((getline l < tab) > 0) { split(l, a, " "); v[a[1] " " a[2] " " a[3]] = a[4] } }
  { kn = $2; m = $3; n++
    want = sprintf("%.2f %.2f %.2fx", v[kn " d " m], v[kn " w " m], v[kn " d " m] / v[kn " w " m])
    got = $5 " " $7 " " $8
    if (got != want) { printf "FAIL: ratio line %s M %s: %s, tables %s\n", kn, m, got, want; bad++ } }
  END { if (n != 40) { printf "FAIL: %d ratio lines, expected 40\n", n; bad++ }; exit bad > 0 }' || fail=1
[ $fail = 0 ] && echo "w8head: doc table and data file agree with the tables"
exit $fail
