#!/bin/bash
# run_h200_calibrate.sh: one device call that measures how well `tpsplit calibrate` does on
# an H200 (one GPU or more): (a) calibrate with the default budget (60 s) for the DeepSeek
# shapes 5120x1792 (V4.1 fused_wqa_wkv) and 7168x2112 (V3 fused q_a/kv_a), its wall time
# recorded; (b) a full 50-sample bench gemm of every path at 24 M per shape, none of them a
# row calibrate's first-phase sweep takes (the check skips any that its break-even rows hit);
# (c) calibrate --check of (a) against (b): per path and shape the median and max |error|,
# targets median <= 4%, max <= 10%.
# Built here (no GPU), binaries only, carried to the device:
#   mkdir -p _build_cuda && cd _build_cuda && ../configure -q --enable-static-deps && make -j2 &&
#   mkdir -p bin && cp tpsplit bin/
# Run there (device tool, from the repository root):
#   OUT=$OUT bash kernels/run_h200_calibrate.sh _build_cuda/bin        (carry _build_cuda/bin)
# Writes under $OUT (8 files): thresholds_h200.json (the engine-facing file), check.txt (the
# check table, wall times, the calibrate log, the environment), full_<K>x<N>_<path>.tsv (6).
B=${1:-_build_cuda/bin}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0
export TPSPLIT_DATADIR=${TPSPLIT_DATADIR:-$PWD/data}
if ldd "$B/tpsplit" | grep -q "not found"; then
  for l in $(ldd "$B/tpsplit" | awk '/not found/ {print $1}'); do
    d=$(find / -xdev -name "$l" -printf '%h\n' 2>/dev/null | head -1)
    [ -n "$d" ] && export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$d"
  done
fi
C=$OUT/check.txt
SHAPES="5120x1792 7168x2112"
PATHS="dense-bf16 native-fp8 w8a16"
# 24 M outside the first-phase sweeps (these are 1, 2^j, 3*2^(j-1), the w8a16 regime tops
# 16..384, 1024, 2304, 4608): inside every w8a16 regime and between cuBLASLt's grid points
M=3,5,10,20,40,56,80,100,160,200,300,320,448,640,896,1280,1792,2560,3584,5120,7168,10240,12800,14336
{
  echo "== environment"; date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu --format=csv
  nvidia-smi -L; ldd "$B/tpsplit" | grep -E "cupti|nccl|cublas|cudart|not found"; echo "TPSPLIT_DATADIR=$TPSPLIT_DATADIR"
} >"$C" 2>&1

# (a) calibrate, default budget
t0=$(date +%s.%N)
timeout 400 "$B/tpsplit" calibrate --shapes 5120x1792,7168x2112 -o "$OUT/thresholds_h200.json" 2>"$OUT/calibrate.log"
rc=$?
t1=$(date +%s.%N)
wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
{
  echo "== (a) tpsplit calibrate --shapes 5120x1792,7168x2112 (default budget 60 s): exit $rc, wall $wall s (process)"
  grep -E '"wall_s"|"partial"' "$OUT/thresholds_h200.json" 2>/dev/null
  cat "$OUT/calibrate.log"
} >>"$C"
rm -f "$OUT/calibrate.log"
echo "calibrate: exit $rc, $wall s"

# (b) full benches: 50 samples, every path, both shapes
for s in $SHAPES; do
  k=${s%x*}; n=${s#*x}
  for p in $PATHS; do
    f="$OUT/full_${s}_$p.tsv"
    t0=$(date +%s.%N)
    timeout 240 "$B/tpsplit" bench gemm --path "$p" --k "$k" --n "$n" --tokens "$M" --tp 1 --samples 50 -o "$f" 2>"$OUT/bench.log"
    rc=$?
    t1=$(date +%s.%N)
    echo "== (b) bench gemm $p ${s}: exit $rc, $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s" >>"$C"
    [ $rc -eq 0 ] || tail -5 "$OUT/bench.log" >>"$C"
  done
done
rm -f "$OUT/bench.log"

# (c) the check: per (shape, path), rows outside the sweep; then every row
{
  echo "== (c) tpsplit calibrate --check (median <= 4%, max <= 10%)"
  "$B/tpsplit" calibrate --check "$OUT/thresholds_h200.json" --rows "$OUT"/full_*.tsv
  echo "check exit $?"
} >>"$C" 2>&1
grep -vE '^calibrate: \[' "$C" | grep -E "^==|exit|within|OUTSIDE|tolerance|wall|split from|never|partial" | head -80
