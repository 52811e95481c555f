#!/bin/sh
# calib_scripts.sh: tools/calibrate/interp_check.sh and repeat_check.sh (the README's numbers
# for the jagged cuBLASLt times come from them) on small tables computed by hand, and their
# bad input (exit 2, nothing on stdout).
. "$top_srcdir/tests/cli/lib.sh"
D="$top_srcdir/tools/calibrate"
printf '# t\nrows\ttime_us\n1\t1\n2\t3\n4\t4\n' > "$tmp/t.tsv"
# STEP 2: rows 1 and 4 measured, row 2 predicted log-linearly: exp(log 4 / 2) = 2 against 3:
# |2/3 - 1| = 33.3%, one row over 10%
expect_rc 0 sh "$D/interp_check.sh" 2 "$tmp/t.tsv"
expect_grep "	3	2	1	33.3%	33.3%	1$" "$tmp/out"
for bad in 0 1 x ""; do
  expect_rc 2 sh "$D/interp_check.sh" "$bad" "$tmp/t.tsv"
  [ ! -s "$tmp/out" ] && ok || fail "interp_check.sh STEP '$bad' printed something"
done
printf 'rows\ttime_us\n1\t1\n2\t3\n' > "$tmp/short.tsv"
expect_rc 2 sh "$D/interp_check.sh" 2 "$tmp/t.tsv" "$tmp/short.tsv"
[ ! -s "$tmp/out" ] && ok || fail "interp_check.sh printed before refusing a short table"
expect_rc 2 sh "$D/interp_check.sh" 2 "$tmp/none.tsv"
# repeat_check.sh: rows 1 and 2, 10 -> 11 and 20 -> 20: median 5.0%, max 10.0% at row 1
if command -v bash >/dev/null; then
  mkdir -p "$tmp/a" "$tmp/b"
  printf '# a\nrows\ttime_us\n1\t10\n2\t20\n' > "$tmp/a/full_x.tsv"
  printf '# b\nrows\ttime_us\n1\t11\n2\t20\n' > "$tmp/b/full_x.tsv"
  expect_rc 0 bash "$D/repeat_check.sh" "$tmp/a" "$tmp/b"
  expect_grep "^full_x.tsv	2	5.0%	10.0%	1$" "$tmp/out"
  expect_rc 2 bash "$D/repeat_check.sh" "$tmp/a" "$tmp/nodir"
fi
finish
