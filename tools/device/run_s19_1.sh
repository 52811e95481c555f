#!/bin/bash
# Carry: .w8carry/bin/{tpsplit,test_gemm_gpu} (commit 2c1a4d6's tree, ../configure --enable-static-deps) and this
# script as .w8carry/run_s19_1.sh; results: data/h100_w8a16_s31.txt (issue 28, nineteenth session, call 1).
# (1) test_gemm_gpu, the whole test: 2c1a4d6's push_partials/sum_partials helpers have not run on a GPU yet;
# (2) K 7168 N 2112, M 1..64: default / TPS_W8_SROWS=192 / + TPS_W8_SDEEP=1 / dense-bf16, 50 samples;
# (3) mid M (128..1024, both shapes): default / dense-bf16, 50 samples, rows alternated;
# (4) ncu of the mid-M launches (split kernel at K 5120 768 rows, stream-K at K 7168 1024 rows): warp states;
# (5) compute-sanitizer memcheck (TPS_TEST_QUICK=1: every kernel forced) and racecheck (split 64/128, s192 not:
#     its 384-thread cluster form does not finish) on the helpers' users.
# On an H200: the item-3 tables first (run_w8default_d.sh), then (1) and (2).
B=.w8carry/bin; OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export NCCL_NVLS_ENABLE=0
exec > >(tee -a $OUT/console.txt) 2>&1
G=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "$G"
{ echo "##### versions"; date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; nvcc --version | tail -1
  for l in $(ldd $B/tpsplit | awk '/nccl|cudart/ {print $3}'); do echo "$l -> $(readlink -f $l)"; done; } >>$OUT/notes.txt 2>&1
fold() { for f in "$@"; do [ -f $OUT/$f ] && { echo "##### $f"; cat $OUT/$f; rm -f $OUT/$f; } >>$OUT/notes.txt; done; }
H200=0; case "$G" in *H200*) H200=1 ;; esac
timeout 120 $B/test_gemm_gpu >$OUT/test.txt 2>&1; echo "test_gemm_gpu exit $? (${SECONDS}s)" | tee -a $OUT/test.txt
grep -E "FAIL|ok$|differ|SKIP" $OUT/test.txt | tail -8
[ $H200 = 1 ] && { bash .w8carry/run_w8default_d.sh; fold sweep.txt log.txt; }
S=$OUT/sweep.txt
r() { local kn=$1 tok=$2 n=$3 lab=$4 p=$5; shift 5
  echo "== $kn $lab $p: $* (samples $n)" >>$S
  env "$@" timeout 120 $B/tpsplit bench gemm --k ${kn%x*} --n ${kn#*x} --tp 1 --samples $n --tokens $tok --path $p 2>>$OUT/log.txt | grep -E -v '^rows' | grep -E -v '^# (gpu|harness|bench)' | cut -f1-3 >>$S
  echo "$kn $lab $p (${SECONDS}s)"; }
T=1,16,32,48,64
r 7168x2112 $T 50 def w8a16; r 7168x2112 $T 50 s192 w8a16 TPS_W8_SROWS=192; r 7168x2112 $T 50 s192deep w8a16 TPS_W8_SROWS=192 TPS_W8_SDEEP=1
r 7168x2112 $T 50 dense dense-bf16
[ $H200 = 1 ] && { grep -E '^(==|[0-9])' $S; fold log.txt; echo "all done (${SECONDS}s)"; exit 0; }
MT=128,192,256,384,512,640,768,896,1024
for kn in 5120x1792 7168x2112; do r $kn $MT 50 def w8a16; r $kn $MT 50 dense dense-bf16; done
grep -E '^(==|[0-9])' $S
N=$OUT/ncu.txt
nc() { local kn=$1 m=$2 re=$3 sk=$4; shift 4
  echo "== ncu $kn M=$m kernel '$re' skip $sk $*" >>$N
  env "$@" timeout 80 ncu --clock-control none --set full --kernel-name-base demangled -k regex:"$re" --launch-skip $sk --launch-count 1 -o /tmp/rep -f \
    $B/tpsplit bench gemm --k ${kn%x*} --n ${kn#*x} --path w8a16 --tokens $m --tp 1 --check-only >>$OUT/log.txt 2>&1
  ncu -i /tmp/rep.ncu-rep --page details >>$N 2>&1
  ncu -i /tmp/rep.ncu-rep --page raw 2>&1 | grep -E "warp_latency_issue_stalled|pcsamp_warps_issue_stalled" | grep -v -E "_not_issued|pred_on" >>$N; rm -f /tmp/rep.ncu-rep; echo "ncu $kn $m $re (${SECONDS}s)"; }
nc 5120x1792 768 "w8s_kernel" 0
nc 7168x2112 1024 "w8k" 0
grep -E "^== ncu|  void w8|Grid Size|Block Size|Duration|DRAM Throughput|Compute \(SM\) Throughput|Achieved Occupancy|Issue Slots Busy|SM Busy|Waves Per SM|Stall|stall" $N | head -80
CS=compute-sanitizer
( env TPS_TEST_QUICK=1 timeout 200 $CS --tool memcheck $B/test_gemm_gpu >$OUT/memcheck.txt 2>&1; echo "memcheck QUICK exit $?" >>$OUT/memcheck.txt ) &
( env TPS_TEST_SPLIT_ONLY=128 timeout 200 $CS --tool racecheck $B/test_gemm_gpu >$OUT/race128.txt 2>&1; echo "racecheck split128 exit $?" >>$OUT/race128.txt ) &
( env TPS_TEST_SPLIT_ONLY=64 timeout 200 $CS --tool racecheck $B/test_gemm_gpu >$OUT/race64.txt 2>&1; echo "racecheck split64 exit $?" >>$OUT/race64.txt ) &
wait
tail -3 $OUT/memcheck.txt $OUT/race128.txt $OUT/race64.txt
fold log.txt
echo "all done (${SECONDS}s)"
