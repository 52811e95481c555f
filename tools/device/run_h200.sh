#!/bin/bash
# run_h200.sh: one device call that checks and times the GEMM paths (and, stage gather, the
# all-gathers and the split bench on one rank) on one H200.
# Built here (no GPU) with:  mkdir _build_kgemm && cd _build_kgemm &&
#   ../configure --enable-static-deps && make && make tests/unit/kernels/test_gemm_gpu tests/unit/kernels/w8trace \
#   tests/unit/kernels/test_gather_custom tests/unit/kernels/test_kspan && mkdir -p bin &&
#   cp tpsplit tests/unit/kernels/test_gemm_gpu tests/unit/kernels/w8trace tests/unit/kernels/test_gather_custom tests/unit/kernels/test_kspan bin/
# Run there (device tool):   bash tools/device/run_h200.sh _build_kgemm/bin   (carry _build_kgemm/bin)
# Writes under $OUT: env.txt, test.txt, sanitizer.txt, h200_gemm_<path>.tsv, sweep.txt, log.txt,
# gather.txt, split_h200_tp1_<path>.tsv, allgather_h200_tp1_<gather>.txt,
# h200_gemm_shape_<K>x<N>.tsv (tools/data/split_sections.sh splits each into one file per table for data/).
# Stage selection: STAGES="test bench sanitize" (default; also: shapes gather sweep floor
# profile trace stream).  BUDGET (default 530 s): the whole call's time; the shapes stage
# starts no bench past BUDGET - 230 s when sanitize follows (BUDGET - 20 s otherwise), and
# the sanitizer runs get the time that is left (at most 200 s each).
#   test      tests/unit/kernels/test_gemm_gpu (every W8A16 kernel forced in turn, fp8-block and the issue-18
#             shapes, float64 CPU reference), tests/unit/kernels/test_kspan
#   shapes    tpsplit bench gemm per shape K x N (5120x1024, 5120x512, 5120x32, 7168x2112) and
#             path (w8a16, dense-bf16, native-fp8, fp8-block): tokens SHAPE_TOKENS
#             (1,16,64,128,256,512,1024,2048,4096,8192), --tp 1, SHAPE_SAMPLES (50) samples,
#             rows alternated; one file per shape, h200_gemm_shape_<K>x<N>.tsv: the paths'
#             tables one after another, each after a '## path P K k N n exit rc' line (a failed
#             run's stderr as '# stderr:' lines; a failed fp8-block check is run again with
#             TPS_FP8B_PAD=1, the padded form, and says so); then fp8-block and dense-bf16 at
#             K 5120, N 1536 and 2048 (the AIConfigurator H100 fp8_block shapes, tokens up to
#             16384) into h200_gemm_shape_5120x1536-2048.tsv; the ratio table (each path's
#             time / dense-bf16 time at each M) printed last
#   gather    tests/unit/kernels/test_gather_custom (1..8 ranks emulated, the real one-rank path: every
#             backend, graphs), bench split --tp 1 for every bench path, bench allgather
#             --tp 1 with each gather backend
#   bench     tpsplit bench gemm for dense-bf16, native-fp8, w8a16 (K=5120, N=1792, T list, TP 2,4,8)
#   sweep     w8a16 kernel choices per M (TPS_W8_KERNEL, TPS_W8_BT) against dense-bf16, 20 samples
#   floor     the timing floor: w8a16 and dense-bf16 with K=64, N=64 (an almost empty kernel)
#   sanitize  compute-sanitizer memcheck and racecheck on test_gemm_gpu (TPS_TEST_QUICK)
#   profile   ncu on the stream and wgmma kernels
#   trace     tests/unit/kernels/w8trace: phase times of the stream kernel (TRACE_M, TRACE_FLAGS, TRACE_SAMPLES)
#   stream    w8a16 (default, then with each of STREAM_ENVS: space-separated, each a comma list of
#             VAR=value overrides, default TPS_W8_SUM=1) at M <= 64 and at large M against
#             dense-bf16, 20 samples, CUPTI span and event columns; stream-kernel token tiles
#             STREAM_FORMS="16 32 ..." (TPS_W8_SBT); the floor
#             (K=64, N=64); ncu of the stream kernel at M=7 (tile 16) and M=64 (tile 64)
B=${1:-_build_kgemm/bin}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
STAGES=${STAGES:-"test bench sanitize"}
export NCCL_NVLS_ENABLE=0
if ldd "$B/tpsplit" | grep -q "not found"; then
  for l in $(ldd "$B/tpsplit" | awk '/not found/ {print $1}'); do
    d=$(find / -xdev -name "$l" -printf '%h\n' 2>/dev/null | head -1)
    [ -n "$d" ] && export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$d"
  done
fi
{
  date -u; nvidia-smi; find / -xdev -name 'libcupti.so*' 2>/dev/null | head; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu --format=csv
  ldd "$B/tpsplit"; echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
  command -v cuobjdump && cuobjdump --dump-resource-usage "$B/tpsplit" 2>&1 | grep -A1 -E "w8a16_kernel|w8t_kernel|fb_quant_kernel" | head -120
} >"$OUT/env.txt" 2>&1
T="1,2,4,6,8,12,16,24,32,48,64,96,128,256,384,512,1024,2048,4096,8192,16384"
G="$B/tpsplit bench gemm --k 5120 --n 1792"
BUDGET=${BUDGET:-530}
case " $STAGES " in *" sanitize "*) SHAPES_DEADLINE=$((BUDGET - 230));; *) SHAPES_DEADLINE=$((BUDGET - 20));; esac
case " $STAGES " in *" test "*)
  timeout 180 "$B/test_gemm_gpu" >"$OUT/test.txt" 2>&1; echo "test_gemm_gpu exit $? (${SECONDS}s)" | tee -a "$OUT/test.txt"
  timeout 30 "$B/test_kspan" >>"$OUT/test.txt" 2>&1; echo "test_kspan exit $?" | tee -a "$OUT/test.txt"
  grep -E "FAIL|fast vs|split T|SKIPPED|parts" "$OUT/test.txt" | head -40;;
esac
case " $STAGES " in *" shapes "*)
  # one bench: shape file f, K, N, path, tokens; its table (or its stderr) appended to f
  TMPD=$(mktemp -d)
  shape_bench() {
    local f=$1 k=$2 n=$3 p=$4 t=$5 rc pad=""
    if [ "$SECONDS" -gt "$SHAPES_DEADLINE" ]; then
      echo "## path $p K $k N $n: not run (${SECONDS}s: past the stage's budget)" >>"$f"; echo "shapes: K=$k N=$n $p not run"; return
    fi
    timeout 90 $B/tpsplit bench gemm --k "$k" --n "$n" --path "$p" --tokens "$t" --tp 1 \
      --samples "${SHAPE_SAMPLES:-50}" -o "$TMPD/t.tsv" 2>"$TMPD/err"; rc=$?
    if [ $rc -ne 0 ] && [ "$p" = fp8-block ] && grep -q "a check failed" "$TMPD/err"; then
      echo "## path $p K $k N $n exit $rc (a check failed; its stderr, then the run with TPS_FP8B_PAD=1)" >>"$f"
      grep -E "check|config|tpsplit:" "$TMPD/err" | sed 's/^/# stderr: /' | head -60 >>"$f"
      pad=" TPS_FP8B_PAD=1"
      TPS_FP8B_PAD=1 timeout 90 $B/tpsplit bench gemm --k "$k" --n "$n" --path "$p" --tokens "$t" --tp 1 \
        --samples "${SHAPE_SAMPLES:-50}" -o "$TMPD/t.tsv" 2>"$TMPD/err"; rc=$?
    fi
    echo "## path $p K $k N $n exit $rc$pad" >>"$f"
    [ -f "$TMPD/t.tsv" ] && cat "$TMPD/t.tsv" >>"$f"
    [ $rc -ne 0 ] && grep -v "^bench gemm: check" "$TMPD/err" | sed 's/^/# stderr: /' | tail -40 >>"$f"
    rm -f "$TMPD/t.tsv" "$TMPD/err"
    echo "shapes: K=$k N=$n $p exit $rc$pad (${SECONDS}s)"
  }
  ST=${SHAPE_TOKENS:-1,16,64,128,256,512,1024,2048,4096,8192}
  for kn in 5120x1024 5120x512 5120x32 7168x2112; do
    f="$OUT/h200_gemm_shape_$kn.tsv"; : >"$f"
    for p in w8a16 dense-bf16 native-fp8 fp8-block; do shape_bench "$f" "${kn%x*}" "${kn#*x}" "$p" "$ST"; done
  done
  f="$OUT/h200_gemm_shape_5120x1536-2048.tsv"; : >"$f"
  for n in 1536 2048; do
    for p in fp8-block dense-bf16; do shape_bench "$f" 5120 "$n" "$p" "${ST},16384"; done
  done
  rm -rf "$TMPD";;
esac
case " $STAGES " in *" gather "*)
  timeout 90 "$B/test_gather_custom" >"$OUT/gather.txt" 2>&1; echo "test_gather_custom exit $?" | tee -a "$OUT/gather.txt"
  for p in w8a16 dense-bf16 native-fp8 w8a16-ref; do
    timeout 90 "$B/tpsplit" bench split --path "$p" --tp 1 -o "$OUT/split_h200_tp1_$p.tsv" 2>>"$OUT/gather.txt"
    echo "bench split $p exit $?" | tee -a "$OUT/gather.txt"
  done
  timeout 60 "$B/tpsplit" bench allgather --tp 1 --bytes 1K..64M -o "$OUT/allgather_h200_tp1_nccl.txt" 2>>"$OUT/gather.txt"
  echo "bench allgather nccl exit $?" | tee -a "$OUT/gather.txt"
  timeout 60 "$B/tpsplit" bench allgather --tp 1 --gather custom --bytes 1K..2M -o "$OUT/allgather_h200_tp1_custom.txt" 2>>"$OUT/gather.txt"
  echo "bench allgather custom exit $?" | tee -a "$OUT/gather.txt"
  grep -E "FAIL|checks|exit" "$OUT/gather.txt"
  grep -h "^#@ path" "$OUT"/split_h200_tp1_*.tsv 2>/dev/null;;
esac
case " $STAGES " in *" floor "*)
  echo "== timing floor: K=64 N=64 (tokens 1,64)" >>"$OUT/sweep.txt"
  for p in dense-bf16 w8a16; do
    timeout 60 $B/tpsplit bench gemm --k 64 --n 64 --path $p --tokens 1,64 --tp 1 --samples 20 2>>"$OUT/log.txt" | grep -v '^#' >>"$OUT/sweep.txt"
  done;;
esac
case " $STAGES " in *" sweep "*)
  x() { echo "== $*" >>"$OUT/sweep.txt"; env "$@" 2>>"$OUT/log.txt" | grep -v '^#' >>"$OUT/sweep.txt"; }
  S="$G --tp 1 --samples 20"
  x $S --path dense-bf16 --tokens ${SWEEP_SMALL:-1,8,16,32,48,64,96,128} 
  x TPS_W8_KERNEL=stream $S --path w8a16 --tokens ${SWEEP_SMALL:-1,8,16,32,48,64,96,128}
  x TPS_W8_KERNEL=mma $S --path w8a16 --tokens ${SWEEP_SMALL:-1,8,16,32,48,64,96,128}
  x $S --path dense-bf16 --tokens ${SWEEP_LARGE:-96,128,256,512,1024,2048,4096,8192,16384}
  for bt in ${SWEEP_BT:-64 128 256}; do x TPS_W8_KERNEL=wgmma TPS_W8_BT=$bt $S --path w8a16 --tokens ${SWEEP_LARGE:-96,128,256,512,1024,2048,4096,8192,16384}; done
  x TPS_W8_KERNEL=mma $S --path w8a16 --tokens ${SWEEP_LARGE:-96,128,256,512,1024,2048,4096,8192,16384}
  cat "$OUT/sweep.txt";;
esac
case " $STAGES " in *" stream "*)
  y() { echo "== $*" >>"$OUT/stream.txt"; env "$@" 2>>"$OUT/log.txt" | grep -v '^#' >>"$OUT/stream.txt"; }
  TS=${STREAM_TOKENS:-1,8,16,24,32,40,48,56,64}
  S="$G --tp 1 --samples 20 --tokens $TS"
  y $S --path dense-bf16
  y $S --path w8a16
  for f in ${STREAM_ENVS:-TPS_W8_SUM=1}; do y ${f//,/ } $S --path w8a16; done
  [ "${STREAM_QUICK:-0}" = 1 ] || {
  for f in ${STREAM_FORMS:-}; do y TPS_W8_KERNEL=stream TPS_W8_SBT=$f $S --path w8a16; done
  y $S --path dense-bf16
  L="$G --tp 1 --samples 20 --tokens ${LARGE_TOKENS:-256,1024,4096,16384}"
  y $L --path dense-bf16
  y $L --path w8a16
  for p in dense-bf16 w8a16; do y $B/tpsplit bench gemm --k 64 --n 64 --path $p --tokens 1,64 --tp 1 --samples 20; done
  }
  [ "${NCU:-1}" = 1 ] && {
  N="ncu --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --launch-count 1 -k regex:w8t_kernel"
  timeout 100 $N --launch-skip 1 $G --path w8a16 --tokens 64 --tp 1 --check-only >"$OUT/ncu_stream.txt" 2>&1
  timeout 100 $N --launch-skip 2 $G --path w8a16 --tokens 64 --tp 1 --check-only >>"$OUT/ncu_stream.txt" 2>&1; }
  [ -f "$OUT/ncu_stream.txt" ] && grep -E "w8t_kernel|Duration|DRAM Throughput|L2 Cache Throughput|Memory Throughput|Compute \(SM\)|Warp Cycles Per Issued|Stall" "$OUT/ncu_stream.txt" | head -40
  cat "$OUT/stream.txt";;
esac
case " $STAGES " in *" trace "*)
  # phase times of the stream kernel (tests/unit/kernels/w8trace: clock64 stamps per block, phases left out by flags)
  timeout 150 "$B/w8trace" 5120 1792 ${TRACE_SAMPLES:-20} ${TRACE_FLAGS:-0,1,2,4,8,5} ${TRACE_M:-1,16,32,48,64} >"$OUT/trace.txt" 2>&1
  echo "w8trace exit $?" >>"$OUT/trace.txt"
  TPS_W8_SBT=64 timeout 60 "$B/w8trace" 5120 1792 ${TRACE_SAMPLES:-20} 0,1,5 1 >>"$OUT/trace.txt" 2>&1
  echo "w8trace (tile 64) exit $?" >>"$OUT/trace.txt"
  for f in ${TRACE_ENVS:-}; do
    echo "== $f" >>"$OUT/trace.txt"
    env ${f//,/ } timeout 60 "$B/w8trace" 5120 1792 ${TRACE_SAMPLES:-20} ${TRACE_ENV_FLAGS:-0,2} ${TRACE_M:-1,16,32,48,64} >>"$OUT/trace.txt" 2>&1
    echo "w8trace ($f) exit $?" >>"$OUT/trace.txt"
  done
  grep -E "^M=|exit|DIFF|same bits" "$OUT/trace.txt";;
esac
case " $STAGES " in *" bench "*)
  for p in w8a16 dense-bf16 native-fp8; do
    echo "== $p" >>"$OUT/log.txt"
    timeout 200 $G --path "$p" --tokens "$T" --tp 2,4,8 -o "$OUT/h200_gemm_$p.tsv" 2>>"$OUT/log.txt"
    rc=$?; echo "bench $p exit $rc" | tee -a "$OUT/log.txt"
  done;;
esac
case " $STAGES " in *" profile "*)
  N="ncu --clock-control none --section SpeedOfLight --section WarpStateStats --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats --section InstructionStats --launch-count 1"
  timeout 120 $N -k regex:w8t_kernel $G --path w8a16 --tokens 4096 --tp 1 --check-only >"$OUT/ncu.txt" 2>&1
  # check-only launch order: the checks of M = 1, 7, 64, 129 come first
  timeout 120 $N -k regex:w8t_kernel --launch-skip 0 $G --path w8a16 --tokens 1 --tp 1 --check-only >>"$OUT/ncu.txt" 2>&1
  timeout 120 $N -k regex:w8t_kernel --launch-skip 2 $G --path w8a16 --tokens 64 --tp 1 --check-only >>"$OUT/ncu.txt" 2>&1
  timeout 120 ${N/--launch-count 1/--launch-count 2} -k regex:'nvjet|gemm|xmma|cutlass|sm90' --launch-skip 0 $G --path dense-bf16 --tokens 1 --tp 1 --check-only >>"$OUT/ncu.txt" 2>&1
  grep -E "^  [a-zA-Z_].*\(|Duration|DRAM Throughput|Issue Slots|Achieved Occupancy|Registers Per" "$OUT/ncu.txt" | head -80;;
esac
case " $STAGES " in *" sanitize "*)
  for tool in memcheck racecheck; do
    # the time left in the budget: half of it for memcheck, the rest for racecheck (30..200 s)
    left=$((BUDGET - SECONDS - 5)); [ $tool = memcheck ] && left=$((left / 2))
    [ $left -gt 200 ] && left=200; [ $left -lt 30 ] && left=30
    echo "== compute-sanitizer --tool $tool test_gemm_gpu (TPS_TEST_QUICK), timeout ${left}s" >>"$OUT/sanitizer.txt"
    TPS_TEST_QUICK=1 timeout $left compute-sanitizer --tool $tool --error-exitcode 9 "$B/test_gemm_gpu" >>"$OUT/sanitizer.txt" 2>&1
    echo "exit $? (${SECONDS}s)" >>"$OUT/sanitizer.txt"
  done
  grep -E "^exit|ERROR SUMMARY|RACECHECK SUMMARY|SKIPPED" "$OUT/sanitizer.txt";;
esac
for p in dense-bf16 native-fp8 w8a16; do
  [ -f "$OUT/h200_gemm_$p.tsv" ] && { echo "== $p"; grep -v '^#' "$OUT/h200_gemm_$p.tsv" | cut -f1-6; }
done
grep -c FAIL "$OUT/log.txt" 2>/dev/null | sed 's/^/FAIL lines in log: /'
# the shapes stage's ratio table: each path's time / dense-bf16's at the same M (same call)
ls "$OUT"/h200_gemm_shape_*.tsv >/dev/null 2>&1 && awk -F'\t' '
  /^#@ k: / { k = $0; sub(/^#@ k: /, "", k) } /^#@ n: / { n = $0; sub(/^#@ n: /, "", n) }
  /^#@ path: / { p = $0; sub(/^#@ path: /, "", p); s = k "x" n; if (!(s in seen)) { seen[s] = 1; order[++ns] = s } }
  /^[0-9]/ { if (!((s, $1) in ms)) { ms[s, $1] = 1; mo[s, ++nm[s]] = $1 } t[s, p, $1] = $2 }
  END {
    np = split("w8a16 native-fp8 fp8-block", P, " ")
    for (i = 1; i <= ns; i++) {
      s = order[i]
      printf "== K x N = %s: time / dense-bf16 time at the same M (dense-bf16 in us)\n%6s %10s", s, "M", "dense-us"
      for (j = 1; j <= np; j++) printf " %10s", P[j]
      printf "\n"
      for (q = 1; q <= nm[s]; q++) {
        m = mo[s, q]; d = t[s, "dense-bf16", m]
        printf "%6d %10s", m, d == "" ? "-" : d
        for (j = 1; j <= np; j++) { v = t[s, P[j], m]; printf " %10s", (v == "" || d == "") ? "-" : sprintf("%.2f", v / d) }
        printf "\n"
      }
    }
  }' "$OUT"/h200_gemm_shape_*.tsv
