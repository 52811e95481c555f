#!/bin/bash
# compare_thresholds.sh [TPSPLIT [DIR]]: for each entry (shape, path, TP, gather) of the
# calibrate files in DIR (default data/calibrate/2026-12-05: run 2; 2026-12-05-run3: run 3), the break-even and threshold with the GEMM taken from the full 50-sample
# bench instead (tpsplit predict --gemm FULL_TABLE, the same H200 gather models: NCCL transferred
# from A100/H100/B200, the custom one-shot spec-only), next to calibrate's break-even, 90%
# interval and threshold.  Run from the repository root; needs jq.  Output columns:
#   shape path tp gather bench_breakeven bench_threshold cal_breakeven cal_lo cal_hi cal_threshold
T=${1:-./tpsplit}
command -v jq >/dev/null || { echo "compare_thresholds.sh: needs jq" >&2; exit 2; }
[ -x "$T" ] || { echo "compare_thresholds.sh: no tpsplit at $T (give its path)" >&2; exit 2; }
D=${2:-data/calibrate/2026-12-05}
[ -d "$D" ] || { echo "compare_thresholds.sh: no directory $D" >&2; exit 2; }
for s in 5120x1792 7168x2112; do
  k=${s%x*}; n=${s#*x}
  for p in dense-bf16 native-fp8 w8a16; do for g in nccl auto; do for tp in 2 4 8; do
    b=$(TPSPLIT_DATADIR=data "$T" predict --gpu H200 --tp $tp --path $p --k $k --n $n --gemm $D/full_${s}_$p.tsv \
          --gather $g | grep -E '^(break-even|threshold):' | grep -oE '^[a-z-]+: [0-9]+' | grep -oE '[0-9]+$' | tr '\n' ' ')
    c=$(jq -r --arg s $s --arg p $p --arg t $tp --arg g $g '.devices.NVIDIA_H200.thresholds[$s][$p][$t][$g] |
          "\(.breakeven_tokens) \(.interval_tokens[0]) \(.interval_tokens[1] // "none") \(.split_from_tokens)"' \
          $D/thresholds_h200_$s.json)
    echo "$s $p $tp $g $b$c"
  done; done; done
done
