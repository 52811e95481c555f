#!/bin/bash
# run_h200_configmap.sh: one device call that measures what calibrate's GEMM model must
# follow on the cuBLASLt paths (issue 17, item 3):
#  (a) cuBLASLt's heuristic choice at every M = 1..16384 (bench gemm --configs: nothing run),
#      dense-bf16 and native-fp8, 5120x1792 and 7168x2112: where the kernel changes;
#  (b) dense tables: 400 M (every row to 64, every 4 to 512, 16 to 2048, 64 to 8192, 256 to
#      16384), 15 samples each, sampled-row checks once per configuration
#      (--check-per-config; the all-row checks at M 1, 7, 64, 129 as always);
#  (c) the 7168x2112 native-fp8 M = 448 case (37.9 vs 31.6 us a minute apart in run 2)
#      measured twice with its neighbours, 50 samples;
#  (d) tpsplit calibrate (default options) with this binary: rows per round and wall time.
# Built here (no GPU), binaries only, carried to the device:
#   mkdir -p _build_cuda && cd _build_cuda && ../configure -q --enable-static-deps && make -j2 &&
#   mkdir -p bin && cp tpsplit bin/
# Run there (device tool, from the repository root; carry _build_cuda/bin):
#   OUT=$OUT bash tools/device/run_h200_configmap.sh _build_cuda/bin
# Writes under $OUT: configs_<K>x<N>_<path>.tsv (4), dense_<K>x<N>_<path>.tsv (4),
# fp8_448_{1,2}.tsv, thresholds_h200_5120x1792.json; wall times and summaries on stdout.
# PARTS (environment): the parts to run, default "a b c d".
B=${1:-_build_cuda/bin}
PARTS=${PARTS:-a b c d}
has() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
LOG=$(mktemp -d)
export TPSPLIT_DATADIR=${TPSPLIT_DATADIR:-$PWD/data}
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
DENSE=$( (seq 1 64; seq 68 4 512; seq 528 16 2048; seq 2112 64 8192; seq 8448 256 16384) | paste -sd,)
echo "== environment: $(date -u)"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.mem --format=csv,noheader
has a && for s in 5120x1792 7168x2112; do
  k=${s%x*}; n=${s#*x}
  for p in dense-bf16 native-fp8; do
    t0=$(date +%s.%N)
    timeout 120 "$B/tpsplit" bench gemm --configs --path $p --k $k --n $n --tokens 1..16384:1 --tp 1 \
      -o "$OUT/configs_${s}_$p.tsv" 2>"$LOG/c.txt"
    rc=$?
    echo "== (a) configs $s $p: exit $rc, $(secs "$t0" "$(date +%s.%N)") s, $(grep -vc '^#\|^first' "$OUT/configs_${s}_$p.tsv" 2>/dev/null) segments"
    [ $rc -eq 0 ] || tail -3 "$LOG/c.txt"
  done
done
has b && for s in 5120x1792 7168x2112; do
  k=${s%x*}; n=${s#*x}
  for p in dense-bf16 native-fp8; do
    t0=$(date +%s.%N)
    timeout 150 "$B/tpsplit" bench gemm --path $p --k $k --n $n --tokens "$DENSE" --tp 1 --samples 15 \
      --check-per-config -o "$OUT/dense_${s}_$p.tsv" 2>"$LOG/d.txt"
    rc=$?
    echo "== (b) dense $s $p: exit $rc, $(secs "$t0" "$(date +%s.%N)") s, $(grep -c 'check .*sampled' "$LOG/d.txt") sampled-row checks"
    [ $rc -eq 0 ] || tail -3 "$LOG/d.txt"
  done
done
has c && for i in 1 2; do
  t0=$(date +%s.%N)
  timeout 60 "$B/tpsplit" bench gemm --path native-fp8 --k 7168 --n 2112 --tokens 384,447,448,449,512,1280 --tp 1 \
    --samples 50 -o "$OUT/fp8_448_$i.tsv" 2>"$LOG/f.txt"
  echo "== (c) fp8 7168x2112 M 448, run $i: exit $?, $(secs "$t0" "$(date +%s.%N)") s"
  grep -E '^(384|447|448|449|512|1280)\s' "$OUT/fp8_448_$i.tsv"
done
has d || exit 0
t0=$(date +%s.%N)
timeout 200 "$B/tpsplit" calibrate -o "$OUT/thresholds_h200_5120x1792.json" 2>"$LOG/cal.txt"
echo "== (d) calibrate: exit $?, wall $(secs "$t0" "$(date +%s.%N)") s"
grep -vE '^calibrate: \[' "$LOG/cal.txt" | grep -E "gemm .*rows\)|budget|wrote|error|tpsplit:" | cut -c1-200
