#!/bin/bash
# Carry: .w8carry/bin/{tpsplit,test_gemm_gpu} (main at the commit named in the data file, ../configure
# --enable-static-deps), .w8carry/run_w8a16.sh, tools/device/versions.sh.  Twenty-third session, issue 28 item 1 at
# mid M (the reduce-scatter fix-up of even grids) and K 7168 N 2112, M >= 4096 (missed: 0.866x at 4096, 0.888x at
# 6144 in data/h100_w8a16_grid_7168x2112_*.tsv; hypothesis: the stream-K part of the 256-token form, 1 whole wave
# first at 4096 rows and 140 tiles shared by 132 blocks at different k, keeps ~47 MB of X and weights live in a
# 50 MB L2).  Any Hopper GPU.
B=.w8carry/bin; OUT=${OUT:-/tmp/out}; mkdir -p $OUT
exec > >(tee -a $OUT/console.txt) 2>&1
G=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "$G"
. tools/device/versions.sh; tps_dev_versions $B >>$OUT/notes.txt 2>&1
# (the H200 tables of item 3 wait for the dispatch these experiments may change)
# 1. the reduce-scatter fix-up of even grids (TPS_W8_SKRS=1) against the owner's (0): test_gemm_gpu both ways, then
# in rs.txt the default dispatch at the M where it picks an even grid cut in pieces, and forced even grids
# (TPS_W8_KERNEL=sk TPS_W8_BT=256 TPS_W8_SKDP=0 TPS_W8_SKG=tiles x p), 1/0/1 (drift), 50 samples.
for r in 1 0; do
  TPS_W8_SKRS=$r timeout 100 $B/test_gemm_gpu >$OUT/test.txt 2>&1; echo "test_gemm_gpu SKRS=$r exit $? (${SECONDS}s)" | tee -a $OUT/notes.txt
  grep -E "FAIL" $OUT/test.txt | head -5; tail -1 $OUT/test.txt
done
tps_dev_w8_skrs $OUT/rs.txt $B "1 0 1" rs 100000 "5120x1792 896,1024" "7168x2112 256,640,768" "5120x1792 256,512,1024 56" \
  "5120x1792 256,512 112" "5120x1792 768 84" "7168x2112 256,512 68" "7168x2112 256 119"
# 2. K 7168 M >= 4096: the even tail (TPS_W8_SKTAIL=p: after d whole waves the tiles left cut into p pieces on
# tiles x p blocks, the rest idle: no tile shared at every k) against the default (1 whole wave, 140 tiles shared by
# the weighted partition), into sweep.txt; dense-bf16 first and last
S=$OUT/sweep.txt
dense() {
  echo "== $1 dense-bf16" >>$S
  timeout 60 $B/tpsplit bench gemm --k "${1%x*}" --n "${1#*x}" --tp 1 --samples 50 --tokens "$2" --path dense-bf16 \
    -o $OUT/d.tsv 2>>$OUT/log.txt >/dev/null; echo "exit $?" >>$S
  grep -E '^[0-9]' $OUT/d.tsv | cut -f1-3 >>$S; rm -f $OUT/d.tsv
}
T7=3072,4096,6144,8192; T5=4096,6144
dense 7168x2112 $T7; dense 5120x1792 $T5
tps_dev_w8_run $S default $B 7168x2112 $T7
tps_dev_w8_run $S default $B 5120x1792 $T5
for c in "7168x2112 4096 2 16 1" "7168x2112 4096 2 16 0" "7168x2112 4096 2 14 1" "7168x2112 4096 2 8 1" \
  "7168x2112 6144 3 8 1" "7168x2112 6144 3 8 0" "7168x2112 6144 3 7 1" "7168x2112 3072 1 1 1" "7168x2112 8192 4 8 1" \
  "5120x1792 4096 1 1 1" "5120x1792 6144 2 1 1" "7168x2112 4096 1 0 0" "7168x2112 6144 2 0 0"; do
  set -- $c
  [ "$SECONDS" -gt 540 ] && { echo "skipped $c (${SECONDS}s)"; continue; }
  tps_dev_w8_run $S "SKDP=$3 SKTAIL=$4 SKRS=$5" $B $1 $2 TPS_W8_KERNEL=sk TPS_W8_BT=256 TPS_W8_SKDP=$3 TPS_W8_SKTAIL=$4 TPS_W8_SKRS=$5
done
echo "tail (${SECONDS}s)"
tps_dev_w8_run $S default $B 7168x2112 $T7
dense 7168x2112 $T7
echo "FAIL lines in log: $(grep -c FAIL $OUT/log.txt)"
echo "all done (${SECONDS}s)"
