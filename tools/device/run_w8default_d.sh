#!/bin/bash
# Carry: .w8carry/bin/{tpsplit,test_gemm_gpu} (../configure --enable-static-deps) and .w8carry/run_w8a16.sh; then
# commit its tables as data/h200_w8a16_ratio3_* with a notes file like data/h100_w8a16_default.txt
# call D (issue 28, branch w8default): only on an H200: the ratio tables of the default dispatch (50 samples, both shapes,
# dense-bf16 in the same call) and the dispatch before (TPS_W8_SK256=0, 20 samples); on any other card: nothing.
B=.w8carry/bin; OUT=${OUT:-/tmp/out}; mkdir -p $OUT
G=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "$G"
case "$G" in *H200*) ;; *) echo "not an H200: nothing run"; exit 0 ;; esac
exec > >(tee -a $OUT/console.txt) 2>&1
T=1,16,32,64,96,128,192,256,320,384,448,512,640,768,896,1024,1280,1536,1792,2048,2304,2305,2560,3072,3584,4096,6144,8192,16384
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv; nvcc --version | tail -1
  for l in $(ldd $B/tpsplit | awk '/nccl|cudart/ {print $3}'); do echo "$l -> $(readlink -f $l)"; done; } >$OUT/notes.txt 2>&1
RATIO_TOKENS=$T RATIO_DEADLINE=150 STAGES=ratio bash .w8carry/run_w8a16.sh $B
for kn in 5120x1792 7168x2112; do
  echo "== $kn old w8a16: TPS_W8_SK256=0 (samples 20)" >>$OUT/sweep.txt
  env TPS_W8_SK256=0 timeout 60 $B/tpsplit bench gemm --k ${kn%x*} --n ${kn#*x} --tp 1 --samples 20 --tokens $T --path w8a16 2>>$OUT/notes.txt | grep -E '^[0-9]' | cut -f1-3 >>$OUT/sweep.txt
  echo "old $kn (${SECONDS}s)"
done
echo "all done (${SECONDS}s)"
