#!/bin/bash
# call C (issue 28, branch w8default): the stream kernel over clusters of 4 (TPS_W8_SCL=4, an experiment) at M <= 64:
# test_gemm_gpu with it (every stream form against the float64 reference), sanitizers on its quick set, then
# w8a16 default / TPS_W8_SCL=4 / dense-bf16 at K 7168 N 2112, 2048, 1792 and K 5120 N 1792, 50 samples.
B=.w8carry/bin; OUT=${OUT:-/tmp/out}; mkdir -p $OUT
exec > >(tee -a $OUT/console.txt) 2>&1
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
env TPS_W8_SCL=4 timeout 150 $B/test_gemm_gpu >$OUT/test.txt 2>&1; echo "test_gemm_gpu TPS_W8_SCL=4 exit $? (${SECONDS}s)" | tee -a $OUT/test.txt
grep -E "FAIL|passed|failed" $OUT/test.txt | tail -5
S=$OUT/sweep.txt
r() { local kn=$1 lab=$2 p=$3; shift 3
  echo "== $kn $lab $p: $* (samples 50)" >>$S
  env "$@" timeout 100 $B/tpsplit bench gemm --k ${kn%x*} --n ${kn#*x} --tp 1 --samples 50 --tokens 1,16,32,48,64 --path $p 2>>$OUT/notes.txt | grep -E -v '^rows' | grep -E '^# (config|check)|^[0-9]' | cut -f1-3 >>$S
  echo "$kn $lab $p (${SECONDS}s)"; }
for kn in 7168x2112 7168x2048 7168x1792 5120x1792; do
  r $kn default w8a16; r $kn scl4 w8a16 TPS_W8_SCL=4; r $kn dense dense-bf16
done
grep -E '^(==|[0-9]|# check)' $S
SAN=$OUT/sanitizer.txt
for tool in memcheck racecheck; do
  echo "== TPS_W8_SCL=4 TPS_TEST_QUICK=1 compute-sanitizer --tool $tool test_gemm_gpu" >>$SAN
  env TPS_W8_SCL=4 TPS_TEST_QUICK=1 timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 $B/test_gemm_gpu >>$SAN 2>&1
  echo "$tool exit $? (${SECONDS}s)" | tee -a $SAN
done
grep -E 'exit|ERROR SUMMARY|RACECHECK SUMMARY' $SAN
echo "all done (${SECONDS}s)"
