#!/bin/sh
# tests/cli/gather_same.sh: every command that takes --gather answers with that backend.
# decide, simulate and plot took the option and answered with the auto rule (the custom
# one-shot below 2 MiB a rank): `decide --gather nccl` at 2000 tokens said "split" on the
# H200 at TP8 where predict's threshold with NCCL is 2434.  predict is the reference here;
# each other command must give its threshold (decide, plot), or its times (simulate).
. "$top_srcdir/tests/cli/lib.sh"
P="--gpu H200 --tp 8 --path dense-bf16"
aic_nccl="$top_srcdir/data/aic/nccl_h200_sxm.tsv.gz"
for g in nccl custom auto "nccl=$aic_nccl"; do
  # shellcheck disable=SC2086
  "$TPSPLIT" predict $P --gather "$g" >"$tmp/p" 2>"$tmp/err" || fail "predict --gather $g: $(head -c 300 "$tmp/err")"
  thr=$(sed -n 's/^threshold: \([0-9]*\) tokens.*/\1/p' "$tmp/p")
  be=$(sed -n 's/^break-even: \([0-9]*\) tokens.*/\1/p' "$tmp/p")
  [ -n "$thr" ] && [ -n "$be" ] && ok || { fail "predict --gather $g: no threshold or break-even"; continue; }
  # decide: split at the threshold, not one token below
  below=$((thr - 1))
  # shellcheck disable=SC2086
  "$TPSPLIT" decide $P --gather "$g" --tokens "$below" >"$tmp/d" 2>"$tmp/err"
  expect_grep "^verdict: no split$" "$tmp/d"
  expect_grep "threshold $thr \\(parts prediction: break-even $be tokens" "$tmp/d"
  # shellcheck disable=SC2086
  "$TPSPLIT" decide $P --gather "$g" --tokens "$thr" >"$tmp/d" 2>"$tmp/err"
  expect_grep "^verdict: split$" "$tmp/d"
  # plot: the break-even panel's row and threshold
  rm -rf "$tmp/pl"
  TPSPLIT_GNUPLOT= "$TPSPLIT" plot --gpus H200 --tp 8 --paths dense-bf16 --gather "$g" --no-render -o "$tmp/pl" >/dev/null 2>"$tmp/err" ||
    fail "plot --gather $g: $(head -c 300 "$tmp/err")"
  row=$(awk -F'\t' '$1 == "0" && $2 == "H200-SXM" && $4 == "dense-bf16" { print $5 " " $8 }' "$tmp/pl"/speedup_*.dat | head -n 1)
  [ "$row" = "$be $thr" ] && ok || fail "plot --gather $g: break-even and threshold '$row', predict '$be $thr'"
done
# simulate: the measured split table's projection aside, a DeepSeek-V3 projection priced with the
# NCCL gather has predict's split time at the chunk
"$TPSPLIT" predict --gpu H200 --tp 8 --path fp8-block --k 7168 --n 2112 --gather nccl --tokens 1024 >"$tmp/p" 2>"$tmp/err"
want=$(awk '$1 == 1024 && $2 == 128 { print $4 }' "$tmp/p")
"$TPSPLIT" simulate --model deepseek-v3 --gpu H200 --tp 8 --gather nccl --chunk 1024 --prompt 1024 >"$tmp/s" 2>"$tmp/err"
got=$(awk '$1 == "fused_qkv_a_proj" { print $(NF - 2) }' "$tmp/s")
[ -n "$want" ] && [ "$got" = "$want" ] && ok || fail "simulate --gather nccl: split time '$got' us, predict '$want'"
# the H20's split table is of the auto rule, custom on every row up to its cap: --gather custom answers from those
# rows as measured (it took the fit of that table, 1.3 us off at 80 tokens: 97 against auto's 80), NCCL from the
# H100's measured curve (the table's two NCCL rows are its largest)
for g in custom auto; do
  "$TPSPLIT" predict --gpu H20 --tp 8 --path dense-bf16 --gather "$g" >"$tmp/h20_$g" 2>"$tmp/err" || fail "H20 --gather $g: $(cat "$tmp/err")"
done
bc=$(sed -n 's/^break-even: \([0-9]*\) tokens.*/\1/p' "$tmp/h20_custom")
ba=$(sed -n 's/^break-even: \([0-9]*\) tokens.*/\1/p' "$tmp/h20_auto")
[ -n "$bc" ] && [ "$bc" = "$ba" ] && ok || fail "H20 TP8: break-even '$bc' with --gather custom, '$ba' with auto"
expect_grep "gather custom on H20 at TP 8: measured: data/h20_tp8_fused_wqa_wkv.tsv lines 25-33 .*its rows where the rule ran custom: T 6..4096" "$tmp/h20_custom"
"$TPSPLIT" predict --gpu H20 --tp 8 --path dense-bf16 --gather nccl >"$tmp/h20_nccl" 2>&1
# --gather custom falls back to NCCL above the cap (as auto does): that part is resolved, cited and drawn too, and
# the header says where each runs (H200 TP8: the same times, break-even and interval as auto)
for g in custom auto; do
  "$TPSPLIT" predict --gpu H200 --tp 8 --path dense-bf16 --gather "$g" >"$tmp/h200_$g" 2>"$tmp/err" || fail "H200 --gather $g"
done
expect_grep '^# H200-SXM TP8 dense-bf16, gather custom \(nccl above 2097152 B per rank, where the one-shot kernel does not run\)$' "$tmp/h200_custom"
expect_grep '^# parts: GEMM measured\[1\]; gather transferred\[2\],measured\[3\]$' "$tmp/h200_custom"
expect_grep '^# \[3\] gather nccl on H200-SXM at TP 8: measured: data/aic/nccl_h200_sxm.tsv.gz' "$tmp/h200_custom"
bc=$(grep '^break-even' "$tmp/h200_custom"); ba=$(grep '^break-even' "$tmp/h200_auto")
[ -n "$bc" ] && [ "$bc" = "$ba" ] && ok || fail "H200 TP8 custom '$bc' vs auto '$ba'"
expect_grep "gather nccl on H20 at TP 8: sibling: " "$tmp/h20_nccl"
# predict -o lists the sources its parts use: with --gather nccl the custom gather (resolved, unused: [0]) is not one
"$TPSPLIT" predict --gpu H200 --tp 8 --path dense-bf16 --gather nccl -o "$tmp/po.tsv" >/dev/null 2>&1 || fail "predict -o"
expect_nogrep "^# \[0\]" "$tmp/po.tsv"
expect_grep "^# \[2\] gather nccl on H200-SXM at TP 8: measured: " "$tmp/po.tsv"
finish
