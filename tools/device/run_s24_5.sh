#!/bin/bash
# Twenty-fourth session, call 5: the cluster launch configuration in one helper (cluster_cfg, max_clusters in
# kernels/gemm/gemm_w8a16_sm90.cu) checked on the device: test_gemm_gpu (every form) and bench gemm's own checks with
# the configurations at K 7168 N 2112 and K 5120 N 1792.  Carry: .w8carry/bin built here from that tree.
. .w8carry/versions.sh
tps_dev_begin
timeout 200 $B/test_gemm_gpu >$OUT/test.txt 2>&1; echo "test_gemm_gpu exit $? (${SECONDS}s)"
grep -E "FAIL|rows unforced|test_gemm_gpu: " $OUT/test.txt | tail -8
for kn in 7168x2112 5120x1792; do
  timeout 100 $B/tpsplit bench gemm --k ${kn%x*} --n ${kn#*x} --path w8a16 --tokens 1,48,64,128,320,1024,4096 --tp 1 --check-only >$OUT/check_$kn.txt 2>&1
  echo "check $kn exit $? (${SECONDS}s)"; grep -cE ': ok$' $OUT/check_$kn.txt; grep -E 'FAIL|fail|config' $OUT/check_$kn.txt | cut -c1-170
done
