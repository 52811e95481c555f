#!/bin/sh
# tests/loo.sh: AIConfigurator tables (tpsplit inspect) and the leave-one-GPU-out command.
. "$top_srcdir/tests/lib.sh"
aic="$top_srcdir/data/aic"

# --- inspect reads the gzipped tables with their provenance; a selection filters rows
expect_rc 0 "$TPSPLIT" inspect "$aic/gemm_h100_sxm_k5120.tsv.gz:dtype=fp8,n=2048,m=1-4"
expect_grep '^# source: ai-dynamo/aiconfigurator .*h100_sxm/gemm/trtllm' "$tmp/out"
expect_grep '^# copy: 2026-12-04 from shared/data/aic/gemm_h100_sxm.tsv.gz' "$tmp/out"
n=$(grep -c '^trtllm' "$tmp/out")
[ "$n" -eq 4 ] && ok || fail "fp8 n=2048 m=1-4: $n rows, want 4"
# the m=1 row, as zcat reads it: 16.928 us, 2*1*2048*5120/16.928/1e6 = 1.24 TFLOPS
want=$(gzip -dc "$aic/gemm_h100_sxm_k5120.tsv.gz" | awk -F'\t' '$4=="fp8" && $5==1 && $6==2048 {print $8}')
got=$(awk '$1=="trtllm" && $4==1 {print $7}' "$tmp/out")
[ -n "$want" ] && [ "$got" = "$want" ] && ok || fail "m=1 time '$got', zcat says '$want'"
expect_rc 0 "$TPSPLIT" inspect --json "$aic/nccl_b200_sxm.tsv.gz:op=all_gather,num_gpus=8,dtype=half"
expect_grep '"nrows": 21' "$tmp/out"
expect_grep '"busbw_gbps"' "$tmp/out"

# --- bad input: one line naming the file (and line, or the missing shape), exit 2
expect_rc 2 "$TPSPLIT" inspect "$aic/gemm_h100_sxm_k5120.tsv.gz:dtype=fp8,n=1792"
expect_grep "^tpsplit: $aic/gemm_h100_sxm_k5120.tsv.gz: no rows with dtype fp8, n 1792; n in the file: .*1536, 2048" "$tmp/err"
[ "$(wc -l < "$tmp/err")" -eq 1 ] && ok || fail "missing shape: not one line"
[ ! -s "$tmp/out" ] && ok || fail "missing shape: output written"
expect_rc 2 "$TPSPLIT" inspect "$aic/gemm_h100_sxm_k5120.tsv.gz:dtype=fp4"
expect_grep "unknown dtype 'fp4'" "$tmp/err"
gzip -dc "$aic/gemm_l40s_k5120.tsv.gz" | awk -F'\t' 'NR==12{$4="bf16x"}1' OFS='\t' > "$tmp/bad.tsv"
expect_rc 2 "$TPSPLIT" inspect "$tmp/bad.tsv"
expect_grep "^tpsplit: $tmp/bad.tsv:12: unknown dtype 'bf16x'" "$tmp/err"
gzip -dc "$aic/nccl_h100_sxm.tsv.gz" | awk -F'\t' 'NR==20{$3="broadcast"}1' OFS='\t' | gzip > "$tmp/bad.tsv.gz"
expect_rc 2 "$TPSPLIT" inspect "$tmp/bad.tsv.gz"
expect_grep "^tpsplit: $tmp/bad.tsv.gz:20: unknown op 'broadcast'" "$tmp/err"
head -c 3000 "$aic/gemm_b200_sxm_k5120.tsv.gz" > "$tmp/trunc.tsv.gz"
expect_rc 2 "$TPSPLIT" inspect "$tmp/trunc.tsv.gz"
expect_grep "^tpsplit: $tmp/trunc.tsv.gz:[0-9]+: read error" "$tmp/err"
printf '# source: ai-dynamo/aiconfigurator x\n' | gzip > "$tmp/hdr.gz"
expect_rc 2 "$TPSPLIT" inspect "$tmp/hdr.gz"
expect_grep "no header line" "$tmp/err"

finish
