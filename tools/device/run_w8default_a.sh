#!/bin/bash
# Carry (device tool): .w8carry/bin/{tpsplit,test_gemm_gpu} built with ../configure --enable-static-deps and
# .w8carry/run_w8a16.sh (tools/device/run_w8a16.sh); results: data/h100_w8a16_default.txt
# call A (issue 28, branch w8default): env, test, ratio tables (new dispatch, 50 samples, both shapes),
# the dispatch before (TPS_W8_SK256=0, 20 samples), the K 7168 M<=64 wave hypothesis (N 1792/2048/2112),
# compute-sanitizer memcheck + racecheck on the whole TPS_TEST_SK_ONLY=256 set.
B=.w8carry/bin; OUT=${OUT:-/tmp/out}; mkdir -p $OUT
exec > >(tee -a $OUT/console.txt) 2>&1
T=1,16,32,64,96,128,192,256,320,384,448,512,640,768,896,1024,1280,1536,1792,2048,2304,2305,2560,3072,3584,4096,6144,8192,16384
fold() { for f in "$@"; do [ -f $OUT/$f ] && { echo "##### $f"; cat $OUT/$f; rm -f $OUT/$f; } >>$OUT/notes.txt; done; }
{ echo "##### versions"; date -u; nvidia-smi; nvcc --version | tail -2
  for l in $(ldd $B/tpsplit | awk '/nccl|cudart/ {print $3}'); do echo "$l -> $(readlink -f $l)"; done
  python3 -c 'import torch; print("torch nccl", torch.cuda.nccl.version())' 2>&1 | tail -1; } >>$OUT/notes.txt 2>&1
STAGES="env test" TEST_TIMEOUT=150 bash .w8carry/run_w8a16.sh $B; fold env.txt test.txt
RATIO_TOKENS=$T RATIO_DEADLINE=200 STAGES=ratio bash .w8carry/run_w8a16.sh $B; fold log.txt
S=$OUT/sweep.txt
r() { local kn=$1 tok=$2 n=$3 lab=$4 p=$5; shift 5
  echo "== $kn $lab $p: $* (samples $n)" >>$S
  env "$@" timeout 120 $B/tpsplit bench gemm --k ${kn%x*} --n ${kn#*x} --tp 1 --samples $n --tokens $tok --path $p 2>>$OUT/notes.txt | grep -E -v '^rows' | grep -E -v '^# (gpu|harness|bench)' | cut -f1-3 >>$S
  echo "$kn $lab $p (${SECONDS}s)"; }
for kn in 5120x1792 7168x2112; do r $kn $T 20 old w8a16 TPS_W8_SK256=0; done
# hypothesis: K 7168 M<=64 at N 2112 runs 17 row blocks x cluster 8 = 136 blocks > 132 SMs (a second wave)
for kn in 7168x2112 7168x2048 7168x1792 5120x2112 5120x2048; do r $kn 1,16,32,64 30 hyp w8a16; r $kn 1,16,32,64 30 hyp dense-bf16; done
grep -E '^(==|[0-9])' $S | tail -60
SAN=$OUT/sanitizer.txt
for tool in memcheck racecheck; do
  left=$((560 - SECONDS)); [ $left -lt 60 ] && { echo "sanitizer $tool not run (${SECONDS}s)" | tee -a $SAN; continue; }
  [ $tool = memcheck ] && lim=$((left / 2)) || lim=$((left - 10))
  echo "== TPS_TEST_SK_ONLY=256 compute-sanitizer --tool $tool test_gemm_gpu (timeout $lim)" >>$SAN
  env TPS_TEST_SK_ONLY=256 timeout $lim compute-sanitizer --tool $tool --error-exitcode 9 $B/test_gemm_gpu >>$SAN 2>&1
  echo "exit $? (${SECONDS}s)" | tee -a $SAN
done
grep -E '^exit|^==|ERROR SUMMARY|RACECHECK SUMMARY|sk only\):' $SAN
echo "all done (${SECONDS}s)"
