#!/bin/bash
# Twenty-fourth session, call 3 (issue 28 item 1: K 7168 N 2112 at M <= 64).  Carry: .w8carry/bin/{tpsplit,
# test_gemm_gpu} built here from the tree after 1100a4f with the 192-row stream form chosen by waves (tps_w8c_rows:
# where the 128-row form's clusters of 8 need two waves and the 192-row form's fit in one) and its deeper rings by
# default (../configure --enable-static-deps); .w8carry/versions.sh, .w8carry/run_w8a16.sh (tools/device/).
# (1) test_gemm_gpu (the whole set; check_s192 asserts the rows the rule picks on a 132-SM part);
# (2) the K 7168 N 2112 tables of the new dispatch (29 M, w8a16 then dense-bf16, 50 samples, rows alternated); on an
#     H200 both shapes (tps_dev_h200_tables);
# (3) the forms at M <= 64 in one call: TPS_W8_SROWS=128 (the dispatch before), default, 128 again; K 5120's
#     configuration at M 1, 16, 64 (unchanged: 14 clusters fit);
# (4) compute-sanitizer memcheck on the 192-row form (TPS_TEST_S192_ONLY=1 TPS_TEST_QUICK=1).
. .w8carry/versions.sh
tps_dev_begin
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
if echo "$gpu" | grep -q H200; then
  tps_dev_h200_tables $B 330
else
  timeout 200 $B/test_gemm_gpu >$OUT/test.txt 2>&1; echo "test_gemm_gpu exit $? (${SECONDS}s)"
  grep -E "FAIL|rows unforced|passed|failed|: ok$" $OUT/test.txt | tail -8
  RATIO_SHAPES=7168x2112 RATIO_TOKENS=1,16,32,64,96,128,192,256,320,384,448,512,640,768,896,1024,1280,1536,1792,2048,2304,2305,2560,3072,3584,4096,6144,8192,16384 \
    RATIO_DEADLINE=330 STAGES=ratio bash .w8carry/run_w8a16.sh $B
fi
F=$OUT/srows.txt
for v in 128 default 128; do
  [ "$SECONDS" -gt 420 ] && continue
  if [ $v = default ]; then tps_dev_w8_run $F "default" $B 7168x2112 1,16,32,48,64
  else tps_dev_w8_run $F "SROWS=$v" $B 7168x2112 1,16,32,48,64 TPS_W8_SROWS=$v; fi
done
[ "$SECONDS" -lt 420 ] && tps_dev_w8_run $F "default" $B 5120x1792 1,16,64
echo "srows (${SECONDS}s)"
if [ "$SECONDS" -lt 380 ]; then
  TPS_TEST_S192_ONLY=1 TPS_TEST_QUICK=1 timeout 150 compute-sanitizer --tool memcheck --print-limit 20 $B/test_gemm_gpu >$OUT/memcheck_s192.txt 2>&1
  echo "memcheck s192 exit $? (${SECONDS}s)"; grep -E "ERROR SUMMARY|FAIL|: ok$" $OUT/memcheck_s192.txt | tail -3
fi
echo "all done (${SECONDS}s)"
