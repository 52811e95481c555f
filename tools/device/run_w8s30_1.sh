#!/bin/bash
# Carry: .w8carry/bin/{tpsplit,test_gemm_gpu} (branch w8s30, ../configure --enable-static-deps), .w8carry/run_w8a16.sh,
# .w8carry/run_w8default_d.sh (tools/device/); results: data/h100_w8a16_s30.txt, data/h100_sanitizer_w8_s30.txt
# call 1 (issue 28, branch w8s30).  On an H200 first run_w8default_d.sh (item 3: the H200 ratio tables of the default
# dispatch), then what time is left of the rest.  The rest: (1) test_gemm_gpu TPS_TEST_S192_ONLY=1 (the 192-row stream
# form, TPS_W8_SROWS=192, against the float64 reference and bitwise against the 128-row form); (2) timings, dense-bf16
# in the same call: K 7168 N 2112 at M 1..64, default / TPS_W8_SROWS=192 (50 samples); K 5120 N 1792 at 16384 rows,
# default / the 256-token stream-K forced (30); (3) ncu (full set) of one launch where a target is missed and of the
# 192-row form; (4) compute-sanitizer, parallel processes: the 192-row form (memcheck, racecheck), item 4's
# TPS_TEST_SPLIT_ONLY=256 (memcheck whole; racecheck cut into parts: one split x one M, TPS_TEST_SPLIT_S / _M).
B=.w8carry/bin; OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export NCCL_NVLS_ENABLE=0
exec > >(tee -a $OUT/console.txt) 2>&1
G=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "$G"
{ echo "##### versions"; date -u; nvidia-smi; nvcc --version | tail -2
  for l in $(ldd $B/tpsplit | awk '/nccl|cudart/ {print $3}'); do echo "$l -> $(readlink -f $l)"; done; } >>$OUT/notes.txt 2>&1
fold() { for f in "$@"; do [ -f $OUT/$f ] && { echo "##### $f"; cat $OUT/$f; rm -f $OUT/$f; } >>$OUT/notes.txt; done; }
H200=0; case "$G" in *H200*) H200=1; bash .w8carry/run_w8default_d.sh; fold sweep.txt log.txt ;; esac
env TPS_TEST_S192_ONLY=1 timeout 150 $B/test_gemm_gpu >$OUT/test.txt 2>&1; echo "test_gemm_gpu TPS_TEST_S192_ONLY=1 exit $? (${SECONDS}s)" | tee -a $OUT/test.txt
grep -E "FAIL|ok$|differ" $OUT/test.txt | tail -12
S=$OUT/sweep.txt
r() { local kn=$1 tok=$2 n=$3 lab=$4 p=$5; shift 5
  echo "== $kn $lab $p: $* (samples $n)" >>$S
  env "$@" timeout 120 $B/tpsplit bench gemm --k ${kn%x*} --n ${kn#*x} --tp 1 --samples $n --tokens $tok --path $p 2>>$OUT/notes.txt | grep -E -v '^rows' | grep -E -v '^# (gpu|harness|bench)' | cut -f1-3 >>$S
  echo "$kn $lab $p (${SECONDS}s)"; }
T=1,16,32,48,64
r 7168x2112 $T 50 def w8a16; r 7168x2112 $T 50 s192 w8a16 TPS_W8_SROWS=192; r 7168x2112 $T 50 dense dense-bf16; r 7168x2112 $T 50 def2 w8a16
[ $H200 = 0 ] && { r 5120x1792 16384 30 def w8a16; r 5120x1792 16384 30 sk256 w8a16 TPS_W8_KERNEL=sk TPS_W8_BT=256; r 5120x1792 16384 30 dense dense-bf16; }
grep -E '^(==|[0-9])' $S
N=$OUT/ncu.txt
nc() { local kn=$1 m=$2; shift 2
  [ $SECONDS -gt ${NCU_DEADLINE:-300} ] && { echo "ncu $kn $m $* not run (${SECONDS}s)"; return; }
  echo "== ncu $kn M=$m $*" >>$N
  env "$@" timeout 60 ncu --clock-control none --set full -k regex:"w8" --launch-skip 0 --launch-count 1 -o /tmp/rep -f \
    $B/tpsplit bench gemm --k ${kn%x*} --n ${kn#*x} --path w8a16 --tokens $m --tp 1 --check-only >>$OUT/log.txt 2>&1
  ncu -i /tmp/rep.ncu-rep --page details >>$N 2>&1; rm -f /tmp/rep.ncu-rep; echo "ncu $kn $m $* (${SECONDS}s)"; }
nc 7168x2112 16 TPS_W8_SROWS=192; nc 7168x2112 16; nc 5120x1792 768; nc 7168x2112 192; nc 5120x1792 16384
grep -E "^== ncu|  w8|Grid Size|Cluster Size|Registers Per|Duration|DRAM Throughput|Compute \(SM\) Throughput|Achieved Occupancy|Issue Slots Busy|SM Busy|Max Active Clusters" $N | head -120
fold log.txt
# sanitizers, parallel processes, until 470 s
lim=$((470 - SECONDS)); SAN=$OUT/sanitizer.txt; mkdir -p /tmp/san; pids=""
if [ $lim -ge 60 ]; then
  for tool in memcheck racecheck; do
    (env TPS_TEST_S192_ONLY=1 TPS_TEST_QUICK=1 timeout $lim compute-sanitizer --tool $tool --error-exitcode 9 $B/test_gemm_gpu >/tmp/san/s192_$tool.txt 2>&1; echo "exit $? (${SECONDS}s)" >>/tmp/san/s192_$tool.txt) &
    pids="$pids $!"
  done
  (env TPS_TEST_SPLIT_ONLY=256 timeout $lim compute-sanitizer --tool memcheck --error-exitcode 9 $B/test_gemm_gpu >/tmp/san/split256_memcheck.txt 2>&1; echo "exit $? (${SECONDS}s)" >>/tmp/san/split256_memcheck.txt) &
  pids="$pids $!"
  for sp in 1 2 4 8; do
    for m in 1 64 100 257 3072; do
      [ $sp = 1 ] && [ $m != 1 ] && continue # split 1 (no cluster): one process for all its M
      mm=$m; [ $sp = 1 ] && mm=""
      f=/tmp/san/split256_racecheck_s${sp}_m${mm:-all}.txt
      (env TPS_TEST_SPLIT_ONLY=256 TPS_TEST_SPLIT_S=$sp ${mm:+TPS_TEST_SPLIT_M=$mm} timeout $lim compute-sanitizer --tool racecheck --error-exitcode 9 $B/test_gemm_gpu >$f 2>&1; echo "exit $? (${SECONDS}s)" >>$f) &
      pids="$pids $!"
    done
  done
  wait $pids
  for f in /tmp/san/*.txt; do echo "== $(basename $f .txt) (timeout $lim s; exit 124: not finished)"; cat $f; done >>$SAN
  grep -E "^== |^exit|ERROR SUMMARY|RACECHECK SUMMARY|: ok$|FAILED" $SAN
else echo "sanitizers not run (${SECONDS}s)"; fi
echo "all done (${SECONDS}s)"
