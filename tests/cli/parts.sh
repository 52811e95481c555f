#!/bin/sh
# tests/cli/parts.sh: answers from measured parts (issue 16 items 1 and 9): data/xgpu.fit equals a
# fresh fit, measured parts reproduce their files (values recomputed here with awk from the
# raw tables), each part's provenance in text and JSON, the measured range and the model
# outside it, --measured-only, and bad input: one line naming the file (and line, or the
# missing shape), exit 2, nothing written.
. "$top_srcdir/tests/cli/lib.sh"
data="$TPSPLIT_DATADIR"
aicg="$data/aic/gemm_h100_sxm_k5120.tsv.gz"
aicn="$data/aic/nccl_h100_sxm.tsv.gz"
json_top() { awk -v k="\"$1\":" '$1 == k && /^  "/ { v = $2; sub(/,$/, "", v); print v; exit }' "$2"; }
# one_line_error: exactly one line on stderr, "tpsplit CMD: " then the pattern
one_line_error() {
  expect_grep "^tpsplit [a-z][a-z -]*: $1" "$tmp/err"
  n=$(wc -l < "$tmp/err"); [ "$n" -eq 1 ] && ok || fail "$n lines on stderr for '$1': $(cat "$tmp/err")"
  [ -s "$tmp/out" ] && fail "output on stdout after an input error: $(head -c 200 "$tmp/out")" || ok
}

# --- data/xgpu.fit is what `tpsplit fit --xgpu` writes now (numbers within 1e-9 relative)
expect_rc 0 "$TPSPLIT" fit --xgpu -o "$tmp/xgpu.fit"
# (JSON in its canonical layout, one fit a line: compared token by token, numbers within 1e-9)
awk 'function toks(s, t) { gsub(/[][{}:,]/, " ", s); return split(s, t, " ") }
  FNR == NR { a[FNR] = $0; next }
  { if (!(FNR in a)) { print "line " FNR " only in the fresh fit"; bad++; next }
    n = toks(a[FNR], f); m = toks($0, g)
    if (n != m) { print "line " FNR ": " n " vs " m " fields"; bad++; next }
    for (i = 1; i <= m; i++) {
      if (g[i] == f[i]) continue
      x = g[i] + 0; y = f[i] + 0; d = x - y; if (d < 0) d = -d; m2 = y < 0 ? -y : y
      if ((g[i] ~ /^[-0-9.e+]+$/) && d <= 1e-9 * m2) continue
      print "line " FNR " field " i ": " f[i] " committed, " g[i] " fresh"; bad++ } }
  END { exit bad > 0 }' "$data/xgpu.fit" "$tmp/xgpu.fit" > "$tmp/cmp" && ok || fail "data/xgpu.fit is stale: $(head -5 "$tmp/cmp")"
grep -c '^    {"path": ' "$tmp/xgpu.fit" | grep -q '^22$' && ok || fail "fold lines of the GEMM fits (dense-bf16 7, native-fp8 6, fp8-block 6, nvfp4 3)"

# --- H100 TP8 dense-bf16 from the public tables alone (measured GEMM + measured NCCL gather)
expect_rc 0 "$TPSPLIT" predict --gpu H100 --tp 8 --path dense-bf16 --gemm "$aicg:dtype=bfloat16" --gather "$aicn" \
  --gather nccl --tokens 1024,2048,16384 --json
cp "$tmp/out" "$tmp/h100.json"
# replicated(1024) = the measured N 1536 and 2048 rows at M 1024 interpolated log-linearly
# to N 1792 (awk on the raw table)
want=$(gzip -dc "$aicg" | awk -F'\t' '$4 == "bfloat16" && $5 == 1024 && $7 == 5120 { if ($6 == 1536) a = $8; if ($6 == 2048) b = $8 }
  END { w = log(1792 / 1536) / log(2048 / 1536); printf "%.15g", exp(log(a) + w * (log(b) - log(a))) }')
# the rows' keys are sorted (replicated_us before tokens): a row's value is the one before its tokens
row_val() { awk -v t="$1" -v k="\"$2\":" '/"rows": \[/ { r = 1 } r && $1 == k { gsub(/[",]/, "", $2); v = $2 }
  r && $1 == "\"tokens\":" { gsub(/,/, "", $2); if ($2 == t) { print v; exit } }' "$3"; }
got=$(row_val 1024 replicated_us "$tmp/h100.json")
expect_near "$got" "$want" 1e-9 "H100 replicated(1024) from the AIC rows"
# the gather at T = 2048 (8 x 256 rows x 3584 B = 7 MiB) lies between the measured gathers
# at 4 and 8 MiB of 8 GPUs (monotone interpolation), each the mean over the file's dtypes
set -- $(gzip -dc "$aicn" | awk -F'\t' '$3 == "all_gather" && $4 == 8 && ($5 == 4194304 || $5 == 8388608) { s[$5] += log($6); n[$5]++ }
  END { printf "%.15g %.15g", exp(s[4194304] / n[4194304]), exp(s[8388608] / n[8388608]) }')
lo=$1; hi=$2
rep256=$(gzip -dc "$aicg" | awk -F'\t' '$4 == "bfloat16" && $5 == 256 && $7 == 5120 { if ($6 == 1536) a = $8; if ($6 == 2048) b = $8 }
  END { w = log(1792 / 1536) / log(2048 / 1536); printf "%.15g", exp(log(a) + w * (log(b) - log(a))) }')
split=$(row_val 2048 split_us "$tmp/h100.json")
awk -v s="$split" -v r="$rep256" -v lo="$lo" -v hi="$hi" 'BEGIN { g = s - r; exit !(g >= lo - 1e-9 && g <= hi + 1e-9) }' \
  && ok || fail "gather at 2048 tokens $split - $rep256 not in [$lo, $hi]"
# provenance: both parts measured, with the file and its lines
expect_grep '"provenance": "measured"' "$tmp/h100.json"
expect_grep "\"file\": \"$aicg\"" "$tmp/h100.json"
expect_grep '"lines": "[0-9]+-[0-9]+"' "$tmp/h100.json"
expect_grep "\"file\": \"$aicn\"" "$tmp/h100.json"
be=$(json_top breakeven_tokens "$tmp/h100.json")
# the same parts are what the project bundles for H100 (data/parts.tsv): the default agrees
expect_rc 0 "$TPSPLIT" predict --gpu H100 --tp 8 --path dense-bf16 --gather nccl --tokens 16384 --json
[ "$(json_top breakeven_tokens "$tmp/out")" = "$be" ] && ok || fail "bundled parts vs the same files given: $be"
# and the leave-one-GPU-out table's measured break-even agrees within 5%: its curve is the
# measured points alone (Steffen in log-log, twins merged: the held-out truth may not lean on a
# model), predict's follows the path's model between them (doc/fitting.md); 2445 vs 2559 here
loo=$(awk '$1 == "H100-SXM" && $2 == "dense-bf16" && $3 == 8 { print $4 }' "$top_srcdir/doc/loo.md")
expect_near "$be" "$loo" 0.05 "H100 TP8 dense-bf16 measured break-even vs doc/loo.md"

# --- per backend: a measured NCCL log of 8 H20s and a measured custom table, each named
cat > "$tmp/custom8.tsv" <<'EOF'
# a custom one-shot gather of 8 ranks (test data: 7 us + S (n-1)/n / 300 GB/s)
#@ gpu: H20
#@ gather: custom
bytes	ranks	time_us
EOF
awk 'BEGIN { for (s = 16384; s <= 16777216; s *= 2) printf "%d\t8\t%.4f\n", s, 7 + s * 7 / 8 / 300e3 }' >> "$tmp/custom8.tsv"
expect_rc 0 "$TPSPLIT" predict --gpu H20 --tp 8 --path dense-bf16 --gather nccl="$top_srcdir/tests/data/ncclt/current.txt" \
  --gather custom="$tmp/custom8.tsv" --tokens 1024 --json
expect_grep '"custom": \{' "$tmp/out"
expect_grep "\"file\": \"$tmp/custom8.tsv\"" "$tmp/out"
expect_grep "\"file\": \"$top_srcdir/tests/data/ncclt/current.txt\"" "$tmp/out"
# the custom gather at 1024 tokens (8 x 128 rows x 3584 B) is the table's line, interpolated
want=$(awk 'BEGIN { s = 8 * 128 * 3584; print 7 + s * 7 / 8 / 300e3 }')
got=$(row_val 1024 split_us "$tmp/out")
"$TPSPLIT" predict --gpu H20 --tp 8 --path dense-bf16 --tokens 128 --json > "$tmp/r128.json"
rows=$(row_val 128 replicated_us "$tmp/r128.json")
awk -v s="$got" -v g="$rows" -v w="$want" 'BEGIN { d = (s - g) / w - 1; if (d < 0) d = -d; exit !(d < 0.01) }' \
  && ok || fail "custom gather at 1024 tokens: split $got - GEMM(128) $rows vs $want"
# the backend is the file's own when none is named; a contradiction is an error
expect_rc 2 "$TPSPLIT" predict --gpu H20 --tp 8 --gather nccl="$tmp/custom8.tsv"
one_line_error "$tmp/custom8.tsv: measures the custom gather, not nccl"

# --- the default names every part: H200 w8a16 (the H100's table of the kernels' current dispatch, its
# sibling: data/parts.tsv) with the NCCL gather AIConfigurator measured on 8 H200s
# (data/aic/nccl_h200_sxm.tsv.gz, issue 27 item 1)
expect_rc 0 "$TPSPLIT" predict --gpu H200 --tp 8 --path w8a16 --gather nccl --tokens 128,1024 --json
cp "$tmp/out" "$tmp/h200.json"
expect_rc 0 "$TPSPLIT" predict --gpu H200 --tp 8 --path w8a16 --gather nccl --tokens 128,1024
expect_grep "^# \[[0-9]+\] GEMM w8a16 on H200-SXM, K 5120 N 1792, bench harness: sibling: data/h100_w8a16_grid_5120x1792_w8a16.tsv lines [0-9]+-[0-9]+ \(H100-SXM's tpsplit bench gemm table, w8a16 K 5120 N 1792, rows 1..16384, moved to H200-SXM by the regime's spec ratio: HBM x1.433 where the weights stream" "$tmp/out"
expect_grep "gather nccl on H200-SXM at TP 8: measured: data/aic/nccl_h200_sxm.tsv.gz lines [0-9]+-[0-9]+ \(nccl-tests all_gather via AIConfigurator, NCCL 2.29.2, 8 GPUs" "$tmp/out"
expect_grep '^ +1024 +128 .* nccl +b,b,m$' "$tmp/out"
# its gather at T = 1024 (8 x 128 rows x 3584 B = 3.5 MiB) lies between the file's measured
# gathers at 2 and 4 MiB of 8 GPUs (each the mean over its dtypes); replicated(128) = GEMM(128 rows)
set -- $(gzip -dc "$data/aic/nccl_h200_sxm.tsv.gz" | awk -F'\t' '$3 == "all_gather" && $4 == 8 && ($5 == 2097152 || $5 == 4194304) {
    s[$5] += log($6); n[$5]++ } END { printf "%.15g %.15g", exp(s[2097152] / n[2097152]), exp(s[4194304] / n[4194304]) }')
lo=$1; hi=$2
split=$(row_val 1024 split_us "$tmp/h200.json")
rep128=$(row_val 128 replicated_us "$tmp/h200.json")
awk -v s="$split" -v r="$rep128" -v lo="$lo" -v hi="$hi" 'BEGIN { g = s - r; exit !(g >= lo - 1e-9 && g <= hi + 1e-9) }' \
  && ok || fail "H200 gather at 1024 tokens $split - $rep128 not in [$lo, $hi]"
# a GPU with no measurement of its own: its sibling's (model/predict/resolve.h).  The B300 has
# the B200's architecture (sm100) and fabric (NVLink5, 18 links): the B200's GEMM table moved
# by the spec ratios, its NCCL gather as measured
expect_rc 0 "$TPSPLIT" predict --gpu B300 --tp 8 --path dense-bf16 --gather nccl --tokens 1024
expect_grep "GEMM dense-bf16 on B300, K 5120 N 1792, aic harness: sibling: data/aic/gemm_b200_sxm_k5120.tsv.gz lines [0-9]+-[0-9]+ \(B200's .*moved to B300 by the regime's spec ratio" "$tmp/out"
expect_grep "gather nccl on B300 at TP 8: sibling: data/aic/nccl_b200_sxm.tsv.gz lines [0-9]+-[0-9]+ \(B200's .*as measured \(B300 has the same fabric\)" "$tmp/out"
expect_grep '^ +1024 +128 .* nccl +b,b,b$' "$tmp/out"
# the H800 (the H100's die, 8 NVLinks): its GEMM the H100's measurement moved, named; its
# gather (8 links, not the H100's 18: no sibling) transferred from the GPUs named
expect_rc 0 "$TPSPLIT" predict --gpu H800 --tp 8 --path dense-bf16 --tokens 1024 --json
expect_grep '"provenance": "sibling"' "$tmp/out"
expect_grep '"transferred_from": "H100-SXM"' "$tmp/out"
expect_grep '"transferred_from": "A100-SXM-80GB,H100-SXM,H200-SXM,B200"' "$tmp/out"
# --measured-only refuses a sibling's measurement
expect_rc 2 "$TPSPLIT" predict --gpu H800 --tp 1 --path dense-bf16 --measured-only
expect_grep "the GEMM is H100-SXM's measurement, a sibling's" "$tmp/err"
# ... and a measurement of the other harness converted (by the cross-GPU model's two forms: up to 18% here)
expect_rc 2 "$TPSPLIT" predict --gpu B200 --tp 8 --path native-fp8 --gather nccl --harness bench --measured-only
expect_grep "gemm_b200_sxm_k5120.tsv.gz:[0-9]+: B200 native-fp8: the GEMM is B200's measurement in the other harness, converted to bench \(--measured-only allows no conversion; ask --harness aic" "$tmp/err"
expect_rc 0 "$TPSPLIT" predict --gpu B200 --tp 8 --path native-fp8 --gather nccl --measured-only
# a sibling's curve that the question leaves says so, as a part's own does (H200 marlin: the H20's table, rows 1..)
expect_rc 0 "$TPSPLIT" predict --gpu H200 --tp 8 --path marlin-w8a16
expect_grep '^# parts: GEMM sibling\+model\[1\]' "$tmp/out"
# a part from a model names no file in JSON: at a shape no bundled table holds, the H800's w8a16 is the model's,
# and the H100 K 7168 table it passed over is no source of it (text and JSON agree)
expect_rc 0 "$TPSPLIT" predict --gpu H800 --tp 8 --path w8a16 --k 4096 --n 1024 --json
expect_nogrep '"file": ' "$tmp/out"
expect_nogrep 'h100_w8a16_grid_7168x2112' "$tmp/out"

# --- a measured range that does not reach the question: the model outside it, flagged
awk -F'\t' '/^#/ || $1 == "rows" || $1 <= 512' "$data/h200_gemm_dense-bf16.tsv" > "$tmp/g512.tsv"
expect_rc 0 "$TPSPLIT" predict --gpu H200 --tp 1 --path dense-bf16 --gemm "$tmp/g512.tsv" --tokens 512,1024
expect_grep '^# parts: GEMM measured\+model\[1\]' "$tmp/out"
expect_grep '^ +512 +512 .* m,m,m$' "$tmp/out"   # the one-rank gather: data/allgather_h200_tp1_*.txt
expect_grep '^ +1024 +1024 .* t,t,m$' "$tmp/out"
# 512 rows are the table's own line
want=$(awk -F'\t' '$1 == 512 { print $2 }' "$tmp/g512.tsv")
expect_near "$(awk '$1 == 512 { print $3 }' "$tmp/out")" "$want" 0.005 "replicated(512) from the table"
# ... and no model allowed: one line naming the file and line, exit 2, no figures written
expect_rc 2 "$TPSPLIT" predict --gpu H200 --tp 1 --path dense-bf16 --gemm "$tmp/g512.tsv" --tokens 512,16384 --measured-only
one_line_error "$tmp/g512.tsv:[0-9]+: measured rows 1\.\.512 do not reach the question's 1\.\.16384"
expect_rc 2 "$TPSPLIT" plot --gpus H200 --tp 1 --paths dense-bf16 --gemm "$tmp/g512.tsv" --measured-only -o "$tmp/figs"
[ -e "$tmp/figs" ] && fail "figures written after an input error" || ok
expect_rc 2 "$TPSPLIT" crossover --gpus H200 --tp 8 --paths dense-bf16 --measured-only
one_line_error "H200-SXM TP8: no measurement of the custom gather"

# --- bad input (issue 16 item 9): one line naming the file (and line, or the missing shape)
# an AIC table with an unknown dtype in a row
{ gzip -dc "$aicg" | sed -n '1,/^gpu	/p'; gzip -dc "$aicg" | awk -F'\t' 'NR > 7 && /^h100/ { n++; if (n == 3) $4 = "int3"; print; if (n == 5) exit }' OFS='\t'; } > "$tmp/aic_dtype.tsv"
expect_rc 2 "$TPSPLIT" predict --gpu H100 --path dense-bf16 --gemm "$tmp/aic_dtype.tsv:dtype=bfloat16"
one_line_error "$tmp/aic_dtype.tsv:[0-9]+: .*int3"
# a selection of a dtype AIC does not know, and one that is not a tpsplit path
expect_rc 2 "$TPSPLIT" predict --gpu H100 --gemm "$aicg:dtype=int3"
one_line_error "$aicg: unknown dtype 'int3'"
expect_rc 2 "$TPSPLIT" predict --gpu H100 --gemm "$aicg:dtype=int8_wo"
one_line_error "$aicg: dtype int8_wo is not a kernel path of tpsplit"
# fp8_block is a path (fp8-block), but the bf16/fp8 file holds none of its rows (they are in their own file)
expect_rc 2 "$TPSPLIT" predict --gpu H100 --gemm "$aicg:dtype=fp8_block"
one_line_error "$aicg: no rows with dtype fp8_block"
# the asked shape is not in the table: K (exact), N (nothing measured on one side)
expect_rc 2 "$TPSPLIT" predict --gpu H100 --path dense-bf16 --gemm "$aicg" --k 7168
one_line_error "$aicg: no rows with dtype bfloat16, k 7168 \(k in the file: 5120\)"
expect_rc 2 "$TPSPLIT" predict --gpu H100 --path dense-bf16 --gemm "$aicg" --n 100000
one_line_error "$aicg: no rows with dtype bfloat16, k 5120, n 100000, nor measured n on both sides"
# N inside the measured ones: interpolated, and said so
expect_rc 0 "$TPSPLIT" predict --gpu H100 --path dense-bf16 --gemm "$aicg" --n 1000 --tokens 64
expect_grep 'N 768 and 1024 interpolated log-linearly to 1000' "$tmp/out"
# the asked TP is not in the NCCL table
expect_rc 2 "$TPSPLIT" predict --gpu H100 --tp 16 --gather "$aicn"
one_line_error "$aicn: no gather at TP 16 \(num_gpus in the file: 2, 4, 8\)"
# a gather log of another collective
sed 's/all_gather_perf/all_reduce_perf/' "$top_srcdir/tests/data/ncclt/current.txt" > "$tmp/allreduce.txt"
expect_rc 2 "$TPSPLIT" predict --gpu H20 --tp 8 --gather "$tmp/allreduce.txt"
one_line_error "$tmp/allreduce.txt:[0-9]+: all_reduce_perf log, not all_gather"
# an AIC table of the other kind, and an op that is not an all-gather
expect_rc 2 "$TPSPLIT" predict --gpu H100 --gather "$aicg"
one_line_error "$aicg: an AIConfigurator GEMM table: give it to --gemm"
expect_rc 2 "$TPSPLIT" predict --gpu H100 --gather "$aicn:op=all_reduce"
one_line_error "$aicn: op all_reduce is not an all-gather"
# a measurement of another GPU, or of another path
expect_rc 2 "$TPSPLIT" predict --gpu H100 --tp 8 --gemm "$data/h200_gemm_dense-bf16.tsv"
one_line_error "$data/h200_gemm_dense-bf16.tsv: measures H200-SXM, not the target H100-SXM"
expect_rc 2 "$TPSPLIT" predict --gpu H100 --path native-fp8 --gemm "$aicg:dtype=bfloat16"
one_line_error "$aicg: measures the dense-bf16 path, not the asked native-fp8"
expect_rc 2 "$TPSPLIT" crossover --gpus H200 --gemm "$data/h200_gemm_dense-bf16.tsv" --k 7168
one_line_error "$data/h200_gemm_dense-bf16.tsv: measures K 5120 N 1792, not the asked K 7168 N 1792"
# files with the wrong scaling
expect_rc 2 "$TPSPLIT" predict --gpu H100 --gemm "$aicg" --scaling model
one_line_error "--gemm, --gather FILE, --measured-only, --no-bundled and --harness go with --scaling parts"

# --- a fit file as a part: its GEMM moved to the target, and said so
expect_rc 0 "$TPSPLIT" fit "$data/h20_tp8_fused_wqa_wkv.tsv" -o "$tmp/h20.fit"
expect_rc 0 "$TPSPLIT" predict --gpu H200 --tp 8 --gemm "$tmp/h20.fit" --tokens 2048
expect_grep "GEMM marlin-w8a16 on H200-SXM, K 5120 N 1792, bench harness: transferred: the GEMM of the fit $tmp/h20.fit \(H20 marlin-w8a16\)" "$tmp/out"
# targets default to what the files measure
expect_rc 0 "$TPSPLIT" crossover --gemm "$aicg:dtype=fp8" --gather "$aicn" --samples 20
expect_grep '^H100-SXM +2 +native-fp8 ' "$tmp/out"
expect_grep '^H100-SXM +8 +native-fp8 ' "$tmp/out"
n=$(grep -c '^H100-SXM ' "$tmp/out"); [ "$n" -eq 3 ] && ok || fail "$n rows, want TP 2, 4, 8 of the NCCL table"

# --- predictions as files: `predict -o` writes a split table that validate and inspect read
expect_rc 0 "$TPSPLIT" predict --gpu H200 --tp 1 --path dense-bf16 --no-bundled --gather custom="$data/allgather_h200_tp1_custom.txt" \
  --gather nccl="$data/allgather_h200_tp1_nccl.txt" -o "$tmp/pred.tsv"
expect_rc 0 "$TPSPLIT" inspect "$tmp/pred.tsv"
expect_grep 'split table, 11 rows' "$tmp/out"
# its times are predict's: replicated(1024) in the file = the printed one (0.1 us)
a=$(awk -F'\t' '$1 == 1024 { print $3 }' "$tmp/pred.tsv")
"$TPSPLIT" predict --gpu H200 --tp 1 --path dense-bf16 --no-bundled --tokens 1024 > "$tmp/p1.txt"
expect_near "$(awk '$1 == 1024 { print $3 }' "$tmp/p1.txt")" "$a" 0.002 "replicated(1024) in the -o table"
# without the bundled H200 table the GEMM is the cross-GPU model fitted without the H200
expect_grep '^# \[[0-9]+\] GEMM dense-bf16 on H200-SXM, K 5120 N 1792, bench harness: transferred: .* fitted on A100-SXM-80GB,H100-SXM,B200,L40S,RTX-PRO-6000-Server ' "$tmp/pred.tsv"
expect_rc 0 "$TPSPLIT" validate --predicted "$tmp/pred.tsv" --measured "$data/h200_tp1_fused_wqa_wkv_dense-bf16.tsv"
expect_grep '^verdict: within tolerance' "$tmp/out"
# the committed pre-registered prediction is predict's printed text (space-aligned): validate
# reads it; checked against a TP8 table made from its own rows, 10% slower
awk '/^ +tokens rows_per_rank/ { f = 1; next } f && $1 ~ /^[0-9]+$/ { printf "%s\t%s\t%.4f\t%.4f\n", $1, $2, 1.1 * $3, 1.1 * $4; next } f { exit }' \
  "$data/pred_h200_tp8_marlin-w8a16.txt" > "$tmp/rows"
{ printf '#@ gpu: H200\n#@ tp: 8\n#@ k: 5120\n#@ n: 1792\n#@ path: marlin-w8a16\n#@ out_bytes_per_token: 3584\n#@ gather: auto\n'
  printf 'tokens\trows_per_rank\treplicated_us\tsplit_us\n'; cat "$tmp/rows"; } > "$tmp/meas8.tsv"
expect_rc 0 "$TPSPLIT" validate --predicted "$data/pred_h200_tp8_marlin-w8a16.txt" --measured "$tmp/meas8.tsv" --json
expect_grep '"predicted_kind": "table"' "$tmp/out"
med=$(awk '/"all": \{/ { f = 1 } f && /"median_abs"/ { gsub(/[",]/, ""); print $2; exit }' "$tmp/out")
expect_near "$med" "$(awk 'BEGIN { print 1 - 1 / 1.1 }')" 0.01 "median |err| of the pre-registered prediction vs itself x1.1"
# the same through a pipe: sniffed and read from one read of the stream
cp "$tmp/out" "$tmp/pred_file.json"
cat "$data/pred_h200_tp8_marlin-w8a16.txt" | "$TPSPLIT" validate --predicted /dev/stdin --measured "$tmp/meas8.tsv" --json \
  >"$tmp/out" 2>"$tmp/err" && ok || fail "validate --predicted predict's text from a pipe: $(cat "$tmp/err")"
sed "s|$data/pred_h200_tp8_marlin-w8a16.txt|F|" "$tmp/pred_file.json" >"$tmp/o1"; sed 's|/dev/stdin|F|' "$tmp/out" >"$tmp/o2"
cmp -s "$tmp/o1" "$tmp/o2" && ok || fail "validate of predict's text from a pipe differs from the file"
# against a TP1 table it says why not (a TP8 prediction)
expect_rc 2 "$TPSPLIT" validate --predicted "$data/pred_h200_tp8_marlin-w8a16.txt" --measured "$data/h200_tp1_fused_wqa_wkv_w8a16.tsv"
one_line_error "$data/pred_h200_tp8_marlin-w8a16.txt: predicted for TP8, measured .* is TP1"

# --- the main job answers first: H100 and H200 at TP8, with the sources
expect_rc 0 "$TPSPLIT" --no-plots --samples 20
awk '/^gpu /{ n++ } n == 1 && /^H/ { print $1; exit }' "$tmp/out" | grep -q '^H100-SXM$' && ok || fail "the answer is not first"
expect_grep '^  \[[0-9]+\] GEMM dense-bf16 on H100-SXM, K 5120 N 1792, aic harness: measured: data/aic/gemm_h100_sxm_k5120.tsv.gz lines' "$tmp/out"

# --- at the DeepSeek-V3 shape (K 7168 N 2112) the measured tables of that shape answer (data/parts.tsv): the H100's
# own (w8a16, dense-bf16), the H200's own dense-bf16, and for the H200's w8a16 the H100's table as its sibling; the
# replicated GEMM at T = 1024 is the table's row 1024 (recomputed here from the raw file)
for c in "H100-SXM w8a16 measured: data/h100_w8a16_grid_7168x2112_w8a16.tsv" \
         "H100-SXM dense-bf16 measured: data/h100_w8a16_grid_7168x2112_dense-bf16.tsv" \
         "H200-SXM dense-bf16 measured: data/h200_gemm_7168x2112_dense-bf16.tsv" \
         "H200-SXM w8a16 sibling: data/h100_w8a16_grid_7168x2112_w8a16.tsv"; do
  set -- $c
  expect_rc 0 "$TPSPLIT" predict --gpu "$1" --tp 8 --path "$2" --k 7168 --n 2112 --gather nccl --tokens 1024
  expect_grep "^# \[1\] GEMM $2 on $1, K 7168 N 2112, bench harness: $3 $4 lines [0-9]+-[0-9]+" "$tmp/out"
  if [ "$3" = measured: ]; then
    want=$(awk -F'\t' '$1 == 1024 { printf "%.1f", $2 }' "$data/${4#data/}")
    got=$(awk '$1 == 1024 && $2 == 128 { print $3 }' "$tmp/out")
    [ -n "$want" ] && [ "$got" = "$want" ] && ok || fail "$1 $2 at K 7168: replicated at T 1024 is '$got', the table's row 1024 '$want'"
  fi
done

# --- the H200 tables of the DeepSeek-V4.1 compressor and indexer shapes (K 5120, N 32, 512, 1024) and the
# AIConfigurator fp8_block shapes (N 1536, 2048), and its fp8-block at K 7168 N 2112, answer a bench-harness question
# at their shape (data/parts.tsv: after the AIConfigurator rows, which answer by default where they hold the shape);
# the replicated GEMM at T = 1024 is the table's row 1024, recomputed from the raw file
for c in 5120x32:dense-bf16 5120x32:native-fp8 5120x32:fp8-block 5120x512:dense-bf16 5120x512:native-fp8 5120x512:fp8-block \
         5120x1024:dense-bf16 5120x1024:native-fp8 5120x1024:fp8-block 5120x1536:dense-bf16 5120x1536:fp8-block \
         5120x2048:dense-bf16 5120x2048:fp8-block 7168x2112:fp8-block; do
  kn=${c%%:*} p=${c#*:} k=${kn%x*} n=${kn#*x} f=data/h200_gemm_${kn}_${c#*:}.tsv
  expect_rc 0 "$TPSPLIT" predict --gpu H200-SXM --tp 8 --path "$p" --k "$k" --n "$n" --gather nccl --tokens 1024 --harness bench
  expect_grep "^# \[1\] GEMM $p on H200-SXM, K $k N $n, bench harness: measured: $f lines [0-9]+-[0-9]+" "$tmp/out"
  want=$(awk -F'\t' '$1 == 1024 { printf "%.1f", $2 }' "$data/${f#data/}")
  got=$(awk '$1 == 1024 && $2 == 128 { print $3 }' "$tmp/out")
  [ -n "$want" ] && [ "$got" = "$want" ] && ok || fail "H200 $p at K $k N $n: replicated at T 1024 is '$got', the table's row 1024 '$want'"
done

# --- the H100's AIConfigurator table converted to the bench harness by the H200's tables in both at K 5120 N 1024
# (native-fp8): past the 8192 rows the H200's bench table holds, the ratio is the one at 8192 (model/predict/resolve.c
# tps_resolve_harness_convert_sibling; it was the bench table's last row over the AIConfigurator row far past it,
# x0.21 at 32768 rows).  At T 16384 (TP8: the replicated GEMM of 16384 rows): H100 aic(16384) x H200 bench(8192) /
# H200 aic(8192), recomputed here from the raw files
expect_rc 0 "$TPSPLIT" predict --gpu H100-SXM --tp 8 --path native-fp8 --k 5120 --n 1024 --gather nccl --tokens 16384 --harness bench
expect_grep "^# \[1\] GEMM native-fp8 on H100-SXM, K 5120 N 1024, bench harness: converted: data/aic/gemm_h100_sxm_k5120.tsv.gz lines [0-9]+-[0-9]+ .*converted from the aic harness to bench by H200-SXM's tables in both \(x0\.[0-9]+\.\.x1\.05: data/h200_gemm_5120x1024_native-fp8.tsv" "$tmp/out"
aic_row() { gzip -dc "$data/aic/gemm_$1_k5120.tsv.gz" | awk -F'\t' -v m="$2" '$4 == "fp8" && $6 == 1024 && $7 == 5120 && $5 == m { print $8 }'; }
a100=$(aic_row h100_sxm 16384) a200=$(aic_row h200_sxm 8192)
b200=$(awk -F'\t' '$1 == 8192 { print $2 }' "$data/h200_gemm_5120x1024_native-fp8.tsv")
want=$(awk -v a="$a100" -v b="$b200" -v c="$a200" 'BEGIN { printf "%.1f", a * b / c }')
got=$(awk '$1 == 16384 && $2 == 2048 { print $3 }' "$tmp/out")
[ -n "$a100" ] && [ -n "$a200" ] && [ -n "$b200" ] && [ "$got" = "$want" ] && ok \
  || fail "H100 native-fp8 K 5120 N 1024 bench at T 16384: replicated '$got', want '$want' (aic $a100 x $b200 / $a200)"
# --- a data/parts.tsv row is held to its file and to the header's grammar: each bad copy of the file is refused
# with parts.tsv:LINE, naming what is wrong (a row of the H200's file given as the H100's answered as the H100's
# measurement; a path that contradicts its file was skipped in silence; CRLF, blanks, a repeated row, an unknown
# selector key or dtype were read)
pd="$tmp/pdata"
cp -R "$top_srcdir/data" "$pd"
cp "$pd/parts.tsv" "$tmp/parts0"
T=$(printf '\t')
first=$(grep -n "^H200-SXM${T}gemm${T}dense-bf16${T}-${T}h200_gemm_dense-bf16.tsv" "$tmp/parts0" | head -n 1 | cut -d: -f1)
sg=$(grep -n "backend=sglang" "$tmp/parts0" | head -n 1 | cut -d: -f1)
l40=$(grep -n "^L40S" "$tmp/parts0" | head -n 1 | cut -d: -f1)
h20=$(grep -n "^H20${T}gemm" "$tmp/parts0" | head -n 1 | cut -d: -f1)
bad_parts() { # bad_parts SED LINE REGEX GPU PATH
  sed "$1" "$tmp/parts0" >"$pd/parts.tsv"
  TPSPLIT_DATADIR="$pd" "$TPSPLIT" predict --gpu "$4" --tp 8 --path "$5" >"$tmp/out" 2>"$tmp/err"; rc=$?
  [ "$rc" -eq 2 ] && ok || fail "parts.tsv '$1': exit $rc, want 2"
  [ "$(wc -l <"$tmp/err")" -eq 1 ] && ok || fail "parts.tsv '$1': want one stderr line: $(head -c 300 "$tmp/err")"
  expect_grep "^tpsplit predict: $pd/parts.tsv:$2: $3" "$tmp/err"
}
bad_parts "${first}s/^H200-SXM/H100-SXM/" "$first" "data/h200_gemm_dense-bf16.tsv measured H200-SXM, not the row's H100-SXM$" H100 dense-bf16
bad_parts "${first}s/${T}dense-bf16${T}/${T}native-fp8${T}/" "$first" "data/h200_gemm_dense-bf16.tsv measures the dense-bf16 path, not the row's native-fp8$" H200 native-fp8
bad_parts "${sg}s/dtype=bfloat16,backend=sglang/dtype=bfloat17/" "$sg" "selector 'dtype=bfloat17' picks bfloat17 rows, not the row's dense-bf16 path" H200 dense-bf16
bad_parts "${sg}s/backend=sglang/foo=1/" "$sg" "selector key 'foo' on a gemm row" H200 dense-bf16
bad_parts "${h20}s/^H20${T}/H20 ${T}/" "$h20" "cell 1 'H20 ': empty or with blanks around it$" H200 dense-bf16
bad_parts "${l40}p" "$((l40 + 1))" "the same part as line $l40$" H200 dense-bf16
bad_parts 's/$/\r/' 1 "CRLF line ends" H200 dense-bf16
cp "$tmp/parts0" "$pd/parts.tsv"
TPSPLIT_DATADIR="$pd" "$TPSPLIT" predict --gpu H200 --tp 8 --path dense-bf16 >/dev/null 2>&1 && ok || fail "the bundled parts.tsv copied back is refused"
# --- data/xgpu.fit: a model parameter is never negative (a negative tile_us moved the B300's replicated GEMM from
# 49.3 to 17.9 us, exit 0), the times and efficiencies beside them are > 0, one fit per path (fabric) and held-out GPU
cp "$pd/xgpu.fit" "$tmp/xgpu0"
bad_xgpu() { # bad_xgpu SED LINE REGEX
  sed "$1" "$tmp/xgpu0" >"$pd/xgpu.fit"
  TPSPLIT_DATADIR="$pd" "$TPSPLIT" predict --gpu B300 --tp 8 --path dense-bf16 >"$tmp/out" 2>"$tmp/err"; rc=$?
  [ "$rc" -eq 2 ] && ok || fail "xgpu.fit '$1': exit $rc, want 2"
  expect_grep "^tpsplit predict: $pd/xgpu.fit:$2: $3" "$tmp/err"
}
g1=$(grep -n '"path": "dense-bf16", "held_out": null' "$tmp/xgpu0" | head -n 1 | cut -d: -f1)
a1=$(grep -n '"fabric": "nvlink", "held_out": null' "$tmp/xgpu0" | head -n 1 | cut -d: -f1)
bad_xgpu "${g1}s/\"tile_us\": /\"tile_us\": -/" "$g1" "'tile_us' -[0-9.]* is negative$"
bad_xgpu "${g1}s/\"sharp\": [0-9.]*/\"sharp\": 0/" "$g1" "'sharp' 0 is not > 0$"
bad_xgpu "${a1}s/\"custom_eff\": /\"custom_eff\": -/" "$a1" "'custom_eff' -[0-9.]* is not > 0$"
bad_xgpu "${g1}p" "$((g1 + 1))" "a second dense-bf16 fit held out - \\(also gemm\\[0\\]\\)$"
cp "$tmp/xgpu0" "$pd/xgpu.fit"
finish
