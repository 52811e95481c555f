#!/bin/sh
# tools/device/run_h200_gather.sh: the gather tests and benches on one H200 (one rank).
# Binaries are built on the development machine (configure --enable-static-deps, in the
# git-ignored _build_gdev_gather/) and carried in _build_gdev_gather/bin; this script only
# runs them and writes logs and tables to $OUT (default ./out), at most 8 files:
#   run.log                 environment, exit codes, progress lines (stderr of every step)
#   test_gather_custom.log  the custom one-shot all-gather with 1..8 ranks EMULATED on one
#                           GPU, uneven T, + the real one-rank path (NCCL and custom, graphs)
#   sanitizer.log           compute-sanitizer memcheck and racecheck, quick emulated subset
#   split_h200_tp1_*.tsv    bench split --tp 1 (the N=1 path: GEMM(T) vs GEMM(T) + a one-rank
#                           gather), w8a16, dense-bf16, native-fp8, the default token counts
#   allgather_h200_tp1_*.log  bench allgather --tp 1 (one rank: a local copy, the floor)
# Steps run in order of importance, each under `timeout`.  NVLink multicast stays off.
set -u
export NCCL_NVLS_ENABLE=0
OUT=${OUT:-out}
BIN=${BIN:-_build_gdev_gather/bin}
mkdir -p "$OUT"
LOG="$OUT/run.log"
# NCCL: the system copy, else the one that PyTorch's wheel brings.
if ! ldconfig -p 2>/dev/null | grep -q 'libnccl.so.2'; then
  d=$(find /usr /opt -name 'libnccl.so.2' 2>/dev/null | head -1)
  [ -n "$d" ] && export LD_LIBRARY_PATH="$(dirname "$d")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
step() { # step NAME TIMEOUT CMD...: run, log its stderr and exit code
  name=$1; t=$2; shift 2
  echo "== $name: $*" >> "$LOG"
  timeout "$t" "$@" 2>> "$LOG"; rc=$?
  echo "== $name rc=$rc" >> "$LOG"; echo "$name rc=$rc"
}
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.sm --format=csv
  echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"
  ldd "$BIN/tpsplit" | grep -E 'nccl|cublas|cudart|not found'
} > "$LOG" 2>&1
cat "$LOG"
step test 60 sh -c "\"$BIN/test_gather_custom\" > \"$OUT/test_gather_custom.log\" 2>&1"
tail -3 "$OUT/test_gather_custom.log"
step split-w8a16 60 "$BIN/tpsplit" bench split --path w8a16 --gather auto --tp 1 -o "$OUT/split_h200_tp1_w8a16.tsv"
step allgather-nccl 40 "$BIN/tpsplit" bench allgather --tp 1 --bytes 1K..64M -o "$OUT/allgather_h200_tp1_nccl.log"
step memcheck 45 sh -c "TPS_TEST_QUICK=1 compute-sanitizer --tool memcheck --error-exitcode 9 \"$BIN/test_gather_custom\" > \"$OUT/sanitizer.log\" 2>&1"
step split-dense 45 "$BIN/tpsplit" bench split --path dense-bf16 --gather auto --tp 1 -o "$OUT/split_h200_tp1_dense-bf16.tsv"
step split-fp8 45 "$BIN/tpsplit" bench split --path native-fp8 --gather auto --tp 1 -o "$OUT/split_h200_tp1_native-fp8.tsv"
step allgather-custom 25 "$BIN/tpsplit" bench allgather --tp 1 --gather custom --bytes 1K..2M -o "$OUT/allgather_h200_tp1_custom.log"
step racecheck 40 sh -c "TPS_TEST_QUICK=1 compute-sanitizer --tool racecheck --error-exitcode 9 \"$BIN/test_gather_custom\" >> \"$OUT/sanitizer.log\" 2>&1"
grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|checks' "$OUT/sanitizer.log"
grep -v '^#' "$OUT/split_h200_tp1_w8a16.tsv" 2>/dev/null
grep -E '^ +[0-9]' "$OUT/allgather_h200_tp1_nccl.log" 2>/dev/null | head -20
grep -E 'tpsplit: ' "$LOG" | grep -v 'checking\|timing' | tail -30
