#!/bin/bash
# Carry: .w8carry/bin/tpsplit (this session's tree: the head launch as the 256-token stream-K form on its even grid,
# the head still decided by the wgmma pass's time), .w8carry/bin_prev/tpsplit (commit 3c3fa58's dispatch),
# .w8carry/run_w8a16.sh, tools/device/versions.sh; ../configure --enable-static-deps.  Twenty-second session, the
# last call (little device time left, so no test_gemm_gpu: call 4 ran it on the same kernels): at K 5120 2305, 2560
# and 4600 rows (the head's kernel changes) and 2880 and 4096 (unchanged: drift) the new binary against the previous
# one, 50 samples, new/old/new, into head.txt; then the ratio tables of the new dispatch (29 M, both shapes).
B=.w8carry/bin; P=.w8carry/bin_prev; OUT=${OUT:-/tmp/out}; mkdir -p $OUT
exec > >(tee -a $OUT/console.txt) 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
. tools/device/versions.sh; tps_dev_versions $B >>$OUT/notes.txt 2>&1
H=$OUT/head.txt
for b in $B $P $B; do
  tps_dev_w8_run $H $b $b 5120x1792 2305,2560,2880,4096,4600
  echo "$b (${SECONDS}s)"
done
RATIO_TOKENS=1,16,32,64,96,128,192,256,320,384,448,512,640,768,896,1024,1280,1536,1792,2048,2304,2305,2560,3072,3584,4096,6144,8192,16384 \
  RATIO_DEADLINE=200 STAGES=ratio bash .w8carry/run_w8a16.sh $B
echo "FAIL lines in log: $(grep -c FAIL $OUT/log.txt)"
echo "all done (${SECONDS}s)"
