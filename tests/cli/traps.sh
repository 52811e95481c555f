#!/bin/sh
# tests/cli/traps.sh: the command-line traps of issue 29 item 2, one case each.  An option
# name means one thing (no prefix of --gpus-file is --gpus); --gather nccl=FILE answers with
# NCCL alone; a crossover grid chosen by the files says so; the file calibrate writes works
# with decide's defaults; the break-even summary of fit --loo-gpu counts no 'both none' case.
. "$top_srcdir/tests/cli/lib.sh"
D="$top_srcdir/data"
NCCL="$D/aic/nccl_h100_sxm.tsv.gz"

# --gpus is a list of GPU names, never a prefix of --gpus-file (and no long option is abbreviated)
for c in predict decide simulate; do
  expect_rc 2 "$TPSPLIT" "$c" --gpu H200 --gpus B200
  expect_grep "^tpsplit $c: bad option '--gpus' \(options are not abbreviated: --gpus-file\?\) \(try 'tpsplit $c --help'\)$" "$tmp/err"
done
expect_rc 2 "$TPSPLIT" crossover --gpus-f "$D/gpus.tsv"
expect_grep "options are not abbreviated: --gpus-file" "$tmp/err"

# --gather nccl=FILE: the answer's backend is the one named, as with --gather nccl --gather FILE
hdr() { sed -n 1p "$1"; }
be() { grep -oE '^break-even: [0-9]+' "$1" | grep -oE '[0-9]+'; }
expect_rc 0 "$TPSPLIT" predict --gpu H100 --tp 8 --path dense-bf16 --gather "nccl=$NCCL"
cp "$tmp/out" "$tmp/named"
expect_rc 0 "$TPSPLIT" predict --gpu H100 --tp 8 --path dense-bf16 --gather nccl --gather "$NCCL"
cp "$tmp/out" "$tmp/two"
expect_rc 0 "$TPSPLIT" predict --gpu H100 --tp 8 --path dense-bf16 --gather "$NCCL"
cp "$tmp/out" "$tmp/plain"
[ "$(hdr "$tmp/named")" = "# H100-SXM TP8 dense-bf16, gather nccl" ] && ok || fail "--gather nccl=FILE answered '$(hdr "$tmp/named")'"
[ -n "$(be "$tmp/named")" ] && [ "$(be "$tmp/named")" = "$(be "$tmp/two")" ] && ok ||
  fail "--gather nccl=FILE break-even $(be "$tmp/named") != --gather nccl --gather FILE $(be "$tmp/two")"
# the rows are NCCL's alone (no custom row below 2 MiB per rank)
expect_nogrep ' custom +[mtfbs],' "$tmp/named"
# a plain FILE keeps the default backend (auto), whose break-even differs here (2042 vs 2539)
expect_grep '^# H100-SXM TP8 dense-bf16, gather auto' "$tmp/plain"
[ "$(be "$tmp/plain")" != "$(be "$tmp/named")" ] && ok || fail "auto and nccl give the same break-even: the case shows nothing"
# --gather B names the answer's backend over B=FILE; files naming two backends keep auto (it uses both)
expect_rc 0 "$TPSPLIT" predict --gpu H100 --tp 8 --path dense-bf16 --gather "nccl=$NCCL" --gather auto
expect_grep '^# H100-SXM TP8 dense-bf16, gather auto' "$tmp/out"
# (nccl=LOG with custom=SPLIT: tests/cli/parts.sh, its answer auto)

# crossover with a measured file: the grid the file chose is printed, with the way to keep another
expect_rc 0 "$TPSPLIT" crossover --gather "$NCCL"
expect_grep '^# grid restricted to GPU H100-SXM, TPs 2,4,8: what the --gemm/--gather files measure \(--gpus, --tp, --paths for another grid\)$' "$tmp/out"
n=$(grep -c '^H100-SXM ' "$tmp/out")
[ "$n" -eq 18 ] && ok || fail "crossover --gather: $n H100 rows, want 3 TP x 6 paths (nvfp4: n/a rows)"
expect_nogrep '^(H200|B200|A100)' "$tmp/out"
expect_rc 0 "$TPSPLIT" crossover --gemm "$D/h20_tp8_fused_wqa_wkv.tsv" --json
expect_grep '"grid_note": "grid restricted to GPU H20, path marlin-w8a16' "$tmp/out"
# --gpus, --tp and --paths given: no note, the grid asked for
expect_rc 0 "$TPSPLIT" crossover --gather "$NCCL" --gpus H100 --tp 8 --paths dense-bf16
expect_nogrep '^# grid restricted' "$tmp/out"

# decide --thresholds with the defaults on the file calibrate writes (three paths at 5120x1792)
cal="$D/calibrate/thresholds_h200_5120x1792.json"
expect_rc 1 "$TPSPLIT" decide --thresholds "$cal" --tp 8 --tokens 3000
n=$(grep -c '^tpsplit decide: H200-SXM, TP8, 3000 tokens, ' "$tmp/out")
[ "$n" -eq 3 ] && ok || fail "decide --thresholds without --path: $n decisions, want 3 (the file's paths)"
# each threshold as the file holds it (split_from_tokens at 5120x1792, TP8, auto)
for pt in dense-bf16:2048 native-fp8:8192 w8a16:256; do
  expect_grep "${pt%%:*} TP8 auto: split from ${pt#*:} tokens" "$tmp/out"
done
expect_grep '^verdict on every path of the file: not on every path$' "$tmp/out"
expect_rc 0 "$TPSPLIT" decide --thresholds "$cal" --tp 8 --tokens 9000
expect_grep '^verdict on every path of the file: split$' "$tmp/out"
expect_rc 0 "$TPSPLIT" decide --thresholds "$cal" --tp 8 --tokens 3000 --path w8a16
[ "$(grep -c '^tpsplit decide: ' "$tmp/out")" -eq 1 ] && ok || fail "--path w8a16: not one decision"
expect_rc 1 "$TPSPLIT" decide --thresholds "$cal" --tp 8 --tokens 3000 --json
tr -d ' \n' <"$tmp/out" | grep -q '"split":false}$' && ok || fail "--json: no overall split:false"
[ "$(grep -c '"path":' "$tmp/out")" -eq 3 ] && ok || fail "--json: not three decisions"

# the sensitivity line: a parameter that leaves the break-even is named, with the gap that pins it
# (predict --gpu H200 --tp 8 --scaling model: GEMM 1017/1985 but the gather 1473/1473)
expect_rc 0 "$TPSPLIT" predict --gpu H200 --tp 8 --scaling model
be=$(grep -oE '^break-even: [0-9]+' "$tmp/out" | grep -oE '[0-9]+')
# the parameters at be/be in the sensitivity line, in order, against the note's list
want=$(grep '^sensitivity' "$tmp/out" | sed 's/^[^:]*: //' | tr ',' '\n' | awk -v b="$be" '$2 == b "/" b { printf "%s%s", n++ ? ", " : "", $1 }')
[ -n "$want" ] && ok || fail "no parameter leaves the break-even $be: the case shows nothing"
expect_grep "^  unchanged by $want: the break-even ends the last losing gap, " "$tmp/out"
# the gap named is the last of the losing gaps printed, and it ends just before the break-even
last=$(grep '^losing gaps' "$tmp/out" | sed 's/.*, //' | grep -oE '^[0-9]+\.\.[0-9]+')
expect_grep "last losing gap, $last \\(at worst" "$tmp/out"
[ "${last#*..}" -eq $((be - 1)) ] && ok || fail "last gap $last does not end at break-even $be - 1"
# a parameter that moves it (gemm_tflops) is not in the note
grep '^  unchanged by' "$tmp/out" | grep -q gemm_tflops && fail "gemm_tflops moves the break-even but is listed" || ok

# bench and its subcommands take -h and -V like every command
for c in bench "bench gemm" "bench split" "bench allgather" calibrate; do
  # shellcheck disable=SC2086
  expect_rc 0 "$TPSPLIT" $c -V
  expect_grep "^tpsplit $c \(tpsplit\) " "$tmp/out"
  # shellcheck disable=SC2086
  expect_rc 0 "$TPSPLIT" $c -h
  expect_grep "^Usage: tpsplit $c" "$tmp/out"
done
finish
