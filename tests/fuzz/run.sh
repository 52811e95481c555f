#!/bin/sh
# run.sh: run the libFuzzer binaries of `make fuzz`.
#   run.sh SRCDIR BINDIR SECONDS [NAME...]
# For each harness: replay its committed crash corpus (tests/fuzz/crashes/NAME: every input
# that ever crashed a parser; a crash now is a regression), then fuzz for SECONDS from a seed
# corpus assembled from data/, the fixtures and tests/fuzz/seeds.  New crashes are written to
# BINDIR/crash/NAME/ (copy them into tests/fuzz/crashes/NAME once fixed).  Prints one line per
# harness: its execs, and exits 1 when anything crashed.  FUZZ_TIMEOUT: libFuzzer's per-input
# limit in seconds (default 10; an hour's run at nice 19 beside other work wants more, or a
# starved process reports a timeout on an input that runs in milliseconds).
set -u
src=$1; bin=$2; secs=$3; shift 3
names=${*:-"split_table bench_table ncclt_text ncclt_json fitfile gpus modeldesc lists aiconf thresholds xgpufile measure"}
pre() { # pre OCTAL NAME: stdin with one byte in front (the options byte of ncclt_text, aiconf), as a seed
  { printf "\\$1"; cat; } >"$tmpd/$2"; echo "$tmpd/$2"
}
seeds() { # seeds NAME: the files the corpus of NAME starts from
  case "$1" in
    split_table) ls "$src"/data/*fused_wqa_wkv*.tsv "$src"/tests/data/bad/*.tsv ;;
    bench_table) ls "$src"/data/h200_gemm_*.tsv "$src"/tests/data/*.tsv "$src"/tests/data/bad/gemm_*.tsv "$src"/tests/data/bad/allgather_*.tsv ;;
    ncclt_text) for f in "$src"/tests/data/ncclt/*.txt "$src"/data/allgather_*.txt "$src"/tests/data/bad/ncclt_*.txt; do
                  pre 000 "nt_$(basename "$f")" <"$f"; done ;;
    ncclt_json) ls "$src"/tests/data/ncclt/json*.txt "$src"/tests/data/bad/ncclt_json_*.txt ;;
    fitfile) ls "$src"/tests/fuzz/seeds/fit/* "$src"/tests/data/bad/*.fit ;;
    gpus) ls "$src"/data/gpus.tsv "$src"/tests/data/bad/gpus_*.tsv ;;
    modeldesc) ls "$src"/data/models/*.tsv "$src"/tests/data/bad/model_*.tsv ;;
    lists) ls "$src"/tests/fuzz/seeds/lists/* ;;
    xgpufile) ls "$src"/data/xgpu.fit ;;
    measure) ls "$src"/tests/fuzz/seeds/fit/* "$src"/data/h20_tp8_fused_wqa_wkv.tsv "$src"/data/h200_gemm_w8a16.tsv \
               "$src"/tests/data/ncclt/*.txt "$src"/data/allgather_*.txt ;;
    thresholds) find "$src"/data/calibrate "$src"/tests/fuzz/seeds/thresholds -name '*.json' ;;
    aiconf) # byte 0 = no selection; the bundled tables whole (gzip) and their first rows (plain
            # and gzip), first rows of the full tables of shared/ where there is one, the bad cases
      ls "$src"/tests/fuzz/seeds/aiconf/*
      for f in "$src"/data/aic/*.gz; do
        b=$(basename "$f" .tsv.gz)
        pre 000 "aic_$b.gz" <"$f"
        gzip -dc "$f" | head -n 60 | pre 000 "aic_${b}_60.tsv"
        gzip -dc "$f" | head -n 200 | gzip -n | pre 000 "aic_${b}_200.gz"
      done
      for f in "$src"/shared/data/aic/*.gz "$src"/../shared/data/aic/*.gz; do
        [ -f "$f" ] || continue
        gzip -dc "$f" | head -n 300 | gzip -n | pre 000 "aic_shared_$(basename "$f" .tsv.gz)_300.gz"
      done
      for f in "$src"/tests/data/bad/aic_*; do pre 000 "aic_bad_$(basename "$f")" <"$f"; done ;;
  esac 2>/dev/null
}
status=0
tmpd=$(mktemp -d "${TMPDIR:-/tmp}/tpsplit-fuzz.XXXXXX")
trap 'rm -rf "$tmpd"' EXIT
for n in $names; do
  b="$bin/fuzz_$n"
  [ -x "$b" ] || { echo "fuzz $n: no binary $b (make fuzz)"; status=1; continue; }
  if [ -d "$src/tests/fuzz/crashes/$n" ] && ls "$src/tests/fuzz/crashes/$n" | grep -q .; then
    "$b" -runs=0 "$src/tests/fuzz/crashes/$n"/* >"$tmpd/replay.log" 2>&1 || { echo "fuzz $n: a committed crash input crashes again"; tail -n 20 "$tmpd/replay.log"; status=1; }
  fi
  corpus="$bin/corpus/$n"
  mkdir -p "$corpus" "$bin/crash/$n"
  for f in $(seeds "$n"); do cp "$f" "$corpus/seed_$(basename "$f")"; done
  dict=""
  [ -f "$src/tests/fuzz/$n.dict" ] && dict="-dict=$src/tests/fuzz/$n.dict"
  # shellcheck disable=SC2086
  "$b" -max_total_time="$secs" -timeout="${FUZZ_TIMEOUT:-10}" -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
    -artifact_prefix="$bin/crash/$n/" $dict "$corpus" >"$tmpd/$n.log" 2>&1
  rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$tmpd/$n.log")
  if [ "$rc" -ne 0 ]; then
    echo "fuzz $n: CRASH after ${execs:-?} execs (inputs in $bin/crash/$n)"
    grep -E "ERROR|runtime error|SUMMARY" "$tmpd/$n.log" | head -n 5
    status=1
  else
    echo "fuzz $n: ${execs:-?} execs in ${secs} s, no crash"
  fi
done
exit $status
