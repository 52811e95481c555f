#!/bin/bash
# Twenty-fourth session, call 1 (issue 28 items 1, 2 and 4).  Carry: .w8carry/bin/{tpsplit,test_gemm_gpu} (built
# here from 558aa92 + the never-drained chunk loop, TPS_W8_SKND, with ../configure --enable-static-deps; that loop
# is not kept: doc/experiments/w8a16_nd.diff applies to 558aa92; results: data/h100_w8a16_s24.txt),
# .w8carry/versions.sh (tools/device/versions.sh).
# On an H200: test_gemm_gpu and the H200 tables of the current dispatch (tps_dev_h200_tables), then memcheck.
# On an H100: (0) the never-drained loop: its bits against the pair loop (TPS_TEST_SK_ONLY=nd), then timed against
# it in one call (SKND 0, 1, 0, 1; 50 samples) where the 256-token stream-K form runs; (1) compute-sanitizer memcheck and racecheck on the reduce-scatter fix-up alone (TPS_TEST_SK_ONLY=rs) and on the
# never-drained loop (=nd);
# (2) the even grids against the uneven cut in one call (default, TPS_W8_SKEVEN=0, default; 50 samples) at the M
# whose picks the fix-up moved; (3) ncu (sections SpeedOfLight, Occupancy, LaunchStats, ComputeWorkloadAnalysis, SchedulerStats,
# WarpStateStats + the tensor-pipe metrics this ncu knows) of the default dispatch's w8 launches at the mid-M misses.
. .w8carry/versions.sh
tps_dev_begin
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
if echo "$gpu" | grep -q H200; then
  tps_dev_h200_tables $B 330
  TPS_TEST_SK_ONLY=rs timeout 60 compute-sanitizer --tool memcheck --print-limit 20 $B/test_gemm_gpu >$OUT/memcheck.txt 2>&1
  echo "memcheck exit $? (${SECONDS}s)"; exit 0
fi
compute-sanitizer --version | tail -1
TPS_TEST_SK_ONLY=nd timeout 60 $B/test_gemm_gpu >$OUT/nd_test.txt 2>&1; echo "nd test exit $? (${SECONDS}s)"; tail -3 $OUT/nd_test.txt
F=$OUT/nd.txt
for kn in "7168x2112 256,512,768,1024,1536,2048,4096,6144" "5120x1792 320,512,1024,2048,4096,8192"; do
  set -- $kn
  for v in 0 1 0 1; do tps_dev_w8_run $F "SKND=$v" $B $1 $2 TPS_W8_SKND=$v; done
  echo "nd $1 (${SECONDS}s)"
done
for tool in memcheck racecheck; do
  for only in rs nd; do
    [ "$SECONDS" -gt 250 ] && continue
    TPS_TEST_SK_ONLY=$only timeout 40 compute-sanitizer --tool $tool --print-limit 20 $B/test_gemm_gpu >$OUT/${tool}_$only.txt 2>&1
    echo "$tool $only exit $? (${SECONDS}s)"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Hazard|Invalid|only\): |FAIL" $OUT/${tool}_$only.txt | head -6
  done
done
F=$OUT/ab.txt
for kn in "5120x1792 192,256,320,384,448,512" "7168x2112 192,256,320"; do
  set -- $kn
  for v in 1 0 1; do
    [ "$SECONDS" -gt 330 ] && continue
    tps_dev_w8_run $F "SKEVEN=$v" $B $1 $2 TPS_W8_SKEVEN=$v
  done
  echo "ab $1 (${SECONDS}s)"
done
dense() { timeout 60 $B/tpsplit bench gemm --k ${1%x*} --n ${1#*x} --tp 1 --samples 50 --tokens $2 --path dense-bf16 -o $OUT/t.tsv >/dev/null 2>>$OUT/log.txt
  echo "== $1 dense-bf16" >>$F; grep -E '^[0-9]' $OUT/t.tsv | cut -f1-3 >>$F; rm -f $OUT/t.tsv; }
dense 5120x1792 192,256,320,384,448,512; dense 7168x2112 192,256,320
N=$OUT/ncu.txt
for c in "5120x1792 320" "5120x1792 512" "5120x1792 768" "7168x2112 512" "7168x2112 192"; do
  set -- $c
  [ "$SECONDS" -gt 380 ] && continue
  echo "===== $1 M $2" >>$N
  tps_dev_ncu $N "^w8(a16|t|t3|s|k|k2)_kernel" $1 $2
done
grep -E "^  [a-z_ ]*w8|Grid Size|Block Size|Duration|DRAM Throughput|Compute \(SM\) Throughput|Achieved Occupancy|Issue Slots Busy|SM Busy|Eligible Warps|L2 Cache Throughput|tensor_op|=====" $N | head -120
echo "all done (${SECONDS}s)"
