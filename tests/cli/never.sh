#!/bin/sh
# tests/cli/never.sh: an interval that reaches "never" on a GPU with measured parts says why
# (issue 27 item 9), in predict and in the crossover grid (text and JSON), and the number it
# gives is recomputed here from predict's own rows: max |split/replicated - 1| over T =
# round(2^(i/8)) from the interval's low end to 16384 (H200 TP2 native-fp8, NCCL: both parts
# measured, interval 4225..never on the bundled data).
. "$top_srcdir/tests/cli/lib.sh"
expect_rc 0 "$TPSPLIT" crossover --gpus H200 --tp 2 --paths native-fp8 --gather nccl --json
cp "$tmp/out" "$tmp/grid.json"
from=$(tr -d ' \n' < "$tmp/grid.json" | sed -n 's/.*"interval_never":{[^}]*"from_tokens":\([0-9]*\).*/\1/p')
x=$(tr -d ' \n' < "$tmp/grid.json" | sed -n 's/.*"interval_never":{[^}]*"max_abs_rel_diff":\([0-9.eE+-]*\).*/\1/p')
hi=$(tr -d ' \n' < "$tmp/grid.json" | sed -n 's/.*"breakeven_hi":\([a-z0-9]*\).*/\1/p')
[ "$hi" = null ] && ok || fail "H200 TP2 native-fp8: breakeven_hi '$hi', want null (never)"
[ -n "$from" ] && [ -n "$x" ] && ok || fail "crossover --json: no interval_never (from '$from', x '$x')"
expect_grep '"breakeven_lo": '"$from" "$tmp/grid.json"
# predict gives the same note, text and JSON
expect_rc 0 "$TPSPLIT" predict --gpu H200 --tp 2 --path native-fp8 --gather nccl --json
expect_grep '"from_tokens": '"$from" "$tmp/out"
expect_rc 0 "$TPSPLIT" predict --gpu H200 --tp 2 --path native-fp8 --gather nccl
expect_grep "^why the interval reaches never: from $from tokens" "$tmp/out"
expect_rc 0 "$TPSPLIT" crossover --gpus H200 --tp 2 --paths native-fp8 --gather nccl
expect_grep "^why an interval reaches never" "$tmp/out"
expect_grep "^  H200-SXM TP2 native-fp8: from $from tokens on within [0-9.]+% \\(largest at [0-9]+\\)" "$tmp/out"
# recompute x from predict's rows at the grid points >= from
toks=$(awk -v f="$from" 'BEGIN { for (i = 0; i <= 112; i++) { t = int(2 ^ (i / 8) + 0.5); if (t >= f && t != last) { printf "%s%d", n++ ? "," : "", t; last = t } } }')
expect_rc 0 "$TPSPLIT" predict --gpu H200 --tp 2 --path native-fp8 --gather nccl --tokens "$toks" -o "$tmp/rows.tsv"
want=$(awk -F'\t' '!/^#/ && $1 ~ /^[0-9]/ { d = $4 / $3 - 1; if (d < 0) d = -d; if (d > m) m = d } END { printf "%.6f", m }' "$tmp/rows.tsv")
expect_near "$x" "$want" 1e-4 "max |split/replicated - 1| from $from"
# a GPU whose interval ends below never has no note
expect_rc 0 "$TPSPLIT" crossover --gpus H200 --tp 8 --paths dense-bf16 --gather nccl --json
expect_nogrep 'interval_never' "$tmp/out"
finish
