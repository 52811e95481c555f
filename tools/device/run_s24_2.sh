#!/bin/bash
# Twenty-fourth session, call 2 (issue 28 item 2): call 1's ncu again with a kernel filter that matches
# (--kernel-name-base demangled names start "void "), the same binaries and sections; every matching launch of
# `bench gemm --check-only` (its checks at M 1, 7, 64, 129 first, then the M asked), so each launch's grid says which.
. .w8carry/versions.sh
B=.w8carry/bin; OUT=${OUT:-/tmp/out}; mkdir -p $OUT
N=$OUT/ncu.txt
for c in "5120x1792 320" "5120x1792 512" "5120x1792 768" "7168x2112 512" "7168x2112 4096"; do
  set -- $c
  [ "$SECONDS" -gt 200 ] && continue
  echo "===== $1 M $2" >>$N
  tps_dev_ncu $N "w8(t|t3|s|k|k2)_kernel|w8a16_kernel\(" $1 $2
done
grep -E "^  void w8|Grid Size|Duration|DRAM Throughput|Compute \(SM\) Throughput|Achieved Occupancy|Issue Slots Busy|SM Busy|Eligible Warps|L2 Cache Throughput|tensor_op|=====" $N | head -150
