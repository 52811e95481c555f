#!/bin/bash
# run_h200.sh: one device call that checks and times the GEMM paths on the lent H200.
# Built here (no GPU) with:  mkdir _build_kgemm && cd _build_kgemm &&
#   ../configure --enable-static-deps && make && make tests/test_gemm_gpu &&
#   mkdir -p bin && cp tpsplit tests/test_gemm_gpu bin/
# Run there (device tool):   bash kernels/run_h200.sh _build_kgemm/bin   (carry _build_kgemm/bin)
# Writes under $OUT: env.txt, test.txt, sanitizer.txt, h200_gemm_<path>.tsv, sweep.txt, log.txt.
# Stage selection: STAGES="test bench hoisted sweep sanitize" (default; also: large explore profile).
B=${1:-_build_kgemm/bin}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
STAGES=${STAGES:-"test bench hoisted sweep sanitize"}
export NCCL_NVLS_ENABLE=0
if ldd "$B/tpsplit" | grep -q "not found"; then
  for l in $(ldd "$B/tpsplit" | awk '/not found/ {print $1}'); do
    d=$(find / -xdev -name "$l" -printf '%h\n' 2>/dev/null | head -1)
    [ -n "$d" ] && export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$d"
  done
fi
{
  date -u; nvidia-smi; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu --format=csv
  ldd "$B/tpsplit"; echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
  command -v cuobjdump && cuobjdump --dump-resource-usage "$B/tpsplit" 2>&1 | grep -A1 w8a16_kernel | head -40
  command -v cuobjdump && cuobjdump --dump-sass --function '_Z12w8a16_kernelILi128ELi128ELi64ELi32ELi4EEvPK13__nv_bfloat16PKhS4_PS0_PfPiiii' "$B/tpsplit" 2>/dev/null | grep -cE "HMMA" | sed 's/^/HMMA instructions in w8a16_kernel<128,128,64,32,4>: /'
} >"$OUT/env.txt" 2>&1
T="1,2,4,6,8,12,16,24,32,48,64,96,128,256,384,512,1024,2048,4096,8192,16384"
case " $STAGES " in *" test "*)
  timeout 120 "$B/test_gemm_gpu" >"$OUT/test.txt" 2>&1; echo "test_gemm_gpu exit $?" >>"$OUT/test.txt"; tail -3 "$OUT/test.txt";;
esac
case " $STAGES " in *" bench "*)
  for p in dense-bf16 native-fp8 w8a16 w8a16_hoisted; do
    echo "== $p" >>"$OUT/log.txt"
    timeout 200 "$B/tpsplit" bench gemm --path "$p" --k 5120 --n 1792 --tokens "$T" --tp 2,4,8 \
      -o "$OUT/h200_gemm_$p.tsv" 2>>"$OUT/log.txt"
    rc=$?; echo "bench $p exit $rc" | tee -a "$OUT/log.txt"
  done;;
esac
case " $STAGES " in *" hoisted "*)  # the hoisted-index loader of variants 0-4 (TPS_W8_HOISTED=1)
  TPS_W8_HOISTED=1 timeout 120 "$B/test_gemm_gpu" >"$OUT/test_hoisted.txt" 2>&1; echo "test_gemm_gpu (hoisted) exit $?" | tee -a "$OUT/log.txt"
  TPS_W8_HOISTED=1 timeout 200 "$B/tpsplit" bench gemm --path w8a16 --k 5120 --n 1792 --tokens "$T" --tp 2,4,8 \
    -o "$OUT/h200_gemm_w8a16_hoisted.tsv" 2>>"$OUT/log.txt"; echo "bench w8a16 (hoisted) exit $?" | tee -a "$OUT/log.txt";;
esac
case " $STAGES " in *" sweep "*)
  for s in ${SWEEP_SPLITS:-2 4 6 8 12 16 24}; do
    echo "== TPS_W8_SPLITK=$s" >>"$OUT/sweep.txt"
    TPS_W8_SPLITK=$s timeout 60 "$B/tpsplit" bench gemm --path w8a16 --tokens 1,16,32,64,128,256,512,1024 --tp 1 \
      --samples 20 2>>"$OUT/log.txt" | grep -v '^#' >>"$OUT/sweep.txt"
  done
  for v in ${SWEEP_VARIANTS:-3 4 5}; do
    echo "== TPS_W8_VARIANT=$v" >>"$OUT/sweep.txt"
    TPS_W8_VARIANT=$v timeout 60 "$B/tpsplit" bench gemm --path w8a16 --tokens 256,1024,2048,4096,8192,16384 --tp 1 \
      --samples 20 2>>"$OUT/log.txt" | grep -v '^#' >>"$OUT/sweep.txt"
  done;;
esac
case " $STAGES " in *" large "*)
  for v in 4 6; do echo "== TPS_W8_LARGE=$v" >>"$OUT/sweep.txt"
    TPS_W8_LARGE=$v "$B/tpsplit" bench gemm --tp 1 --samples 20 --path w8a16 --tokens 512,1024,4096,16384 2>>"$OUT/log.txt" | grep -v '^#' >>"$OUT/sweep.txt"
  done; cat "$OUT/sweep.txt";;
esac
case " $STAGES " in *" explore "*)
  # flush modes, new kernel variants, split-K factors, native-fp8 smoke test (20 samples each)
  x() { echo "== $*" >>"$OUT/sweep.txt"; env "$@" 2>>"$OUT/log.txt" | grep -v '^#' >>"$OUT/sweep.txt"; }
  G="$B/tpsplit bench gemm --tp 1 --samples 20"
  for f in write write-read; do
    x $G --path dense-bf16 --tokens 1,16,64,256,4096 --flush $f
    x $G --path w8a16 --tokens 1,16,64,256,4096 --flush $f
  done
  for v in 4 6 7 8; do x TPS_W8_VARIANT=$v $G --path w8a16 --tokens 1024,4096,16384; done
  for s in 4 8 12 16; do x TPS_W8_SPLITK=$s $G --path w8a16 --tokens 1,16,32,64,128; done
  x $G --path native-fp8 --tokens 1,64,4096
  tail -5 "$OUT/log.txt";;
esac
case " $STAGES " in *" profile "*)
  N="ncu --clock-control none -k regex:w8a16_kernel --launch-count 1 --section SpeedOfLight --section WarpStateStats --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats --section InstructionStats"
  # launches of w8a16_kernel in --check-only: M = 1, 7, 64, 129 (full checks), then the --tokens rows
  timeout 120 $N --launch-skip 4 "$B/tpsplit" bench gemm --path w8a16 --tokens 4096 --tp 1 --check-only >"$OUT/ncu.txt" 2>&1
  [ -n "$PROFILE_SMALL" ] && timeout 120 $N --launch-skip 2 "$B/tpsplit" bench gemm --path w8a16 --tokens 4096 --tp 1 --check-only >>"$OUT/ncu.txt" 2>&1
  cuobjdump --dump-sass --function '_Z12w8a16_kernelILi128ELi128ELi64ELi32ELi4EEvPK13__nv_bfloat16PKhS4_PS0_PfPiiii' "$B/tpsplit" >"$OUT/sass.txt" 2>&1
  grep -E "Duration|Throughput|Issue Slots|Stall|Achieved Occupancy|Registers" "$OUT/ncu.txt" | head -60;;
esac
case " $STAGES " in *" sanitize "*)
  for h in 0 1; do for tool in memcheck racecheck; do
    echo "== compute-sanitizer --tool $tool test_gemm_gpu (TPS_TEST_QUICK, TPS_W8_HOISTED=$h)" >>"$OUT/sanitizer.txt"
    TPS_W8_HOISTED=$h TPS_TEST_QUICK=1 timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 "$B/test_gemm_gpu" >>"$OUT/sanitizer.txt" 2>&1
    echo "exit $?" >>"$OUT/sanitizer.txt"
  done; done
  grep -E "^exit|ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/sanitizer.txt";;
esac
for p in dense-bf16 native-fp8 w8a16 w8a16_hoisted; do
  [ -f "$OUT/h200_gemm_$p.tsv" ] && { echo "== $p"; grep -v '^#' "$OUT/h200_gemm_$p.tsv" | cut -f1-6 | column -t; }
done
grep -c FAIL "$OUT/log.txt" | sed 's/^/FAIL lines in log: /'
