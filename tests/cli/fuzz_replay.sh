#!/bin/sh
# tests/cli/fuzz_replay.sh: every fuzz harness (tests/fuzz/fuzz_NAME.c, built here without
# libFuzzer) fed its seeds and the committed crash corpus: each input that ever crashed a
# parser (tests/fuzz/crashes/NAME) must now be read or refused cleanly.  Under the sanitizer
# build (.ci/run) the same inputs run with ASan and UBSan.
. "$top_srcdir/tests/cli/lib.sh"
b="$top_builddir/tests/fuzz"
s="$top_srcdir"
c="$s/tests/fuzz/crashes"
replay() { # replay NAME INPUT...
  n=$1; shift
  [ -d "$c/$n" ] && set -- "$c/$n" "$@" # its crash corpus, once it has one
  "$b/replay_$n" "$@" >"$tmp/out" 2>"$tmp/err" && ok || fail "$n: $(tail -n 5 "$tmp/err")"
  grep -q ' inputs replayed$' "$tmp/out" && ok || fail "$n: no summary"
}
replay split_table "$s"/data/h20_tp8_fused_wqa_wkv.tsv "$s"/tests/data/bad
replay bench_table "$s"/data/h200_gemm_w8a16.tsv "$s"/tests/data/gemm_h20_marlin.tsv "$s"/tests/data/allgather_h20.tsv
replay ncclt_text "$s"/tests/data/ncclt "$s"/data/allgather_h200_tp1_nccl.txt
replay ncclt_json "$s"/tests/data/ncclt/json.txt "$s"/tests/data/ncclt/json_bom.txt
replay fitfile "$s"/tests/fuzz/seeds/fit
replay xgpufile "$s"/data/xgpu.fit
replay measure "$s"/tests/fuzz/seeds/fit "$s"/data/h20_tp8_fused_wqa_wkv.tsv "$s"/data/h200_gemm_w8a16.tsv "$s"/tests/data/ncclt \
  "$s"/tests/fuzz/seeds/aiconf "$s"/tests/data/bad
replay gpus "$s"/data/gpus.tsv
replay modeldesc "$s"/data/models
replay lists "$s"/tests/fuzz/seeds/lists
replay aiconf "$s"/tests/fuzz/seeds/aiconf
replay thresholds "$s"/data/calibrate "$s"/tests/fuzz/seeds/thresholds
n=$(find "$c" -type f | wc -l)
[ "$n" -ge 10 ] && ok || fail "only $n committed crash inputs"
finish
