#!/bin/bash
# Carry: .w8carry/bin/{tpsplit,test_gemm_gpu} (main at 7c66448, ../configure --enable-static-deps), .w8carry/run_w8a16.sh
# (tools/device/run_w8a16.sh); results: data/h200_w8a16_sk2fit.txt and the H200 ratio tables (issue 28 item 3).
# On an H200: test_gemm_gpu; the ratio tables of the current dispatch (29 M, both shapes, w8a16 and dense-bf16, 50 samples,
# rows alternated); the dispatch before the refit (TPS_W8_SK2FIT=0, 20 samples).  On an H100: ncu (full set) of the K 7168
# N 2112 4096-row launch (the last M >= 4096 miss, 0.88x).
B=.w8carry/bin; OUT=${OUT:-/tmp/out}; mkdir -p $OUT
exec > >(tee -a $OUT/console.txt) 2>&1
T=1,16,32,64,96,128,192,256,320,384,448,512,640,768,896,1024,1280,1536,1792,2048,2304,2305,2560,3072,3584,4096,6144,8192,16384
G=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "$G"
{ echo "##### versions"; date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; nvcc --version | tail -1
  for l in $(ldd $B/tpsplit | awk '/nccl|cudart/ {print $3}'); do echo "$l -> $(readlink -f $l)"; done; } >>$OUT/notes.txt 2>&1
case "$G" in *H200*)
  timeout 90 $B/test_gemm_gpu >$OUT/test.txt 2>&1; echo "test_gemm_gpu exit $? (${SECONDS}s)" | tee -a $OUT/notes.txt
  grep -E "FAIL|ok$|SKIP" $OUT/test.txt | tail -4; rm -f $OUT/test.txt
  RATIO_TOKENS=$T RATIO_DEADLINE=240 STAGES=ratio bash .w8carry/run_w8a16.sh $B
  for kn in 5120x1792 7168x2112; do
    [ "$SECONDS" -gt 330 ] && { echo "before $kn not run (${SECONDS}s)"; continue; }
    echo "== $kn before w8a16: TPS_W8_SK2FIT=0 (samples 20)" >>$OUT/sweep.txt
    env TPS_W8_SK2FIT=0 timeout 80 $B/tpsplit bench gemm --k ${kn%x*} --n ${kn#*x} --tp 1 --samples 20 --tokens $T --path w8a16 2>>$OUT/log.txt | grep -E '^[0-9]' | cut -f1-3 >>$OUT/sweep.txt
    echo "before $kn (${SECONDS}s)"
  done ;;
*)
  N=$OUT/ncu.txt
  nc() { local kn=$1 m=$2 re=$3; echo "== ncu $kn M=$m kernel '$re'" >>$N
    timeout 100 ncu --clock-control none --set full --kernel-name-base demangled -k regex:"$re" --launch-skip 0 --launch-count 1 -o /tmp/rep -f \
      $B/tpsplit bench gemm --k ${kn%x*} --n ${kn#*x} --path w8a16 --tokens $m --tp 1 --check-only >>$OUT/log.txt 2>&1
    ncu -i /tmp/rep.ncu-rep --page details >>$N 2>&1
    ncu -i /tmp/rep.ncu-rep --page raw 2>&1 | grep -E "smsp__pcsamp_warps_issue_stalled_[a-z_]+ " | grep -v not_issued >>$N
    rm -f /tmp/rep.ncu-rep; echo "ncu $kn $m (${SECONDS}s)"; }
  nc 7168x2112 4096 "w8k2_kernel"
  grep -E "^== ncu|  void w8|Grid Size|Duration|DRAM Throughput|Compute \(SM\) Throughput|Achieved Occupancy|Issue Slots Busy|SM Busy|Waves Per SM|Eligible|pcsamp" $N | head -90 ;;
esac
echo "all done (${SECONDS}s)"
