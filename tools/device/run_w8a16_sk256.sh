#!/bin/bash
# run_w8a16_sk256.sh: the device call for the 256-token stream-K form (issue 28): carry a binary built
# with TPS_W8P_SK256_DEFAULT 1 (model/core/w8plan.h) and tools/device/run_w8a16.sh in .w8carry (bin/tpsplit,
# bin/test_gemm_gpu, run_w8a16.sh), then: bash tools/device/run_w8a16_sk256.sh (or .w8carry/call3.sh)
# issue 28, stream-K over 256-token tiles: test, ratio tables (new dispatch) + the old dispatch,
# sanitizers, forced form, whole-wave counts, ncu; one device call.  At most 8 files in $OUT:
# the 4 ratio tables, console.txt (tee), notes.txt (env, test, sanitizer, log), sweep2.txt, ncu.txt
B=.w8carry/bin; OUT=${OUT:-/tmp/out}; mkdir -p $OUT
T=1,16,32,64,96,128,192,256,320,384,448,512,640,768,896,1024,1280,1536,1792,2048,2304,2305,2560,3072,3584,4096,6144,8192,16384
fold() { for f in "$@"; do [ -f $OUT/$f ] && { echo "##### $f"; cat $OUT/$f; rm -f $OUT/$f; } >>$OUT/notes.txt; done; }
STAGES="env test" TEST_TIMEOUT=150 bash .w8carry/run_w8a16.sh $B; fold env.txt test.txt
RATIO_TOKENS=$T RATIO_DEADLINE=330 STAGES=ratio bash .w8carry/run_w8a16.sh $B; fold log.txt
S=$OUT/sweep2.txt
r() { local kn=$1 tok=$2 n=$3 lab=$4; shift 4; echo "== $kn $lab: $* (samples $n)" >>$S
  env "$@" timeout 150 $B/tpsplit bench gemm --k ${kn%x*} --n ${kn#*x} --tp 1 --samples $n --tokens $tok --path w8a16 2>>$OUT/notes.txt | grep -E -v '^#|^rows' | cut -f1-3 >>$S
  echo "$kn $lab (${SECONDS}s)"; }
for kn in 5120x1792 7168x2112; do r $kn $T 20 old TPS_W8_SK256=0; done
STAGES=sanitize SAN_ENVS="TPS_TEST_SK_ONLY=256,TPS_TEST_QUICK=1" SAN_TIMEOUT=90 bash .w8carry/run_w8a16.sh $B; fold sanitizer.txt
env TPS_TEST_SK_ONLY=256 timeout 100 compute-sanitizer --tool memcheck --error-exitcode 9 $B/test_gemm_gpu >$OUT/san2.txt 2>&1; echo "full sk256 memcheck exit $? (${SECONDS}s)" | tee -a $OUT/san2.txt; fold san2.txt
T2=384,512,640,768,1024,1152,1536,2048,2304,2560,3072,4096,6144,8192
[ $SECONDS -lt 400 ] && for kn in 5120x1792 7168x2112; do r $kn $T2 20 sk2 TPS_W8_KERNEL=sk TPS_W8_BT=256; done
[ $SECONDS -lt 430 ] && for c in 5120x1792:2560:1 5120x1792:8192:3 7168x2112:4096:2 7168x2112:6144:3 7168x2112:8192:4; do
  IFS=: read kn m d <<<"$c"; r $kn $m 20 "sk2dp$d" TPS_W8_KERNEL=sk TPS_W8_BT=256 TPS_W8_SKDP=$d; done
if [ $SECONDS -lt 450 ]; then
  env TPS_W8_KERNEL=sk TPS_W8_BT=256 timeout 60 ncu --clock-control none --set full -k regex:"w8k2_kernel" --launch-count 1 -o /tmp/rep -f $B/tpsplit bench gemm --k 7168 --n 2112 --path w8a16 --tokens 4096 --tp 1 --check-only >/dev/null 2>&1
  ncu -i /tmp/rep.ncu-rep --page details >$OUT/ncu.txt 2>&1
  grep -E "Duration|DRAM Throughput|L2 Cache Throughput|Compute \(SM\) Throughput|Achieved Occupancy|Issue Slots Busy|L2 Hit|Registers" $OUT/ncu.txt | head -20
fi
cat $S | head -150
echo "all done (${SECONDS}s)"
