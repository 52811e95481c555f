#!/bin/bash
# run_w8a16.sh: one device call for issue 28 (the W8A16 kernels at 128..1024 rows on the H200).
# Built here (no GPU): cd _build_k && ../configure --enable-static-deps && make &&
#   make tests/unit/kernels/test_gemm_gpu tests/unit/kernels/w8trace tests/unit/kernels/test_kspan && mkdir -p bin &&
#   cp tpsplit tests/unit/kernels/test_gemm_gpu tests/unit/kernels/w8trace tests/unit/kernels/test_kspan bin/
# Run there (device tool):  bash tools/device/run_w8a16.sh BIN   (BIN: the folder of those binaries,
# carried; the device tool sends one checkout, so a worktree's binaries travel in an ignored
# folder named in carry, e.g. .w8carry/bin)
# STAGES (default "env ratio"):
#   env       GPU, driver, clocks; cuobjdump resource usage and the SASS of the w8t kernels
#   test      tests/unit/kernels/test_gemm_gpu (every W8A16 kernel and form forced in turn, float64 reference)
#   ratio     tpsplit bench gemm, w8a16 and dense-bf16, K 5120 N 1792 and K 7168 N 2112 (RATIO_SHAPES: KxN ...), tokens
#             RATIO_TOKENS, --tp 1, RATIO_SAMPLES (50) samples, rows alternated; one table per
#             shape and path, <gpu>_w8a16_ratio_<K>x<N>_<path>.tsv (<gpu>: h100, h200, ... from nvidia-smi); the ratio dense/w8a16 per M last
#   sweep     w8a16 with each of SWEEP_ENVS (space-separated, each a comma list of VAR=value)
#             at SWEEP_TOKENS, 20 samples, K 5120 N 1792 (SWEEP_KN to change), into sweep.txt
#   ncu       ncu (full set) of one w8t launch per NCU_CASES entry (ENV,...:M:SKIP), details and
#             the SASS source page with stall samples, into ncu.txt / ncu_src.txt
#   sanitize  compute-sanitizer memcheck and racecheck on test_gemm_gpu, once per entry of SAN_ENVS
#             (space-separated; else SAN_ENV, default TPS_TEST_QUICK=1; TPS_TEST_SPLIT_ONLY=1: the split
#             kernel's tiles and splits alone; TPS_TEST_SK_ONLY=1: the stream-K kernel's tiles and grids, =64|128|256 one tile)
# Stages run in the order env, test, ratio, sanitize, sweep, ncu.
B=${1:-.w8carry/bin}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
STAGES=${STAGES:-"env ratio"}
export NCCL_NVLS_ENABLE=0
if ldd "$B/tpsplit" | grep -q "not found"; then
  for l in $(ldd "$B/tpsplit" | awk '/not found/ {print $1}'); do
    d=$(find / -xdev -name "$l" -printf '%h\n' 2>/dev/null | head -1)
    [ -n "$d" ] && export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$d"
  done
fi
has() { case " $STAGES " in *" $1 "*) return 0;; esac; return 1; }
G=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | grep -oiE "[A-Z]+[0-9]+" | head -1 | tr "A-Z" "a-z"); G=${G:-gpu}
if has env; then
  { date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu --format=csv
    nvcc --version | tail -2
    cuobjdump --dump-resource-usage "$B/tpsplit" 2>&1 | grep -A1 -E "w8t_kernel|w8s_kernel|w8k_kernel|w8k2_kernel" | head -200
  } >"$OUT/env.txt" 2>&1
  [ -n "$SASS_KERNEL" ] && cuobjdump -sass -fun "$SASS_KERNEL" "$B/tpsplit" >"$OUT/sass.txt" 2>&1
  head -3 "$OUT/env.txt"
fi
if has test; then
  env ${TEST_ENV:-} timeout ${TEST_TIMEOUT:-200} "$B/test_gemm_gpu" >"$OUT/test.txt" 2>&1; echo "test_gemm_gpu exit $? (${SECONDS}s)" | tee -a "$OUT/test.txt"
  grep -E "FAIL|SKIPPED|passed|failed" "$OUT/test.txt" | tail -15
fi
if has ratio; then
  RT=${RATIO_TOKENS:-1,16,64,128,192,256,320,384,448,512,640,768,896,1024,2048,4096,8192}
  for kn in ${RATIO_SHAPES:-5120x1792 7168x2112}; do
    for p in w8a16 dense-bf16; do
      [ "$SECONDS" -gt "${RATIO_DEADLINE:-480}" ] && { echo "ratio $kn $p not run (${SECONDS}s)"; continue; }
      timeout 150 "$B/tpsplit" bench gemm --k "${kn%x*}" --n "${kn#*x}" --path "$p" --tokens "$RT" --tp 1 \
        --samples "${RATIO_SAMPLES:-50}" -o "$OUT/${G}_w8a16_ratio_${kn}_$p.tsv" 2>>"$OUT/log.txt"
      echo "ratio $kn $p exit $? (${SECONDS}s)"
    done
    f1="$OUT/${G}_w8a16_ratio_${kn}_w8a16.tsv"; f2="$OUT/${G}_w8a16_ratio_${kn}_dense-bf16.tsv"
    [ -f "$f1" ] && [ -f "$f2" ] && { echo "== $kn: M dense-us w8a16-us dense/w8a16"
      join -t "$(printf '\t')" <(grep -v '^#' "$f2" | cut -f1,2 | sort -k1,1) <(grep -v '^#' "$f1" | cut -f1,2 | sort -k1,1) |
        sort -n | awk -F'\t' '{ printf "%6d %9.2f %9.2f %6.2fx\n", $1, $2, $3, $2 / $3 }'; }
  done
fi
if has sanitize; then
  for se in ${SAN_ENVS:-${SAN_ENV:-TPS_TEST_QUICK=1}}; do
    for tool in memcheck racecheck; do
      echo "== $se compute-sanitizer --tool $tool test_gemm_gpu" >>"$OUT/sanitizer.txt"
      env $se timeout ${SAN_TIMEOUT:-200} compute-sanitizer --tool $tool --error-exitcode 9 "$B/test_gemm_gpu" >>"$OUT/sanitizer.txt" 2>&1
      echo "exit $? (${SECONDS}s)" >>"$OUT/sanitizer.txt"
    done
  done
  grep -E "^exit|ERROR SUMMARY|RACECHECK SUMMARY|SKIPPED" "$OUT/sanitizer.txt"
fi
if has sweep; then
  x() { echo "== $*" >>"$OUT/sweep.txt"; env "$@" 2>>"$OUT/log.txt" | grep -v '^#' | cut -f1-3 >>"$OUT/sweep.txt"; }
  # SWEEP_KN: shapes K x N (space-separated); SWEEP_ENVS2: the configurations for shapes after the first
  first=1
  for KN in ${SWEEP_KN:-5120x1792}; do
    S="$B/tpsplit bench gemm --k ${KN%x*} --n ${KN#*x} --tp 1 --samples ${SWEEP_SAMPLES:-20} --tokens ${SWEEP_TOKENS:-128,192,256,384,512,768,1024}"
    x $S --path dense-bf16
    envs=${SWEEP_ENVS:-}; [ $first = 0 ] && [ -n "$SWEEP_ENVS2" ] && envs=$SWEEP_ENVS2
    for f in $envs; do x ${f//,/ } $S --path w8a16; done
    first=0
  done
  # one table per shape: M, then each block's time (columns in block order)
  awk '/^== /{b++; h[b]=$0; next} /^rows/{next} {t[b,$1]=$2; if(!($1 in seen)){seen[$1]=1; ms[++n]=$1}} END{for(i=1;i<=b;i++) print "col " i ": " h[i]; for(j=1;j<=n;j++){printf "%6s", ms[j]; for(i=1;i<=b;i++) printf " %8s", ((i,ms[j]) in t)?t[i,ms[j]]:"-"; printf "\n"}}' "$OUT/sweep.txt" | sed 's#'"$B"'/##'
fi
if has ncu; then
  for c in ${NCU_CASES:-}; do
    e=${c%%:*}; r=${c#*:}; m=${r%%:*}; sk=${r#*:}
    echo "== ncu $e M=$m skip=$sk" | tee -a "$OUT/ncu.txt" >>"$OUT/ncu_src.txt"
    env ${e//,/ } timeout 150 ncu --clock-control none --set full -k regex:"w8[tsk]2?_kernel" --launch-skip "$sk" --launch-count 1 \
      -o "$OUT/rep" -f "$B/tpsplit" bench gemm --k 5120 --n 1792 --path w8a16 --tokens "$m" --tp 1 --check-only >>"$OUT/log.txt" 2>&1
    ncu -i "$OUT/rep.ncu-rep" --page details >>"$OUT/ncu.txt" 2>&1
    ncu -i "$OUT/rep.ncu-rep" --page source --csv --print-source sass >>"$OUT/ncu_src.txt" 2>&1
    rm -f "$OUT/rep.ncu-rep"
  done
  grep -E "^== ncu|w8t_kernel|w8s_kernel|w8k_kernel|w8k2_kernel|Grid Size|Duration|DRAM Throughput|L2 Cache Throughput|Compute \(SM\) Throughput|Achieved Occupancy|Issue Slots Busy|Warp Cycles Per Issued" "$OUT/ncu.txt" | head -60
fi
echo "done (${SECONDS}s)"
