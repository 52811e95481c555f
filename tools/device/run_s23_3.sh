#!/bin/bash
# Carry: .w8carry/bin/test_gemm_gpu (the tree after ba8cc58: TPS_TEST_SK_ONLY=rs), tools/device/versions.sh.  Twenty-third
# session, call 3 (issue 28 item 4; prepared, NOT run: the session had no device time left): compute-sanitizer memcheck, then racecheck, on the reduce-scatter fix-up alone
# (TPS_TEST_SK_ONLY=rs: the 256-token form's even grids of 2, 4 and 8 pieces a tile), 50 s each at most.
B=.w8carry/bin; OUT=${OUT:-/tmp/out}; mkdir -p $OUT
exec > >(tee -a $OUT/console.txt) 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1; compute-sanitizer --version | tail -1
for tool in memcheck racecheck; do
  TPS_TEST_SK_ONLY=rs timeout 50 compute-sanitizer --tool $tool --print-limit 20 $B/test_gemm_gpu >$OUT/$tool.txt 2>&1
  echo "$tool exit $? (${SECONDS}s)"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Hazard|Invalid|ok$|FAILED" $OUT/$tool.txt | head -8
done
