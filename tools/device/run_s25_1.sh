#!/bin/bash
# Twenty-fifth session, call 1 (issue 28 item 3 on the H200): on an H200 only, test_gemm_gpu and the tables of the
# current dispatch, both shapes (tps_dev_h200_tables); on any other GPU it stops at once.  (The twenty-fourth session prepared it as run_s24_6.sh; its start was refused.)  Carry: .w8carry/bin
# (binaries of 84c8256), .w8carry/versions.sh, .w8carry/run_w8a16.sh.
B=.w8carry/bin; OUT=${OUT:-/tmp/out}; mkdir -p $OUT
exec > >(tee -a $OUT/console.txt) 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | grep -q H200 || { echo "not an H200: nothing run"; exit 0; }
. .w8carry/versions.sh
tps_dev_versions $B
tps_dev_h200_tables $B 300
echo "all done (${SECONDS}s)"
