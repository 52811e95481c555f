#!/bin/bash
# run_h200_calibrate.sh: one device call that measures how well `tpsplit calibrate` does on
# an H200 (one GPU or more):
#  (a) calibrate as a user runs it (default options: 5120x1792, the DeepSeek-V4.1
#      fused_wqa_wkv; budget 60 s), its wall time recorded; then calibrate --shapes 7168x2112
#      (DeepSeek-V3 fused q_a/kv_a), default budget too;
#  (b) a full 50-sample bench gemm of every path at 36 M per shape, none of them a row of
#      calibrate's first-phase sweep (the check skips any that a break-even row hits);
#  (c) calibrate --check of (a) against (b): per path and shape the median and max |error|
#      (targets: median <= 4%, max <= 10%), and every row missed by more than 3%.
# Built here (no GPU), binaries only, carried to the device:
#   mkdir -p _build_cuda && cd _build_cuda && ../configure -q --enable-static-deps && make -j2 &&
#   mkdir -p bin && cp tpsplit bin/
# Run there (device tool, from the repository root; carry _build_cuda/bin):
#   OUT=$OUT bash tools/device/run_h200_calibrate.sh _build_cuda/bin
# Dry run without a GPU (tpsplit's GPU calls mocked): make tests/cli/calib_mock && mkdir -p /tmp/b &&
#   ln -sf $PWD/_build/tests/cli/calib_mock /tmp/b/tpsplit && OUT=/tmp/o bash tools/device/run_h200_calibrate.sh /tmp/b
# Writes under $OUT (8 files): thresholds_h200_5120x1792.json and thresholds_h200_7168x2112.json
# (the engine-facing files), full_<K>x<N>_<path>.tsv (6); the wall times, the calibrate logs'
# summary lines and the check tables go to stdout.
B=${1:-_build_cuda/bin}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
LOG=$(mktemp -d)
export NCCL_NVLS_ENABLE=0
export TPSPLIT_DATADIR=${TPSPLIT_DATADIR:-$PWD/data}
if ldd "$B/tpsplit" | grep -q "not found"; then
  for l in $(ldd "$B/tpsplit" | awk '/not found/ {print $1}'); do
    d=$(find / -xdev -name "$l" -printf '%h\n' 2>/dev/null | head -1)
    [ -n "$d" ] && export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$d"
  done
fi
PATHS="dense-bf16 native-fp8 w8a16"
# 36 M: 24 outside the first-phase sweeps (those are 1, 2^j, 3*2^(j-1), the w8a16 regime tops
# 16..384, 1024 and the 256-token tile's wave tops): inside every w8a16 regime and between
# cuBLASLt's grid points; and 12 odd M (one past a tile count, as 2561 on H100) that the
# adaptive rows (even multiples above 16 rows, model/calib/calib.h) never hit: >= 20 stay outside
M=3,5,7,10,20,25,40,56,80,97,100,160,161,200,257,300,320,321,448,449,640,896,1025,1280,1537,1792,2560,2561,3584,4097,5120,7168,8193,10240,12800,14336
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
echo "== environment: $(date -u)"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.mem --format=csv,noheader
nvidia-smi -L | wc -l | sed 's/^/GPUs: /'

# (a) calibrate: the default invocation, then the second shape
for s in default 7168x2112; do
  f=$OUT/thresholds_h200_${s/default/5120x1792}.json
  args=""; [ "$s" = default ] || args="--shapes $s"
  t0=$(date +%s.%N)
  timeout 400 "$B/tpsplit" calibrate $args -o "$f" 2>"$LOG/cal_$s.txt"
  rc=$?
  t1=$(date +%s.%N)
  echo "== (a) tpsplit calibrate $args -o $(basename "$f"): exit $rc, wall $(secs "$t0" "$t1") s (process); $(grep -oE '"(wall_s|partial)": [^,]*' "$f" 2>/dev/null | tr '\n' ' ')"
  grep -vE '^calibrate: \[' "$LOG/cal_$s.txt" | grep -E "gemm .*rows\)|allgather|budget|skipping|FAIL|failed|wrote|TP8|not in data|no GPU|error|tpsplit:" | cut -c1-230
done

# (b) full benches: 50 samples, every path, both shapes
for s in 5120x1792 7168x2112; do
  k=${s%x*}; n=${s#*x}
  for p in $PATHS; do
    t0=$(date +%s.%N)
    timeout 240 "$B/tpsplit" bench gemm --path "$p" --k "$k" --n "$n" --tokens "$M" --tp 1 --samples 50 \
      -o "$OUT/full_${s}_$p.tsv" 2>"$LOG/bench.txt"
    rc=$?
    echo "== (b) bench gemm $p $s: exit $rc, $(secs "$t0" "$(date +%s.%N)") s"
    [ $rc -eq 0 ] || tail -3 "$LOG/bench.txt"
  done
done

# (c) the checks: per (shape, path), rows outside the sweep; the rows missed by > 3%
for s in 5120x1792 7168x2112; do
  echo "== (c) tpsplit calibrate --check thresholds_h200_$s.json full_${s}_*.tsv"
  "$B/tpsplit" calibrate --check "$OUT/thresholds_h200_$s.json" --rows "$OUT"/full_${s}_*.tsv >"$LOG/check.txt" 2>&1
  rc=$?
  awk -F'\t' '/^# every bench row/ { rows = 1; next }
    !rows { print; next }
    $6 ~ /%/ { e = $6; sub("%", "", e); if ((e + 0 > 3 || e + 0 < -3) && $7 != "sweep") print "  missed: " $0 }' "$LOG/check.txt"
  echo "check exit $rc"
  if [ $rc -eq 2 ]; then # a path without a measured calibration or bench: the others one by one
    for f in "$OUT"/full_${s}_*.tsv; do
      "$B/tpsplit" calibrate --check "$OUT/thresholds_h200_$s.json" "$f" 2>&1 | grep -vE "^#|^shape"
    done
  fi
done
rm -rf "$LOG"
