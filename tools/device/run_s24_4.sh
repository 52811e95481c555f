#!/bin/bash
# Twenty-fourth session, call 4 (issue 28 items 2 and 3).  Carry: .w8carry/bin (binaries of dbe33ab, as call 3),
# .w8carry/versions.sh, .w8carry/run_w8a16.sh.  On an H200: test_gemm_gpu and the H200 tables of the current dispatch,
# both shapes (tps_dev_h200_tables).  On an H100: ncu (call 2's sections) of the 192-row stream form's launch at
# K 7168 N 2112, M 16 and 64 (where the default meets and misses 1.5x), then the 128-row form forced at M 64.
B=.w8carry/bin; OUT=${OUT:-/tmp/out}; mkdir -p $OUT
exec > >(tee -a $OUT/console.txt) 2>&1
. .w8carry/versions.sh
tps_dev_versions $B
if nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | grep -q H200; then
  tps_dev_h200_tables $B 330; echo "all done (${SECONDS}s)"; exit 0
fi
N=$OUT/ncu.txt
met=$(ncu --query-metrics 2>/dev/null | awk '/^sm__pipe_tensor_op_(gmma|hmma)_cycles_active / {print $1".avg.pct_of_peak_sustained_active"}' | paste -sd, -)
for c in "16 " "64 " "64 TPS_W8_SROWS=128"; do
  set -- $c
  echo "===== 7168x2112 M $1 $2" >>$N
  env $2 timeout 60 ncu --clock-control none --section SpeedOfLight --section Occupancy --section LaunchStats --section ComputeWorkloadAnalysis \
    --section SchedulerStats --section WarpStateStats ${met:+--metrics $met} --kernel-name-base demangled \
    -k regex:"w8t3?_kernel" $B/tpsplit bench gemm --k 7168 --n 2112 --path w8a16 --tokens $1 --tp 1 --check-only >>$N 2>&1
  echo "ncu $c exit $? (${SECONDS}s)"
done
echo "all done (${SECONDS}s)"
