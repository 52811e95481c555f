#!/bin/bash
# Carry: .w8carry/bin/{tpsplit,test_gemm_gpu} (main at 7c66448, ../configure --enable-static-deps; kernels/ and the
# dispatch unchanged through 0649765), .w8carry/run_w8a16.sh, tools/device/versions.sh.  Twenty-second session, call 1.
# On an H200 (issue 28 item 3): test_gemm_gpu, then the ratio tables of the current dispatch (29 M, w8a16 and dense-bf16,
# 50 samples, rows alternated, both shapes; no table starts past 240 s).
# On any GPU after that (issue 28 item 4): racecheck of the opt-in 192-row stream form (TPS_W8_SROWS=192, 384 threads,
# clusters) with the tool's deadlock detection, which said for the 256-token cluster form why it never finished.
B=.w8carry/bin; OUT=${OUT:-/tmp/out}; mkdir -p $OUT
exec > >(tee -a $OUT/console.txt) 2>&1
G=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "$G"
. tools/device/versions.sh; tps_dev_versions $B >>$OUT/notes.txt 2>&1
case "$G" in *H200*)
  timeout 90 $B/test_gemm_gpu >$OUT/test.txt 2>&1; echo "test_gemm_gpu exit $? (${SECONDS}s)" | tee -a $OUT/notes.txt
  grep -E "FAIL|ok$|SKIP" $OUT/test.txt | tail -4; rm -f $OUT/test.txt
  RATIO_TOKENS=1,16,32,64,96,128,192,256,320,384,448,512,640,768,896,1024,1280,1536,1792,2048,2304,2305,2560,3072,3584,4096,6144,8192,16384 \
    RATIO_DEADLINE=240 STAGES=ratio bash .w8carry/run_w8a16.sh $B ;;
esac
R=$OUT/racecheck.txt
for cmd in "TPS_TEST_S192_ONLY=1 TPS_TEST_QUICK=1" ; do
  [ "$SECONDS" -gt 450 ] && break
  echo "== env $cmd timeout 100 compute-sanitizer --tool racecheck --racecheck-deadlock-timeout 10000 --racecheck-continue-on-deadlock no --print-limit 20 --error-exitcode 9 test_gemm_gpu" >>$R
  env $cmd timeout 100 compute-sanitizer --tool racecheck --racecheck-deadlock-timeout 10000 --racecheck-continue-on-deadlock no \
    --print-limit 20 --error-exitcode 9 $B/test_gemm_gpu >>$R 2>&1
  echo "exit $? (${SECONDS}s)" | tee -a $R
done
echo "all done (${SECONDS}s)"
