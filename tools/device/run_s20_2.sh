#!/bin/bash
# Carry: .w8carry/bin/{tpsplit,test_gemm_gpu} (main at 7c66448, ../configure --enable-static-deps), .w8carry/run_w8a16.sh
# (tools/device/run_w8a16.sh).  Issue 28 item 3 with little device time left (twentieth session): on an H200 only the ratio
# tables of the current dispatch (29 M, w8a16 and dense-bf16, 50 samples, rows alternated; K 5120 N 1792 first, K 7168 N 2112
# while the call has time: no table starts past 100 s), nothing else (run_s19_2.sh is the whole call).
B=.w8carry/bin; OUT=${OUT:-/tmp/out}; mkdir -p $OUT
exec > >(tee -a $OUT/console.txt) 2>&1
T=1,16,32,64,96,128,192,256,320,384,448,512,640,768,896,1024,1280,1536,1792,2048,2304,2305,2560,3072,3584,4096,6144,8192,16384
G=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "$G"
{ echo "##### versions"; date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; nvcc --version | tail -1
  for l in $(ldd $B/tpsplit | awk '/nccl|cudart/ {print $3}'); do echo "$l -> $(readlink -f $l)"; done; } >>$OUT/notes.txt 2>&1
case "$G" in *H200*) RATIO_TOKENS=$T RATIO_DEADLINE=100 STAGES=ratio bash .w8carry/run_w8a16.sh $B ;;
*) echo "not an H200: nothing run" ;; esac
echo "all done (${SECONDS}s)"
