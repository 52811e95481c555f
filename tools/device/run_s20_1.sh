#!/bin/bash
# Carry: .w8carry/bin/{tpsplit,test_gemm_gpu} (main at 7c66448, ../configure --enable-static-deps).
# Issue 28 items 1-2 (twentieth session, call 1, an H100): the last M >= 4096 miss, K 7168 N 2112 at 4096 rows (0.88x,
# data/h100_w8a16_grid_7168x2112_*): the 256-token stream-K form's whole waves first forced to 0, 1 (the rule's pick)
# and 2 (TPS_W8_SKDP) at 3584, 4096 and 6144 rows, dense-bf16 in the same call (30 samples, rows alternated);
# then ncu (full set) of the 4096-row launch (the profile behind the miss).  Results: sweep.txt, ncu.txt.
B=.w8carry/bin; OUT=${OUT:-/tmp/out}; mkdir -p $OUT
exec > >(tee -a $OUT/console.txt) 2>&1
{ echo "##### versions"; date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; nvcc --version | tail -1
  for l in $(ldd $B/tpsplit | awk '/nccl|cudart/ {print $3}'); do echo "$l -> $(readlink -f $l)"; done; } >>$OUT/notes.txt 2>&1
head -4 $OUT/notes.txt
T=3584,4096,6144
S=$OUT/sweep.txt
run() { local path=$1 envs=$2
  echo "== $path $envs" >>$S
  env $envs timeout 100 $B/tpsplit bench gemm --k 7168 --n 2112 --tp 1 --samples 30 --tokens $T --path $path 2>>$OUT/log.txt | grep -E '^[0-9]' | cut -f1-3 >>$S
  echo "$path $envs (${SECONDS}s)"; }
run dense-bf16 ""
run w8a16 ""
for dp in 0 1 2; do run w8a16 "TPS_W8_SKDP=$dp"; done
run dense-bf16 ""
cat $S
N=$OUT/ncu.txt
timeout 150 ncu --clock-control none --set full --kernel-name-base demangled -k regex:"w8k2_kernel" --launch-skip 0 --launch-count 1 -o /tmp/rep -f \
  $B/tpsplit bench gemm --k 7168 --n 2112 --path w8a16 --tokens 4096 --tp 1 --check-only >>$OUT/log.txt 2>&1
ncu -i /tmp/rep.ncu-rep --page details >>$N 2>&1
ncu -i /tmp/rep.ncu-rep --page raw 2>&1 | grep -E "smsp__pcsamp_warps_issue_stalled_[a-z_]+ " | grep -v not_issued >>$N
grep -E "  void w8|Grid Size|Duration|DRAM Throughput|Compute \(SM\) Throughput|Achieved Occupancy|Issue Slots Busy|SM Busy|Waves Per SM|Eligible|L2 Cache Throughput|pcsamp" $N | head -60
echo "all done (${SECONDS}s)"
