#!/bin/bash
# Twenty-fourth session, call 4 (issue 28 items 2 and 3).  Carry: .w8carry/bin (binaries of dbe33ab, as call 3),
# .w8carry/versions.sh, .w8carry/run_w8a16.sh.  On an H200: test_gemm_gpu and the H200 tables of the current dispatch,
# both shapes (tps_dev_h200_tables).  On an H100: ncu (call 2's sections) of the 192-row stream form's launch at
# K 7168 N 2112, M 16 and 64 (where the default meets and misses 1.5x), then the 128-row form forced at M 64.
. .w8carry/versions.sh
tps_dev_begin
if nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | grep -q H200; then
  tps_dev_h200_tables $B 330; echo "all done (${SECONDS}s)"; exit 0
fi
N=$OUT/ncu.txt
for c in "16 " "64 " "64 TPS_W8_SROWS=128"; do
  set -- $c
  echo "===== 7168x2112 M $1 $2" >>$N
  tps_dev_ncu $N "w8t3?_kernel" 7168x2112 $1 $2
done
echo "all done (${SECONDS}s)"
