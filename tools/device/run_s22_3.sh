#!/bin/bash
# Carry: .w8carry/bin/{tpsplit,test_gemm_gpu} (this session's tree: the 256-token stream-K form on even grids,
# TPS_W8P_SKEVEN_DEFAULT 1; ../configure --enable-static-deps), .w8carry/run_w8a16.sh, tools/device/versions.sh.
# Twenty-second session (issue 28 items 1 and 3, any Hopper GPU): test_gemm_gpu; the ratio tables of the new default
# dispatch (29 M, w8a16 and dense-bf16, 50 samples, rows alternated, both shapes: tps_dev_h200_tables, named by the
# GPU); then, at the M whose pick the even grids change, the default against TPS_W8_SKEVEN=0 (the dispatch before)
# in the same call, 50 samples, new/old/new (drift), into even.txt.  Run twice: the second time with the 2/3 floor
# on the even grid (K 5120 640 and 768 rows measured slower on 84 blocks the first time): 640 and 768 then the same
# configuration both ways (a drift control).
B=.w8carry/bin; OUT=${OUT:-/tmp/out}; mkdir -p $OUT
exec > >(tee -a $OUT/console.txt) 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
. tools/device/versions.sh; tps_dev_versions $B >>$OUT/notes.txt 2>&1
tps_dev_h200_tables $B 330
E=$OUT/even.txt
for kt in 5120x1792:640,768,896,1024,1792,2048,2304 7168x2112:256,640,768,1536,1792; do
  kn=${kt%%:*}; tok=${kt#*:}
  for ev in 1 0 1; do
    [ "$SECONDS" -gt 520 ] && { echo "skipped $kn SKEVEN=$ev (${SECONDS}s)"; continue; }
    tps_dev_w8_run $E TPS_W8_SKEVEN=$ev $B $kn $tok TPS_W8_SKEVEN=$ev
    echo "$kn SKEVEN=$ev (${SECONDS}s)"
  done
done
grep -c FAIL $OUT/log.txt
echo "all done (${SECONDS}s)"
