#!/bin/bash
# Carry: .w8carry/bin/{tpsplit,test_gemm_gpu} (main at 7c66448, ../configure --enable-static-deps; kernels/ and the
# dispatch unchanged through 27352f1).  Twenty-first session, call 2 (issue 28 item 1, mid M): the split kernel's
# opt-in 256-token tile, whose partials go through the cluster's shared memory (DSMEM) instead of an fp32 workspace
# in L2, forced at every cluster split-K (TPS_W8_KERNEL=split TPS_W8_BT=256 TPS_W8_SPLIT=S), and the default
# dispatch, at 256..1024 rows of both shapes; dense-bf16 in the same call, 30 samples.  Results: sweep.txt.
# On an H200 first (issue 28 item 3): test_gemm_gpu and the ratio tables of the current dispatch (as run_s21_1.sh).
B=.w8carry/bin; OUT=${OUT:-/tmp/out}; mkdir -p $OUT
exec > >(tee -a $OUT/console.txt) 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
. tools/device/versions.sh; tps_dev_versions $B >>$OUT/notes.txt 2>&1
case "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)" in *H200*)
  timeout 90 $B/test_gemm_gpu >$OUT/test.txt 2>&1; echo "test_gemm_gpu exit $? (${SECONDS}s)" | tee -a $OUT/notes.txt
  grep -E "FAIL|ok$|SKIP" $OUT/test.txt | tail -4; rm -f $OUT/test.txt
  RATIO_TOKENS=1,16,32,64,96,128,192,256,320,384,448,512,640,768,896,1024,1280,1536,1792,2048,2304,2305,2560,3072,3584,4096,6144,8192,16384 \
    RATIO_DEADLINE=240 STAGES=ratio bash .w8carry/run_w8a16.sh $B ;;
esac
S=$OUT/sweep.txt
run() { local kn=$1 tok=$2 path=$3 envs=$4
  [ "$SECONDS" -gt 400 ] && { echo "skipped $kn $path $envs (${SECONDS}s)"; return; }
  echo "== $kn $path $envs" >>$S
  env $envs timeout 60 $B/tpsplit bench gemm --k ${kn%x*} --n ${kn#*x} --tp 1 --samples 30 --tokens $tok --path $path -o $OUT/t.tsv 2>>$OUT/log.txt >/dev/null
  echo "exit $?" >>$S
  grep -E '^# config|^# check' $OUT/t.tsv >>$S; grep -E '^[0-9]' $OUT/t.tsv | cut -f1-3 >>$S
  echo "$kn $path $envs (${SECONDS}s)"; }
M=256,384,512,640,768,1024
for kn in 5120x1792 7168x2112; do
  run $kn $M dense-bf16 ""
  run $kn $M w8a16 ""
  for s in 1 2 4 8; do run $kn $M w8a16 "TPS_W8_KERNEL=split TPS_W8_BT=256 TPS_W8_SPLIT=$s"; done
  for s in 2 4; do run $kn $M w8a16 "TPS_W8_KERNEL=split TPS_W8_BT=128 TPS_W8_SPLIT=$s"; done
  run $kn $M dense-bf16 ""
done
rm -f $OUT/t.tsv
echo "all done (${SECONDS}s)"
