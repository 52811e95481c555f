#!/bin/sh
# tests/cli/blockpaths.sh: fp8-block and nvfp4 as predictable paths (issue 27 item 10): a GPU with a
# bundled AIConfigurator table of the dtype is answered by it (values checked against the raw rows
# with awk), an unmeasured GPU of the same architecture by its measured sibling (named), others by
# the cross-GPU model's form (data/xgpu.fit), GPUs without FP4 tensor cores refused for nvfp4 with
# one line; every answer names its harness (aic).
. "$top_srcdir/tests/cli/lib.sh"
data="$TPSPLIT_DATADIR"
# the AIC table's time at M, N 1792: log-linear in N between the rows at N 1536 and 2048 (the
# measured part's rule, src/evidence: N interpolated log-linearly to 1792); where M+1 is
# measured too (apart from other rows) and is the faster, the two are one point of the curve,
# their geometric mean at M (the twin rule, model/numeric/robust.h): then that mean
aic_1792() {
  gzip -dc "$1" | awk -F'\t' -v m="$2" 'function v(r) { w = log(1792 / 1536) / log(2048 / 1536); return exp(log(a[r]) + w * (log(b[r]) - log(a[r]))) }
    $0 !~ /^#/ && $7 == 5120 && $6 == 1536 { a[$5] = $8 } $0 !~ /^#/ && $7 == 5120 && $6 == 2048 { b[$5] = $8 }
    END { t = v(m); tol = 1e-6
      if (m >= 64 && ((m + 1) in a) && ((m + 1) in b) && !((m - 1) in a) && !((m + 2) in a) && v(m + 1) < t) { t = sqrt(t * v(m + 1)) }
      printf "%.9g %g\n", t, tol }'
}
# replicated_us of the JSON row of T
json_repl() { sed -n 's/.*"replicated_us":\([0-9.e+-]*\),.*"tokens":'"$1"'}.*/\1/p' "$2" | head -1; }

# --- fp8-block on the GPUs with their own table: the table, at every M it measures
for g in H100:h100_sxm H200:h200_sxm B200:b200_sxm L40S:l40s RTX-PRO-6000:rtx_pro_6000_server; do
  gpu=${g%%:*} stem=${g#*:}
  f="$data/aic/gemm_${stem}_k5120_fp8_block.tsv.gz"
  expect_rc 0 "$TPSPLIT" predict --gpu "$gpu" --tp 1 --path fp8-block --tokens 1,16,256,4096 --json
  tr -d '\n ' < "$tmp/out" | sed 's/},{/}\n{/g' > "$tmp/rows"
  for m in 1 16 256 4096; do
    set -- $(aic_1792 "$f" $m)
    expect_near "$(json_repl $m "$tmp/rows")" "$1" "$2" "$gpu fp8-block replicated($m)"
  done
done
expect_rc 0 "$TPSPLIT" predict --gpu H100 --tp 8 --path fp8-block --gather nccl
expect_grep '^# \[1\] GEMM fp8-block on H100-SXM, K 5120 N 1792, aic harness: measured: data/aic/gemm_h100_sxm_k5120_fp8_block.tsv.gz lines' "$tmp/out"
expect_grep 'dtype fp8_block' "$tmp/out"

# --- nvfp4 on B200 and RTX PRO 6000: their tables
for g in B200:b200_sxm RTX-PRO-6000:rtx_pro_6000_server; do
  gpu=${g%%:*} stem=${g#*:}
  expect_rc 0 "$TPSPLIT" predict --gpu "$gpu" --tp 1 --path nvfp4 --tokens 1,64,2048 --json
  tr -d '\n ' < "$tmp/out" | sed 's/},{/}\n{/g' > "$tmp/rows"
  for m in 1 64 2048; do
    set -- $(aic_1792 "$data/aic/gemm_${stem}_k5120_nvfp4.tsv.gz" $m)
    expect_near "$(json_repl $m "$tmp/rows")" "$1" "$2" "$gpu nvfp4 replicated($m)"
  done
done
expect_rc 0 "$TPSPLIT" predict --gpu B200 --tp 8 --path nvfp4 --gather nccl
expect_grep '^# \[1\] GEMM nvfp4 on B200, K 5120 N 1792, aic harness: measured: data/aic/gemm_b200_sxm_k5120_nvfp4.tsv.gz lines' "$tmp/out"

# --- no FP4 tensor cores: one line, exit 2, nothing on stdout
for gpu in H100 H200 A100 L40S H20; do
  expect_rc 2 "$TPSPLIT" predict --gpu $gpu --tp 8 --path nvfp4
  [ ! -s "$tmp/out" ] && ok || fail "nvfp4 on $gpu: output on stdout"
  [ "$(wc -l < "$tmp/err")" -eq 1 ] && ok || fail "nvfp4 on $gpu: not one line: $(cat "$tmp/err")"
done
expect_rc 2 "$TPSPLIT" predict --gpu H100 --tp 8 --path nvfp4
expect_grep '^tpsplit predict: nvfp4 on H100-SXM at TP 8: n/a: H100-SXM has no FP4 tensor cores \(nvfp4 needs Blackwell\)$' "$tmp/err"
# in a grid: an n/a cell that says why
expect_rc 0 "$TPSPLIT" crossover --gpus H200 --tp 8 --paths nvfp4
expect_grep '^H200-SXM +8 +nvfp4 +n/a +n/a: H200-SXM has no FP4 tensor cores' "$tmp/out"
# a Blackwell GPU of a user table without the fp4_tflops column: refused too
awk -F'\t' 'BEGIN { OFS = "\t" } /^#/ { next } { NF = NF - 1; print }' "$data/gpus.tsv" > "$tmp/gpus_nofp4.tsv"
expect_rc 2 "$TPSPLIT" predict --gpu B200 --tp 8 --path nvfp4 --gpus-file "$tmp/gpus_nofp4.tsv"
expect_grep 'B200 has no FP4 tensor cores' "$tmp/err"

# --- unmeasured GPUs of a measured GPU's architecture: the sibling, named, moved by the right peak
expect_rc 0 "$TPSPLIT" predict --gpu H20 --tp 8 --path fp8-block
expect_grep "^# \[1\] GEMM fp8-block on H20, K 5120 N 1792, aic harness: sibling: data/aic/gemm_h100_sxm_k5120_fp8_block.tsv.gz .*H100-SXM's AIConfigurator .*moved to H20 by the regime's spec ratio: HBM x1.194 where the weights stream, fp8 peak x0.150" "$tmp/out"
expect_rc 0 "$TPSPLIT" predict --gpu B300 --tp 8 --path nvfp4 --gather nccl
expect_grep "^# \[1\] GEMM nvfp4 on B300, K 5120 N 1792, aic harness: sibling: data/aic/gemm_b200_sxm_k5120_nvfp4.tsv.gz .*B200's AIConfigurator .*fp4 peak x1.458 where it computes" "$tmp/out"
expect_rc 0 "$TPSPLIT" predict --gpu GB200 --tp 8 --path fp8-block --gather nccl --json
expect_grep '"prov": "sibling"|sibling' "$tmp/out"
expect_grep 'B200' "$tmp/out"
# outside the sibling's measured M: the cross-GPU model's fp8-block form, not spec-only
expect_rc 0 "$TPSPLIT" predict --gpu H20 --tp 8 --path fp8-block
expect_grep 'outside the measured range: transferred: the cross-GPU GEMM model \(model/latency/xgemm.h, fp8-block\) fitted on H100-SXM,H200-SXM,B200,L40S,RTX-PRO-6000-Server \(data/xgpu.fit\), by H20.s SMs, clock, fp8 peak' "$tmp/out"

# --- every prediction command takes them (decide: exit 1 is its "no split" verdict off SM90)
for p in fp8-block nvfp4; do
  expect_rc 0 "$TPSPLIT" crossover --gpus B200,B300 --tp 2,8 --paths $p
  expect_grep "^B300 +8 +$p " "$tmp/out"
  expect_rc 1 "$TPSPLIT" decide --gpu B200 --tp 8 --path $p --tokens 4096
  expect_grep "^tpsplit decide: B200, TP8, 4096 tokens, $p$" "$tmp/out"
  sed "s/	fp8-block	/	$p	/" "$data/models/deepseek-v3.tsv" > "$tmp/v3_$p.tsv"
  expect_rc 0 "$TPSPLIT" simulate --model "$tmp/v3_$p.tsv" --gpu B200 --tp 8
  expect_grep "$p" "$tmp/out"
done
expect_rc 0 "$TPSPLIT" plot --gpus B200 --tp 8 --paths nvfp4,fp8-block --no-render -o "$tmp/nvfp4_plot"
ls "$tmp/nvfp4_plot" | grep -q 'nvfp4' && ok || fail "plot: no nvfp4 figure in $(ls "$tmp/nvfp4_plot")"
finish
