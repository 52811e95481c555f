#!/bin/bash
# Carry: .w8carry/bin/{tpsplit,test_gemm_gpu} (main at 7c66448, ../configure --enable-static-deps; kernels/ and the
# dispatch unchanged through b1d16a6), .w8carry/run_w8a16.sh (tools/device/run_w8a16.sh).  Twenty-first session, call 1.
# On an H200 (issue 28 item 3): test_gemm_gpu, then the ratio tables of the current dispatch (29 M, both shapes, w8a16
# and dense-bf16, 50 samples, rows alternated; no table starts past 240 s).  Then, on either GPU (issue 28 item 1,
# mid M): what the stream-K fix-up costs.  The 256-token stream-K form forced (TPS_W8_KERNEL=sk TPS_W8_BT=256, no
# whole waves: TPS_W8_SKDP=0) on grids of G blocks (TPS_W8_SKG): G = tiles gives each block whole tiles (no
# fix-up), 2 x tiles cuts each tile in two (one partial written and read by its owner), and so on; same for the
# 128-token form (TPS_W8_BT=128); dense-bf16 in the same call; 30 samples.  Then ncu (full set) of the forced
# 256-token form at 512 rows of K 5120 on every SM.  Results: sweep.txt, ncu.txt, notes.txt.
B=.w8carry/bin; OUT=${OUT:-/tmp/out}; mkdir -p $OUT
exec > >(tee -a $OUT/console.txt) 2>&1
T=1,16,32,64,96,128,192,256,320,384,448,512,640,768,896,1024,1280,1536,1792,2048,2304,2305,2560,3072,3584,4096,6144,8192,16384
G=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "$G"
. tools/device/versions.sh; tps_dev_versions $B >>$OUT/notes.txt 2>&1
case "$G" in *H200*)
  timeout 90 $B/test_gemm_gpu >$OUT/test.txt 2>&1; echo "test_gemm_gpu exit $? (${SECONDS}s)" | tee -a $OUT/notes.txt
  grep -E "FAIL|ok$|SKIP" $OUT/test.txt | tail -4; rm -f $OUT/test.txt
  RATIO_TOKENS=$T RATIO_DEADLINE=240 STAGES=ratio bash .w8carry/run_w8a16.sh $B ;;
esac
S=$OUT/sweep.txt
run() { local kn=$1 tok=$2 path=$3 envs=$4
  [ "$SECONDS" -gt 520 ] && { echo "skipped $kn $path $envs (${SECONDS}s)"; return; }
  echo "== $kn $path $envs" >>$S
  env $envs timeout 60 $B/tpsplit bench gemm --k ${kn%x*} --n ${kn#*x} --tp 1 --samples 30 --tokens $tok --path $path -o $OUT/t.tsv 2>>$OUT/log.txt >/dev/null
  grep -E '^# config|^# check.*(FAIL|bad)' $OUT/t.tsv >>$S; grep -E '^[0-9]' $OUT/t.tsv | cut -f1-3 >>$S
  echo "$kn $path $envs (${SECONDS}s)"; }
M=256,384,512,640,768,1024
run 5120x1792 $M dense-bf16 ""
for g in 14 28 56 84 112 132; do run 5120x1792 $M w8a16 "TPS_W8_KERNEL=sk TPS_W8_BT=256 TPS_W8_SKDP=0 TPS_W8_SKG=$g"; done
for g in 28 56 112 132; do run 5120x1792 $M w8a16 "TPS_W8_KERNEL=sk TPS_W8_BT=128 TPS_W8_SKG=$g"; done
run 5120x1792 $M w8a16 ""
run 7168x2112 $M dense-bf16 ""
for g in 17 34 68 132; do run 7168x2112 $M w8a16 "TPS_W8_KERNEL=sk TPS_W8_BT=256 TPS_W8_SKDP=0 TPS_W8_SKG=$g"; done
run 5120x1792 $M dense-bf16 ""
rm -f $OUT/t.tsv
N=$OUT/ncu.txt
if [ "$SECONDS" -lt 480 ]; then
  env TPS_W8_KERNEL=sk TPS_W8_BT=256 TPS_W8_SKDP=0 timeout 100 ncu --clock-control none --set full --kernel-name-base demangled -k regex:"w8k2_kernel" \
    --launch-skip 0 --launch-count 1 -o /tmp/rep -f $B/tpsplit bench gemm --k 5120 --n 1792 --path w8a16 --tokens 512 --tp 1 --check-only >>$OUT/log.txt 2>&1
  ncu -i /tmp/rep.ncu-rep --page details >>$N 2>&1
  ncu -i /tmp/rep.ncu-rep --page raw 2>&1 | grep -E "smsp__pcsamp_warps_issue_stalled_[a-z_]+ " | grep -v not_issued >>$N
  grep -E "  void w8|Grid Size|Duration|DRAM Throughput|Compute \(SM\) Throughput|Achieved Occupancy|Issue Slots Busy|SM Busy|Eligible|L2 Cache Throughput|pcsamp" $N | head -50
fi
echo "all done (${SECONDS}s)"
