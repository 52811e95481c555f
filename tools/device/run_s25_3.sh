#!/bin/bash
# Twenty-fifth session, call 3: call 2 found the device code of gemm_w8a16_sm90.cu changed (796 SASS lines) by the
# fix-up's slot loads moved into one helper (wk2_add_slot; ptxas: the same registers, no spill): that helper is
# dropped, only the per-plan occupancy counts stay (host code).  Here: the SASS of this tree's gemm_w8a16_sm90.cu
# (compiled here, sm_90a, the flags of data/h100_w8a16_ptxas_s23.txt) against 84c8256's, and test_gemm_gpu with this
# tree's binaries; on an H200, its tables of the current dispatch.  Carry: .w8carry (bin, the two objects, versions.sh,
# run_w8a16.sh).
. .w8carry/versions.sh
tps_dev_begin
tps_dev_sass_cmp .w8carry/sm90_84c8256.o .w8carry/sm90_now.o gemm_w8a16_sm90.cu
timeout 200 $B/test_gemm_gpu >$OUT/test.txt 2>&1; echo "test_gemm_gpu exit $? (${SECONDS}s)"
grep -E "FAIL|rows unforced|test_gemm_gpu: " $OUT/test.txt | tail -8
# on an H200: the tables of the current dispatch too (issue 28 item 3; no table starts past 330 s)
nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | grep -q H200 && tps_dev_h200_tables $B 330
echo "all done (${SECONDS}s)"
