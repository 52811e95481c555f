#!/bin/bash
# Carry: .w8carry/bin/{tpsplit,test_gemm_gpu} (main at 7c66448, ../configure --enable-static-deps; kernels/ and the
# dispatch unchanged through 0649765), .w8carry/run_w8a16.sh, tools/device/versions.sh.  Twenty-second session, calls
# from 2 on (issue 28 item 3): on an H200 only, test_gemm_gpu, then the ratio tables of the current dispatch (29 M,
# w8a16 and dense-bf16, 50 samples, rows alternated, both shapes; no table starts past 300 s); on any other GPU nothing.
B=.w8carry/bin; OUT=${OUT:-/tmp/out}; mkdir -p $OUT
exec > >(tee -a $OUT/console.txt) 2>&1
G=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "$G"
case "$G" in *H200*) ;; *) echo "not an H200: nothing run"; exit 0 ;; esac
. tools/device/versions.sh; tps_dev_versions $B >>$OUT/notes.txt 2>&1
tps_dev_h200_tables $B 300
echo "all done (${SECONDS}s)"
