#!/bin/bash
# Twenty-sixth session, call 1: on an H200, its W8A16 tables of the current dispatch first (issue 28 item 3; 29 M,
# both shapes, w8a16 and dense-bf16, 50 samples, rows alternated; test_gemm_gpu before them), then the SASS of this
# tree's gemm_w8a16_sm90.cu against 84c8256's (the check run_s25_3.sh was written for and never ran).  On an H100:
# the SASS check and test_gemm_gpu only.  Carry: .w8carry (bin built from 8256da9, the two objects, versions.sh,
# run_w8a16.sh).
. .w8carry/versions.sh
tps_dev_begin
if nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | grep -q H200; then
  tps_dev_h200_tables $B 400
else
  timeout 200 $B/test_gemm_gpu >$OUT/test.txt 2>&1; echo "test_gemm_gpu exit $? (${SECONDS}s)"
  grep -E "FAIL|test_gemm_gpu: " $OUT/test.txt | tail -8; rm -f $OUT/test.txt
fi
tps_dev_sass_cmp .w8carry/sm90_84c8256.o .w8carry/sm90_now.o gemm_w8a16_sm90.cu
echo "all done (${SECONDS}s)"
