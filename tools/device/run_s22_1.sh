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
  tps_dev_h200_tables $B 240 ;;
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
