#!/bin/sh
# tests/cli/harness.sh: the harness of every GEMM answer (issue 27 item 3; doc/predict.md,
# "Harness"): named in text, JSON and thresholds files; --harness bench|aic picks the target's
# table in that harness, else converts (its own tables in both, a sibling's, the model's two
# forms); values checked against the raw tables with awk; bad values refused.
. "$top_srcdir/tests/cli/lib.sh"
data="$TPSPLIT_DATADIR"
# the bench table's time at ROWS (column 2 of the row), from the raw file
bench_at() { awk -F'\t' -v m="$2" '$0 !~ /^#/ && $1 == m { print $2; exit }' "$1"; }
# replicated_us of the row of T in predict's text table
repl_at() { awk -v t="$1" '$1 == t && $2 ~ /^[0-9]+$/ { print $3; exit }' "$2"; }

# --- default: each part in its measurement's harness, named
expect_rc 0 "$TPSPLIT" predict --gpu H100 --tp 8 --path native-fp8 --gather nccl
expect_grep '^# \[1\] GEMM native-fp8 on H100-SXM, K 5120 N 1792, aic harness: measured: data/aic/gemm_h100_sxm_k5120.tsv.gz' "$tmp/out"
be_aic=$(sed -n 's/^break-even: \([0-9]*\) tokens.*/\1/p' "$tmp/out")

# --- --harness bench on the H100: its own bench table (no conversion), value = the table's
expect_rc 0 "$TPSPLIT" predict --gpu H100 --tp 8 --path native-fp8 --gather nccl --harness bench
expect_grep '^# \[1\] GEMM native-fp8 on H100-SXM, K 5120 N 1792, bench harness: measured: data/h100_gemm_native-fp8.tsv lines' "$tmp/out"
expect_nogrep 'converted(:|\[| from)' "$tmp/out"
expect_near "$(repl_at 1024 "$tmp/out")" "$(bench_at "$data/h100_gemm_native-fp8.tsv" 1024)" 0.002 "H100 bench replicated(1024)"
be_bench=$(sed -n 's/^break-even: \([0-9]*\) tokens.*/\1/p' "$tmp/out")
[ -n "$be_aic" ] && [ -n "$be_bench" ] && [ "$be_bench" -gt "$be_aic" ] && ok ||
  fail "native-fp8 H100 TP8 NCCL: bench harness break-even $be_bench should exceed the aic one $be_aic (our fp8 path is ~35% faster at small M)"

# --- the H200's AIConfigurator table given as a file, asked in bench: converted by the H200's
# own tables in both harnesses, which gives back its bench table at the bench rows
expect_rc 0 "$TPSPLIT" predict --gpu H200 --tp 8 --path native-fp8 --gather nccl --harness bench --tokens 512,4096 \
  --gemm "$data/aic/gemm_h200_sxm_k5120.tsv.gz:dtype=fp8"
expect_grep "converted from the aic harness to bench by H200-SXM's tables in both" "$tmp/out"
# ... and its kind says so: never "measured" for a measurement of the other harness (parts line, source, rows)
expect_grep '^# parts: GEMM converted\[1\]' "$tmp/out"
expect_grep '^# \[1\] GEMM native-fp8 on H200-SXM, K 5120 N 1792, bench harness: converted: ' "$tmp/out"
expect_grep '^ *512 +64 +[0-9.]+ +[0-9.]+ +[0-9.]+ +[a-z]+ +c,c,' "$tmp/out"
for t in 512 4096; do
  expect_near "$(repl_at $t "$tmp/out")" "$(bench_at "$data/h200_gemm_native-fp8.tsv" $t)" 0.005 "H200 converted replicated($t)"
done

# --- B200 (no bench table, no sibling measured both): the model's two forms; our fp8 path is
# faster at small M than AIConfigurator's, so the converted GEMM is lower there
expect_rc 0 "$TPSPLIT" predict --gpu B200 --tp 8 --path native-fp8 --gather nccl --tokens 8 --json
cp "$tmp/out" "$tmp/b200_aic.json"
expect_rc 0 "$TPSPLIT" predict --gpu B200 --tp 8 --path native-fp8 --gather nccl --tokens 8 --json --harness bench
cp "$tmp/out" "$tmp/b200_bench.json"
expect_grep '"harness": "bench"' "$tmp/b200_bench.json"
expect_grep '"harness": "aic"' "$tmp/b200_aic.json"
expect_grep "converted from the aic harness to bench by the cross-GPU model's two harness forms" "$tmp/b200_bench.json"
expect_grep '"provenance": "converted"' "$tmp/b200_bench.json"
expect_nogrep '"provenance": "converted"' "$tmp/b200_aic.json"
expect_grep '"provenance": "measured"' "$tmp/b200_aic.json"
# the thresholds file an engine reads: kind "converted", with its points (the schema's rule for a curve)
expect_rc 0 "$TPSPLIT" crossover --gpus B200 --tp 8 --paths native-fp8 --gather nccl --harness bench --thresholds-out "$tmp/b200.json"
expect_rc 1 "$TPSPLIT" decide --thresholds "$tmp/b200.json" --gpu B200 --tp 8 --path native-fp8 --gather nccl --tokens 64
awk '/"gemm": *\{/ { g = 1 } g && /"kind"/ { k = $0 } g && /"points"/ { p = $0; exit } END { exit !(k ~ /"converted"/ && p ~ /"points": *[1-9][0-9]*/) }' \
  "$tmp/b200.json" && ok || fail "B200 bench thresholds: the GEMM's kind is not 'converted' with its points"
ra=$(awk '/"replicated_us":/ { gsub(/[,]/, "", $2); print $2; exit }' "$tmp/b200_aic.json")
rb=$(awk '/"replicated_us":/ { gsub(/[,]/, "", $2); print $2; exit }' "$tmp/b200_bench.json")
awk -v a="$ra" -v b="$rb" 'BEGIN { exit !(a > 0 && b > 0 && b < 0.9 * a) }' && ok ||
  fail "B200 fp8 replicated(8): bench $rb should be < 0.9 x aic $ra"

# --- a path without an aic form stays in bench and says so
expect_rc 0 "$TPSPLIT" predict --gpu H200 --tp 8 --path w8a16 --gather nccl --harness aic --tokens 1024
expect_grep 'GEMM w8a16 on H200-SXM, K 5120 N 1792, bench harness: sibling: .*bench harness as measured \(w8a16 has no aic-harness form to convert by\)' "$tmp/out"

# --- nothing measured and no cross-GPU model: the answer stays bench whatever was asked
expect_rc 0 "$TPSPLIT" predict --gpu B200 --tp 8 --path w8a16 --gather nccl --harness aic --tokens 1024
expect_grep '^# \[1\] GEMM w8a16 on B200, K 5120 N 1792, bench harness: spec-only' "$tmp/out"
expect_rc 0 "$TPSPLIT" predict --gpu B200 --tp 8 --path marlin-w8a16 --gather nccl --harness aic --tokens 1024
expect_grep '^# \[1\] GEMM marlin-w8a16 on B200, K 5120 N 1792, bench harness: transferred' "$tmp/out"

# --- thresholds files record it, decide prints it, a bad value is refused with its line
expect_rc 0 "$TPSPLIT" predict --gpu H100 --tp 8 --path native-fp8 --harness bench --thresholds-out "$tmp/th.json"
expect_grep '"harness": "bench"' "$tmp/th.json"
expect_rc 1 "$TPSPLIT" decide --thresholds "$tmp/th.json" --gpu H100 --tp 8 --path native-fp8 --tokens 100
expect_grep 'gemm measured \([0-9]+ points\), bench harness' "$tmp/out"
sed 's/"harness": "bench"/"harness": "flushed"/' "$tmp/th.json" > "$tmp/bad.json"
expect_rc 2 "$TPSPLIT" decide --thresholds "$tmp/bad.json" --gpu H100 --tp 8 --path native-fp8 --tokens 100
expect_grep "bad.json:[0-9]+:.*'flushed' is not a harness \(bench, aic\)" "$tmp/err"

# --- bad values and combinations
expect_rc 2 "$TPSPLIT" predict --gpu H100 --tp 8 --harness flushed
expect_grep "harness.*'flushed'.*bench or aic" "$tmp/err"
expect_rc 2 "$TPSPLIT" predict --gpu H100 --tp 8 --harness aic --scaling model
expect_rc 2 "$TPSPLIT" calibrate --harness aic --paths w8a16 -o "$tmp/cal.json"
expect_grep 'w8a16 has no aic form' "$tmp/err"
[ ! -e "$tmp/cal.json" ] && ok || fail "calibrate wrote a file after a usage error"
finish
