#!/bin/bash
# Carry: .w8carry/bin/{tpsplit,test_gemm_gpu} (branch w8s30, with TPS_W8_SDEEP);
# results: data/h100_w8a16_s30.txt (call 2)
# call 2 (issue 28, branch w8s30), any card: test_gemm_gpu
# TPS_TEST_S192_ONLY=1 (the 192-row stream form with the deeper rings, TPS_W8_SDEEP=1); K 7168 N 2112 at M 1..64:
# default / TPS_W8_SROWS=192 / + TPS_W8_SDEEP=1 / dense-bf16 (50 samples, one call); ncu (full set) of the launches
# where a target is missed, picked by their demangled names (bench's own checks run M 1, 7, 64, 129 first).
B=.w8carry/bin; OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export NCCL_NVLS_ENABLE=0
exec > >(tee -a $OUT/console.txt) 2>&1
G=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "$G"
{ echo "##### versions"; date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; nvcc --version | tail -1
  for l in $(ldd $B/tpsplit | awk '/nccl|cudart/ {print $3}'); do echo "$l -> $(readlink -f $l)"; done; } >>$OUT/notes.txt 2>&1
fold() { for f in "$@"; do [ -f $OUT/$f ] && { echo "##### $f"; cat $OUT/$f; rm -f $OUT/$f; } >>$OUT/notes.txt; done; }
# (the device budget left after call 1 is ~400 s: no H200 tables here, whatever the card)
env TPS_TEST_S192_ONLY=1 timeout 100 $B/test_gemm_gpu >$OUT/test.txt 2>&1; echo "test_gemm_gpu TPS_TEST_S192_ONLY=1 exit $? (${SECONDS}s)" | tee -a $OUT/test.txt
grep -E "FAIL|ok$" $OUT/test.txt | tail -5
S=$OUT/sweep.txt
r() { local kn=$1 tok=$2 n=$3 lab=$4 p=$5; shift 5
  echo "== $kn $lab $p: $* (samples $n)" >>$S
  env "$@" timeout 120 $B/tpsplit bench gemm --k ${kn%x*} --n ${kn#*x} --tp 1 --samples $n --tokens $tok --path $p 2>>$OUT/notes.txt | grep -E -v '^rows' | grep -E -v '^# (gpu|harness|bench)' | cut -f1-3 >>$S
  echo "$kn $lab $p (${SECONDS}s)"; }
T=1,16,32,48,64
r 7168x2112 $T 50 def w8a16; r 7168x2112 $T 50 s192 w8a16 TPS_W8_SROWS=192; r 7168x2112 $T 50 s192deep w8a16 TPS_W8_SROWS=192 TPS_W8_SDEEP=1
r 7168x2112 $T 50 dense dense-bf16
grep -E '^(==|[0-9])' $S
N=$OUT/ncu.txt
nc() { local kn=$1 m=$2 re=$3 sk=$4; shift 4
  echo "== ncu $kn M=$m kernel '$re' skip $sk $*" >>$N
  env "$@" timeout 80 ncu --clock-control none --set full --kernel-name-base demangled -k regex:"$re" --launch-skip $sk --launch-count 1 -o /tmp/rep -f \
    $B/tpsplit bench gemm --k ${kn%x*} --n ${kn#*x} --path w8a16 --tokens $m --tp 1 --check-only >>$OUT/log.txt 2>&1
  ncu -i /tmp/rep.ncu-rep --page details >>$N 2>&1; rm -f /tmp/rep.ncu-rep; echo "ncu $kn $m $re (${SECONDS}s)"; }
nc 5120x1792 768 "w8s_kernel<128, 8, 1" 0
nc 5120x1792 16384 "w8t_kernel<256, 5" 0
nc 5120x1792 16384 "w8k2_kernel" 4 TPS_W8_KERNEL=sk TPS_W8_BT=256
grep -E "^== ncu|  void w8|Grid Size|Block Size|Duration|DRAM Throughput|Compute \(SM\) Throughput|Achieved Occupancy|Issue Slots Busy|SM Busy|Waves Per SM" $N
fold log.txt
echo "all done (${SECONDS}s)"
