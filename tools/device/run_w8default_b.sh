#!/bin/bash
# Carry (device tool): .w8carry/bin/{tpsplit,test_gemm_gpu} built with ../configure --enable-static-deps and
# .w8carry/run_w8a16.sh (tools/device/run_w8a16.sh); results: data/h100_w8a16_default.txt
# call B (issue 28, branch w8default): the K 7168 N 2112 M<=64 miss (clusters of 8 per row block: how many
# run at once), forced alternatives, ncu launch stats of the stream kernel; sanitizers on the other new kernels.
B=.w8carry/bin; OUT=${OUT:-/tmp/out}; mkdir -p $OUT
exec > >(tee -a $OUT/console.txt) 2>&1
S=$OUT/sweep.txt
r() { local kn=$1 tok=$2 n=$3 lab=$4 p=$5; shift 5
  echo "== $kn $lab $p: $* (samples $n)" >>$S
  env "$@" timeout 100 $B/tpsplit bench gemm --k ${kn%x*} --n ${kn#*x} --tp 1 --samples $n --tokens $tok --path $p 2>>$OUT/notes.txt | grep -E -v '^rows' | grep -E -v '^# (gpu|harness|bench)' | cut -f1-3 >>$S
  echo "$kn $lab $p (${SECONDS}s)"; }
for n in 1664 1792 1920 2048 2112; do r 7168x$n 1,16,64 30 clusters w8a16; done
for sp in 1 2 4 8; do r 7168x2112 1,16,32,64 30 split$sp w8a16 TPS_W8_KERNEL=split TPS_W8_BT=64 TPS_W8_SPLIT=$sp; done
r 7168x2112 1,16,32,64 30 sk64 w8a16 TPS_W8_KERNEL=sk TPS_W8_BT=64
r 5120x1792 1,16,32,64 30 split4 w8a16 TPS_W8_KERNEL=split TPS_W8_BT=64 TPS_W8_SPLIT=4
grep -E '^(==|[0-9])' $S
for n in 1792 2112; do
  echo "== ncu K 7168 N $n M 16" >>$OUT/ncu.txt
  timeout 90 ncu --clock-control none --section LaunchStats --section Occupancy --section SpeedOfLight -k regex:"w8[tsk]2?_kernel" --launch-count 1 \
    $B/tpsplit bench gemm --k 7168 --n $n --path w8a16 --tokens 16 --tp 1 --check-only >>$OUT/ncu.txt 2>&1
  echo "ncu exit $? (${SECONDS}s)"
done
grep -E "^== ncu|w8t_kernel|Cluster|Grid Size|Block Size|Waves|Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Registers|Shared Memory Config" $OUT/ncu.txt | head -50
SAN=$OUT/sanitizer.txt
for se in TPS_TEST_SK_ONLY=64 TPS_TEST_SK_ONLY=128 TPS_TEST_SPLIT_ONLY=64 TPS_TEST_SPLIT_ONLY=128 TPS_TEST_SPLIT_ONLY=256; do
  for tool in memcheck racecheck; do
    left=$((560 - SECONDS)); [ $left -lt 30 ] && { echo "$se $tool not run (${SECONDS}s)" | tee -a $SAN; continue; }
    lim=$(( left < 120 ? left - 5 : 120 ))
    echo "== $se compute-sanitizer --tool $tool test_gemm_gpu (timeout $lim)" >>$SAN
    env $se timeout $lim compute-sanitizer --tool $tool --error-exitcode 9 $B/test_gemm_gpu >>$SAN 2>&1
    echo "$se $tool exit $? (${SECONDS}s)" | tee -a $SAN
  done
done
grep -E 'exit|ERROR SUMMARY|RACECHECK SUMMARY|only\):' $SAN
echo "all done (${SECONDS}s)"
