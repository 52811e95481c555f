#!/bin/bash
# Twenty-fourth session, call 6 (issue 28 item 3 on the H200): on an H200 only, test_gemm_gpu and the tables of the
# current dispatch, both shapes (tps_dev_h200_tables); on any other GPU it stops at once.  Carry: .w8carry/bin
# (binaries of 45a65f1), .w8carry/versions.sh, .w8carry/run_w8a16.sh.  Prepared, not run: its one start (15:48Z) was refused.
B=.w8carry/bin; OUT=${OUT:-/tmp/out}; mkdir -p $OUT
exec > >(tee -a $OUT/console.txt) 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | grep -q H200 || { echo "not an H200: nothing run"; exit 0; }
. .w8carry/versions.sh
tps_dev_versions $B
tps_dev_h200_tables $B 300
echo "all done (${SECONDS}s)"
