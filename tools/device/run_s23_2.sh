#!/bin/bash
# Carry: .w8carry/bin/{tpsplit,test_gemm_gpu} (this session's tree: the reduce-scatter fix-up the default,
# TPS_W8P_SKRS_DEFAULT 1, priced by model/core/w8plan.c SKRS_* from call 1; ../configure --enable-static-deps),
# .w8carry/run_w8a16.sh, tools/device/versions.sh.  Twenty-third session, call 2 (issue 28 items 1, 3, 4): test_gemm_gpu
# of the new default; the ratio tables of the new dispatch (29 M, w8a16 and dense-bf16, 50 samples, rows alternated,
# both shapes); then, if time is left, the cp.async staging of the reduce-scatter slices (TPS_W8_SKRS=2, an
# experiment: its own kernel instance) under test_gemm_gpu's quick mode and against SKRS=1 (2/1/2) where an even
# grid is cut, into rs2.txt.
B=.w8carry/bin; OUT=${OUT:-/tmp/out}; mkdir -p $OUT
exec > >(tee -a $OUT/console.txt) 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
. tools/device/versions.sh; tps_dev_versions $B >>$OUT/notes.txt 2>&1
tps_dev_h200_tables $B 330
echo "tables (${SECONDS}s)"
[ "$SECONDS" -gt 420 ] && { echo "no time for the SKRS=2 experiment"; exit 0; }
TPS_W8_SKRS=2 TPS_TEST_QUICK=1 timeout 60 $B/test_gemm_gpu >$OUT/test2.txt 2>&1; echo "test_gemm_gpu quick SKRS=2 exit $? (${SECONDS}s)" | tee -a $OUT/notes.txt
grep FAIL $OUT/test2.txt | head -5; tail -1 $OUT/test2.txt; rm -f $OUT/test2.txt
tps_dev_w8_skrs $OUT/rs2.txt $B "2 1 2" rs2 540 "7168x2112 256,640,768" "5120x1792 256,512,1024 56" "5120x1792 256,512 112" \
  "7168x2112 256 119"
echo "FAIL lines in log: $(grep -c FAIL $OUT/log.txt)"
echo "all done (${SECONDS}s)"
