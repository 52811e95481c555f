#!/bin/bash
# Carry: .w8carry/bin/{tpsplit,test_gemm_gpu} (this session's tree: the head launch of whole waves first as the
# 256-token stream-K form on its even grid, w8plan.h head_sk), .w8carry/bin_prev/tpsplit (commit 3c3fa58's dispatch:
# the head always the wgmma pass), .w8carry/run_w8a16.sh, tools/device/versions.sh; ../configure --enable-static-deps.
# Twenty-second session (issue 28 item 1): test_gemm_gpu; then at M whose pick the head change moves (K 5120:
# 2305..2880, 3073..3328, 3841..4607; K 7168: 1793..1920, 3329..3583) the new binary against the previous one in
# the same call, 50 samples, new/old/new (drift), into head.txt; then the ratio tables of the new dispatch (29 M,
# both shapes, 50 samples, rows alternated) while the call has time.
B=.w8carry/bin; P=.w8carry/bin_prev; OUT=${OUT:-/tmp/out}; mkdir -p $OUT
exec > >(tee -a $OUT/console.txt) 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
. tools/device/versions.sh; tps_dev_versions $B >>$OUT/notes.txt 2>&1
timeout 90 $B/test_gemm_gpu >$OUT/test.txt 2>&1; echo "test_gemm_gpu exit $? (${SECONDS}s)" | tee -a $OUT/notes.txt
grep FAIL $OUT/test.txt | head -8; tail -1 $OUT/test.txt; grep -E "head|whole waves" $OUT/test.txt | head -12 >$OUT/test_head.txt; rm -f $OUT/test.txt
H=$OUT/head.txt
for kt in 5120x1792:2305,2560,2880,3100,3328,3900,4096,4600 7168x2112:1800,1920,3400,3583; do
  kn=${kt%%:*}; tok=${kt#*:}
  for b in $B $P $B; do
    tps_dev_w8_run $H $b $b $kn $tok
    echo "$kn $b (${SECONDS}s)"
  done
done
[ "$SECONDS" -lt 330 ] && RATIO_TOKENS=1,16,32,64,96,128,192,256,320,384,448,512,640,768,896,1024,1280,1536,1792,2048,2304,2305,2560,3072,3584,4096,6144,8192,16384 \
  RATIO_DEADLINE=400 STAGES=ratio bash .w8carry/run_w8a16.sh $B
echo "FAIL lines in log: $(grep -c FAIL $OUT/log.txt)"
echo "all done (${SECONDS}s)"
