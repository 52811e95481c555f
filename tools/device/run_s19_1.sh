#!/bin/bash
# Carry: .w8carry/bin/{tpsplit,test_gemm_gpu} (branch sk2fit at b95ea10: main's 1c58850 with TPS_W8P_SK2FIT_DEFAULT 1,
# ../configure --enable-static-deps), .w8carry/run_w8a16.sh (tools/device/run_w8a16.sh) and this script as
# .w8carry/run_s19_1.sh; results: data/<gpu>_w8a16_sk2fit.txt and the ratio tables (issue 28, nineteenth session, call 1).
# (1) test_gemm_gpu, the whole test (also the first GPU run of 2c1a4d6's push_partials/sum_partials helpers);
# (2) the ratio tables of the dispatch with sk2_time refitted (the binary's default), 29 M, both shapes, w8a16 and
#     dense-bf16, 50 samples, rows alternated; (3) the dispatch before (TPS_W8_SK2FIT=0), 20 samples, same call;
# (4) K 7168 N 2112, M 1..64: TPS_W8_SROWS=192 with and without TPS_W8_SDEEP=1 beside the default and dense-bf16.
B=.w8carry/bin; OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export NCCL_NVLS_ENABLE=0
exec > >(tee -a $OUT/console.txt) 2>&1
T=1,16,32,64,96,128,192,256,320,384,448,512,640,768,896,1024,1280,1536,1792,2048,2304,2305,2560,3072,3584,4096,6144,8192,16384
G=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "$G"
{ echo "##### versions"; date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; nvcc --version | tail -1
  for l in $(ldd $B/tpsplit | awk '/nccl|cudart/ {print $3}'); do echo "$l -> $(readlink -f $l)"; done; } >>$OUT/notes.txt 2>&1
fold() { for f in "$@"; do [ -f $OUT/$f ] && { echo "##### $f"; cat $OUT/$f; rm -f $OUT/$f; } >>$OUT/notes.txt; done; }
timeout 120 $B/test_gemm_gpu >$OUT/test.txt 2>&1; echo "test_gemm_gpu exit $? (${SECONDS}s)" | tee -a $OUT/test.txt
grep -E "FAIL|ok$|SKIP" $OUT/test.txt | tail -6
RATIO_TOKENS=$T RATIO_DEADLINE=330 STAGES=ratio bash .w8carry/run_w8a16.sh $B; fold log.txt
S=$OUT/sweep.txt
r() { local kn=$1 tok=$2 n=$3 lab=$4 p=$5; shift 5
  [ $SECONDS -gt 540 ] && { echo "$kn $lab $p not run (${SECONDS}s)"; return; }
  echo "== $kn $lab $p: $* (samples $n)" >>$S
  env "$@" timeout 100 $B/tpsplit bench gemm --k ${kn%x*} --n ${kn#*x} --tp 1 --samples $n --tokens $tok --path $p 2>>$OUT/log.txt | grep -E -v '^rows' | grep -E -v '^# (gpu|harness|bench)' | cut -f1-3 >>$S
  echo "$kn $lab $p (${SECONDS}s)"; }
for kn in 5120x1792 7168x2112; do r $kn $T 20 before w8a16 TPS_W8_SK2FIT=0; done
M=1,16,32,48,64
r 7168x2112 $M 50 s192 w8a16 TPS_W8_SROWS=192; r 7168x2112 $M 50 s192deep w8a16 TPS_W8_SROWS=192 TPS_W8_SDEEP=1
r 7168x2112 $M 50 def w8a16; r 7168x2112 $M 50 dense dense-bf16
grep -E '^(==|[0-9])' $S | head -120
# (5) the helpers of 2c1a4d6 under compute-sanitizer, in the time left: racecheck of the split kernel's 64- and 128-token
#     cluster forms (push_partials/sum_partials users that racecheck finishes), memcheck of the quick set (every kernel)
SAN=$OUT/sanitizer.txt
for se in TPS_TEST_SPLIT_ONLY=128 TPS_TEST_SPLIT_ONLY=64; do
  left=$((560 - SECONDS)); [ $left -lt 40 ] && { echo "racecheck $se not run (${SECONDS}s)" | tee -a $SAN; continue; }
  echo "== $se compute-sanitizer --tool racecheck" >>$SAN
  env $se timeout $((left < 90 ? left - 10 : 80)) compute-sanitizer --tool racecheck --error-exitcode 9 $B/test_gemm_gpu >>$SAN 2>&1; echo "exit $? (${SECONDS}s)" | tee -a $SAN
done
left=$((570 - SECONDS))
if [ $left -ge 40 ]; then echo "== TPS_TEST_QUICK=1 compute-sanitizer --tool memcheck (timeout $((left - 10)))" >>$SAN
  env TPS_TEST_QUICK=1 timeout $((left - 10)) compute-sanitizer --tool memcheck --error-exitcode 9 $B/test_gemm_gpu >>$SAN 2>&1; echo "exit $? (${SECONDS}s)" | tee -a $SAN; fi
grep -E '^exit|^==|ERROR SUMMARY|RACECHECK SUMMARY|only\):' $SAN
fold log.txt
echo "all done (${SECONDS}s)"
