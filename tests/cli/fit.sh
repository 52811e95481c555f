#!/bin/sh
# fit.sh: `tpsplit fit` end to end on the bundled H20 table and the test fixtures.
# Acceptance through the CLI: median |rel resid| <= 5% over the 22 values and
# median leave-one-out error <= 12% (the numbers are read from --json with awk); exit codes
# 2 for too few points / bad input with no half-written -o file, 1 for non-convergence.
. "$top_srcdir/tests/cli/lib.sh"
h20="$top_srcdir/data/h20_tp8_fused_wqa_wkv.tsv"

expect_rc 0 "$TPSPLIT" fit --help
expect_grep '^Usage: tpsplit fit' "$tmp/out"
expect_rc 0 "$TPSPLIT" fit --version

# text: 6 parameters, 22 point rows, summary lines
expect_rc 0 "$TPSPLIT" fit --loo "$h20"
cp "$tmp/out" "$tmp/text"
expect_grep '^tflops ' "$tmp/text"
n=$(grep -cE '^(replicated|split) ' "$tmp/text")
[ "$n" -eq 22 ] && ok || fail "22 point rows expected, got $n"
expect_grep '^# summary: median \|rel resid\|' "$tmp/text"
expect_grep '^# leave-one-out: median' "$tmp/text"
# the 4096-token split point uses the custom gather, 8192 NCCL (per-rank 1.75 vs 3.5 MiB)
expect_grep '^split +4096 .* custom$' "$tmp/text"
expect_grep '^split +8192 .* nccl$' "$tmp/text"

# JSON: the acceptance numbers
expect_rc 0 "$TPSPLIT" fit --loo --json "$h20"
cp "$tmp/out" "$tmp/json"
get() { awk -v k="\"$1\":" '$1 == k { v = $2; sub(/,$/, "", v); print v; exit }' "$tmp/json"; }
med=$(get median_abs_rel); loo=$(get loo_median_abs); mx=$(get max_abs_rel); npts=$(get n_points)
echo "median |rel resid| $med, max $mx, LOO median $loo, points $npts"
[ "$npts" = 22 ] && ok || fail "n_points $npts"
awk -v v="$med" 'BEGIN { exit !(v > 0 && v <= 0.05) }' && ok || fail "median |rel resid| $med > 0.05"
awk -v v="$loo" 'BEGIN { exit !(v > 0 && v <= 0.12) }' && ok || fail "LOO median $loo > 0.12"
expect_grep '"parameters": \[' "$tmp/json"
expect_grep '"gather_se_us": [0-9]' "$tmp/json"
expect_grep '"backend": "nccl"' "$tmp/json"
expect_grep '"loo_rel": [-0-9]' "$tmp/json"
# without --loo the LOO fields are null
expect_rc 0 "$TPSPLIT" fit --json "$h20"
expect_grep '"loo_median_abs": null' "$tmp/out"

# -o: a fit file with the documented lines
expect_rc 0 "$TPSPLIT" fit -o "$tmp/h20.fit" "$h20"
# (JSON in its canonical layout, one list element a line: read here with awk, as a user may)
expect_grep '^  "format": "tpsplit-fit",$' "$tmp/h20.fit"
expect_grep '^  "schema_version": 2,$' "$tmp/h20.fit"
expect_grep 'h20_tp8_fused_wqa_wkv.tsv"$' "$tmp/h20.fit"
# v KEY: the value of "KEY" on the current line (quotes dropped)
V='function v(k,  s) { s = $0; if (!sub(".*\"" k "\": ", "", s)) return ""; sub(/[,}\]].*/, "", s); gsub(/"/, "", s); return s }'
np=$(grep -c '^    {"name": ' "$tmp/h20.fit"); nc=$(grep -c '^    \[' "$tmp/h20.fit"); nq=$(grep -c '^    {"series": ' "$tmp/h20.fit")
[ "$np" -ge 3 ] && [ "$np" -eq "$nc" ] && [ "$nq" -eq 22 ] && ok || fail "fit file: $np params, $nc cov rows, $nq points"
# every cov row has one value per param
awk -v p="$np" '/^    \[/ { s = $0; sub(/\],?$/, "", s); if (split(s, a, ",") != p) bad = 1 } END { exit bad }' "$tmp/h20.fit" && ok || fail "cov row width"
# the params value of tflops agrees with the printed value (text prints 6 significant digits)
tf_file=$(awk "$V"' v("name") == "tflops" { print v("value") }' "$tmp/h20.fit")
tf_text=$(awk '$1 == "tflops" { print $2 }' "$tmp/text")
expect_near "$tf_file" "$tf_text" 1e-5 "tflops in file vs text"
# the 16384-token replicated point: measured 3570.8 us as in the data file
awk "$V"' v("series") == "replicated" && v("x") == 16384 && v("measured_us") == 3570.8 { f = 1 } END { exit !f }' "$tmp/h20.fit" &&
  ok || fail "point 16384"
# an old positional fit (schema 1) is refused with the command that regenerates it
printf 'format\ttpsplit-fit\t1\nkind\tsplit\nsource\t%s\n' "$h20" > "$tmp/old.fit"
expect_rc 2 "$TPSPLIT" predict --gpu H200 --fit "$tmp/old.fit"
expect_grep "old.fit:1: a fit file of the old positional text form.*regenerate it with \`tpsplit fit -o FILE $h20\`" "$tmp/err"

# too few points: exit 2, one line naming the file, no output file left behind
expect_rc 2 "$TPSPLIT" fit -o "$tmp/few.fit" "$top_srcdir/tests/data/fit_too_few.tsv"
expect_grep "fit_too_few.tsv: fit: too few points" "$tmp/err"
[ ! -e "$tmp/few.fit" ] && ok || fail "few.fit written"
[ -z "$(ls "$tmp" | grep 'few.fit.tmp')" ] && ok || fail "temporary file left"
# non-convergence (one iteration allowed): exit 1, no output file
expect_rc 1 "$TPSPLIT" fit --max-iter 1 -o "$tmp/nc.fit" "$h20"
expect_grep "did not converge" "$tmp/err"
[ ! -e "$tmp/nc.fit" ] && ok || fail "nc.fit written"
# bad input
expect_rc 2 "$TPSPLIT" fit "$tmp/missing.tsv"
expect_grep "missing.tsv" "$tmp/err"
expect_rc 2 "$TPSPLIT" fit --gpu NoSuchGPU "$h20"
expect_grep "NoSuchGPU" "$tmp/err"
expect_rc 2 "$TPSPLIT" fit
expect_rc 2 "$TPSPLIT" fit --max-iter 0 "$h20"
expect_rc 2 "$TPSPLIT" fit -o "$tmp/two.fit" "$h20" "$h20"
expect_rc 2 "$TPSPLIT" fit --bogus "$h20"

# other kinds: GEMM table and an nccl-tests log (a single alpha-beta line, 11.8 us and
# algbw 330 GB/s by its generator: busbw 330*7/8 = 288.75 GB/s)
expect_rc 0 "$TPSPLIT" fit "$top_srcdir/tests/data/gemm_h20_marlin.tsv"
expect_grep '^gemm +16384 +3571' "$tmp/out"
expect_rc 0 "$TPSPLIT" fit --json "$top_srcdir/tests/data/ncclt/current.txt"
lat=$(awk '/"name": "ag_lat_/ { f = 1 } f && $1 == "\"value\":" { v = $2; sub(/,$/, "", v); print v; exit }' "$tmp/out")
expect_near "$lat" 11.8 0.05 "nccl latency"
bw=$(awk '/"name": "ag_busbw_/ { f = 1 } f && $1 == "\"value\":" { v = $2; sub(/,$/, "", v); print v; exit }' "$tmp/out")
expect_near "$bw" 288.75 0.05 "nccl busbw"
# a custom-gather table made by awk: t = 6 + B*(8-1)/8 / (250 GB/s), times 1 +- 1% (alternating)
{
  printf '#@ gpu: H20\n#@ gather: custom\nbytes\tranks\ttime_us\n'
  awk 'BEGIN { for (i = 0; i < 12; i++) { b = 8192 * 2 ^ i; t = 6 + b * 7 / 8 / 250e3; printf "%d\t8\t%.4f\n", b, t * (1 + (i % 2 ? 0.01 : -0.01)) } }'
} > "$tmp/custom.tsv"
expect_rc 0 "$TPSPLIT" fit "$tmp/custom.tsv"
expect_near "$(awk '$1 == "ag_custom_floor_us" { print $2 }' "$tmp/out")" 6 0.05 "custom floor"
expect_near "$(awk '$1 == "ag_custom_gbps" { print $2 }' "$tmp/out")" 250 0.03 "custom gbps"
# a TP 1 split table (no gather): its replicated column is fitted as a GEMM table
awk -F'\t' 'BEGIN { OFS = "\t" } /^#@ tp:/ { print "#@ tp: 1"; next } /^#/ { print; next }
  $1 == "tokens" { print; next } { print $1, $1, $3, $3 + 1 }' "$h20" > "$tmp/tp1.tsv"
expect_rc 0 "$TPSPLIT" fit "$tmp/tp1.tsv"
expect_grep '^# fixed: TP 1 split table: its replicated column fitted as a GEMM table' "$tmp/out"
n=$(grep -c '^gemm ' "$tmp/out"); [ "$n" -eq 11 ] && ok || fail "TP1: 11 gemm rows expected, got $n"
# a 1-rank all-gather: nothing to fit, exit 2
printf '#@ gpu: H20\n#@ gather: nccl\nbytes\tranks\ttime_us\n1024\t1\t3.2\n2048\t1\t3.3\n' > "$tmp/ag1.tsv"
expect_rc 2 "$TPSPLIT" fit "$tmp/ag1.tsv"
expect_grep 'all-gather of 1 rank' "$tmp/err"
# several files: one JSON object with "fits"
expect_rc 0 "$TPSPLIT" fit --json "$h20" "$top_srcdir/tests/data/ncclt/current.txt"
expect_grep '"fits": \[' "$tmp/out"
finish
