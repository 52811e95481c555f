#!/bin/sh
# tests/cli/simulate.sh: `tpsplit simulate` against numbers computed here from the bundled H20
# table with awk (never from the program's own output), the chunking arithmetic, the
# side-stream rule, the model-description errors (FILE:LINE, exit 2).
. "$top_srcdir/tests/cli/lib.sh"
data="$top_srcdir/data"
sim() { "$TPSPLIT" simulate "$@"; }

# --- the measured row at 8192 tokens, read from the bundled table itself
rep8k=$(awk -F'\t' '$1 == 8192 { print $3 }' "$data/h20_tp8_fused_wqa_wkv.tsv")
spl8k=$(awk -F'\t' '$1 == 8192 { print $4 }' "$data/h20_tp8_fused_wqa_wkv.tsv")
layer8k=$(awk -v a="$rep8k" -v b="$spl8k" 'BEGIN { printf "%.6f", a - b }')        # 1447.8 us
chunk8k_ms=$(awk -v s="$layer8k" 'BEGIN { printf "%.6f", 40 * s / 1000 }')        # 57.912 ms
expect_near "$layer8k" 1447.8 1e-9 "table saving at 8192"

# --- acceptance: H20 TP8, 8192-token chunks, the brief's prompts and baselines
expect_rc 0 sim --model deepseek-v4.1-flash --gpu H20 --tp 8 --prompt 8192,32768,131072 \
  --baseline-ttft-ms 1117.8,4547,19664
cp "$tmp/out" "$tmp/acc"
# every layer kind saves exactly the fused_wqa_wkv saving at 8192 (aux run serially above
# 1024 tokens and are not split, so they cancel)
for kind in plain compressor/1024+indexer/32 compressor/512+indexer/32 indexer/32; do
  v=$(awk -v k="$kind" '$1 == k && $3 == 8192 { print $8 }' "$tmp/acc")
  expect_near "${v:-0}" "$layer8k" 1e-4 "layer saving of $kind"
done
v=$(awk '$1 == "plain" && $3 == 8192 { print $5, $6 }' "$tmp/acc")
expect_near "${v%% *}" "$rep8k" 1e-4 "plain main_us"
expect_near "${v##* }" "$spl8k" 1e-4 "plain split_us"
v=$(awk '/^chunks/ { c = 1; next } c && $1 == 8192 { print $6; exit }' "$tmp/acc")
expect_near "${v:-0}" "$chunk8k_ms" 1e-4 "chunk saving ms"
# its interval is a point: the only split projection is measured, the predicted aux
# projections run serially above 1024 tokens and cancel
v=$(awk '/^chunks/ { c = 1; next } c && $1 == 8192 { print $7, $8; exit }' "$tmp/acc")
[ "$v" = "[57.912, 57.912]" ] && ok || fail "chunk saving interval: $v"
# on H200 the fused projection is predicted: a real interval around the value
expect_rc 0 sim --model deepseek-v4.1-flash --gpu H200 --tp 8 --prompt 8192
v=$(awk '/^chunks/ { c = 1; next } c && $1 == 8192 { gsub(/[][,]/, ""); print $6, $7, $8; exit }' "$tmp/out")
awk -v v="$v" 'BEGIN { split(v, a, " "); exit !(a[2] < a[1] && a[1] < a[3] && a[3] > 1.2 * a[2]) }' && ok || fail "H200 interval: $v"
# prompts: n chunks of 8192 -> n * 57.912 ms; predicted = baseline - saving
for row in "8192 1 1117.8" "32768 4 4547" "131072 16 19664"; do
  set -- $row
  want_s=$(awk -v n="$2" -v c="$chunk8k_ms" 'BEGIN { printf "%.6f", n * c }')
  want_p=$(awk -v b="$3" -v s="$want_s" 'BEGIN { printf "%.6f", b - s }')
  want_c=$(awk -v b="$3" -v s="$want_s" 'BEGIN { printf "%.6f", -100 * s / b }')
  got=$(awk -v p="$1" '/^prompts/ { c = 1; next } c && $1 == p { print $2, $5, $9, $10 }' "$tmp/acc")
  set -- $got
  [ "${1:-x}" = "$(echo "$row" | cut -d' ' -f2)" ] && ok || fail "chunks of prompt $row: $got"
  expect_near "${2:-0}" "$want_s" 1e-4 "saving_ms of $row"
  expect_near "${3:-0}" "$want_p" 1e-3 "predicted_ttft_ms of $row"
  expect_near "${4:-0}" "$want_c" 2e-3 "change_pct of $row"
done

# --- chunking: 20000 = 8192 + 8192 + 3616; below the threshold the last chunk is not split
expect_rc 0 sim --model deepseek-v4.1-flash --gpu H20 --tp 8 --prompt 20000 --threshold 4096
got=$(awk '/^prompts/ { c = 1; next } c && $1 == 20000 { print $2, $3, $4, $5 }' "$tmp/out")
set -- $got
[ "$1 $2 $3" = "3 3616 no" ] && ok || fail "20000-token prompt: $got"
expect_near "${4:-0}" "$(awk -v c="$chunk8k_ms" 'BEGIN { print 2 * c }')" 1e-4 "saving with the last chunk unsplit"
v=$(awk '/^chunks/ { c = 1; next } c && $1 == 3616 { print $2, $5 }' "$tmp/out")
[ "$v" = "no 0.0" ] && ok || fail "3616-token chunk below threshold 4096: $v"
# threshold 2048: the last chunk is split; its saving lies between the measured savings at
# 2048 and 4096 tokens (458.5-99.7 = 358.8 and 903.6-173.3 = 730.3 us per layer)
expect_rc 0 sim --model deepseek-v4.1-flash --gpu H20 --tp 8 --prompt 20000 --threshold 2048
got=$(awk '/^prompts/ { c = 1; next } c && $1 == 20000 { print $4, $5 }' "$tmp/out")
set -- $got
[ "$1" = yes ] && ok || fail "last chunk not split at threshold 2048: $got"
lo=$(awk -v c="$chunk8k_ms" 'BEGIN { print 2 * c + 40 * 358.8 / 1000 }')
hi=$(awk -v c="$chunk8k_ms" 'BEGIN { print 2 * c + 40 * 730.3 / 1000 }')
awk -v s="${2:-0}" -v lo="$lo" -v hi="$hi" 'BEGIN { exit !(s > lo && s < hi) }' && ok || fail "saving $2 not in ($lo, $hi)"
# the threshold boundary is inclusive: a chunk of exactly the threshold is split
expect_rc 0 sim --model deepseek-v4.1-flash --gpu H20 --tp 8 --prompt 8192 --threshold 8192
expect_grep '^ +8192 +1 +8192 +yes' "$tmp/out"
expect_rc 0 sim --model deepseek-v4.1-flash --gpu H20 --tp 8 --prompt 8192 --threshold 8193
expect_grep '^ +8192 +1 +8192 +no +0\.000' "$tmp/out"

# --- side streams: at 1024 tokens every layer's main stage is the fused GEMM alone
# (239.4 us measured; the aux GEMMs overlap it), at 1025 the aux GEMMs add to it
expect_rc 0 sim --model deepseek-v4.1-flash --gpu H20 --tp 8 --chunk 1024 --prompt 1024 --split none
for kind in plain compressor/1024+indexer/32 compressor/512+indexer/32 indexer/32; do
  v=$(awk -v k="$kind" '$1 == k && $3 == 1024 { print $5 }' "$tmp/out")
  expect_near "${v:-0}" 239.4 1e-4 "overlapped main stage of $kind at 1024"
done
expect_rc 0 sim --model deepseek-v4.1-flash --gpu H20 --tp 8 --chunk 1025 --prompt 1025 --split none
p=$(awk '$1 == "plain" && $3 == 1025 { print $5 }' "$tmp/out")
c=$(awk '$1 == "compressor/1024+indexer/32" && $3 == 1025 { print $5 }' "$tmp/out")
awk -v p="$p" -v c="$c" 'BEGIN { exit !(c > p + 50) }' && ok || fail "serial stage at 1025: compressor layer $c vs plain $p"
# --split none saves nothing; --split all saves more than the fused split alone
expect_rc 0 sim --model deepseek-v4.1-flash --gpu H20 --tp 8 --prompt 8192 --split none
expect_grep '^ +8192 +no +[0-9.]+ +[0-9.]+ +0\.0 +0\.000 +\[0\.000, 0\.000\]$' "$tmp/out"
expect_grep '^threshold: none \(nothing is split\)' "$tmp/out"
expect_rc 0 sim --model deepseek-v4.1-flash --gpu H20 --tp 8 --prompt 8192 --split all
v=$(awk '/^chunks/ { c = 1; next } c && $1 == 8192 { print $6; exit }' "$tmp/out")
awk -v v="$v" -v c="$chunk8k_ms" 'BEGIN { exit !(v > c + 1) }' && ok || fail "--split all saving $v vs $chunk8k_ms"
# the compressor on H20: no H20 dense-bf16 measurement in data/parts.tsv, so a measured
# sibling's (an SM90 GPU) moved to the H20
grep -q "^H20	gemm	dense-bf16" "$data/parts.tsv" && fail "data/parts.tsv has an H20 dense-bf16 row" || ok
expect_grep '^compressor +1024 dense-bf16 +fp32 +aux +yes +sibling\[[0-9]+\]' "$tmp/out"
expect_rc 0 sim --model deepseek-v4.1-flash --gpu H20 --tp 8 --prompt 8192 --split all --scaling model
expect_grep '^compressor +1024 dense-bf16 +fp32 +aux +yes +model' "$tmp/out"
# aux projections on H20 are predictions with an interval
expect_rc 0 sim --model deepseek-v4.1-flash --gpu H20 --tp 8
expect_grep '^fused_wqa_wkv +1792 marlin-w8a16 +bf16 +main +yes +measured' "$tmp/out"
expect_grep '^indexer +32 dense-bf16 +bf16 +aux +no +(sibling|transferred)\[[0-9]+\] .*\[' "$tmp/out"
# each source is named with its file and the GPU it was measured on (a sibling) or the GPUs
# the model was fitted on
expect_grep '^  \[[0-9]+\] GEMM dense-bf16 on H20, K 5120 N 32, aic harness: (sibling: data/.*H100-SXM|transferred: .* fitted on .*H100-SXM.* \(data/xgpu.fit\))' "$tmp/out"

# --- JSON keys and numbers
expect_rc 0 sim --model deepseek-v4.1-flash --gpu H20 --tp 8 --json --prompt 8192 --baseline-ttft-ms 1117.8
for k in layers chunks prompts tokens main_us split_us prompt_tokens saving_ms baseline_ttft_ms predicted_ttft_ms change_pct threshold_tokens; do
  expect_grep "\"$k\": " "$tmp/out"
done
expect_grep '"saving_us": 1447\.8' "$tmp/out"
expect_grep '"predicted_ttft_ms": 1059\.88' "$tmp/out"
expect_rc 0 sim --model deepseek-v4.1-flash --gpu H20 --tp 8 --json
expect_nogrep 'baseline_ttft_ms' "$tmp/out"

# --- a second model, by file path too
expect_rc 0 sim --model deepseek-v3 --gpu H200 --tp 8
expect_grep '^chunks \(all 61 layers\)' "$tmp/out"
expect_grep '^plain +61 +8192 ' "$tmp/out"
expect_rc 0 sim --model "$data/models/deepseek-v3.tsv" --gpu H20 --tp 4 --prompt 100

# --- a saved fit gives the same prediction as the fit made on the spot
expect_rc 0 "$TPSPLIT" fit "$data/h20_tp8_fused_wqa_wkv.tsv" -o "$tmp/h20.fit"
expect_rc 0 sim --model deepseek-v4.1-flash --gpu H200 --tp 8 --prompt 8192 --scaling model
a=$(awk '/^chunks/ { c = 1; next } c && $1 == 8192 { print $6; exit }' "$tmp/out")
expect_rc 0 sim --model deepseek-v4.1-flash --gpu H200 --tp 8 --prompt 8192 --fit "$tmp/h20.fit"
b=$(awk '/^chunks/ { c = 1; next } c && $1 == 8192 { print $6; exit }' "$tmp/out")
[ -n "$a" ] && [ "$a" = "$b" ] && ok || fail "saving with --fit '$b' vs on the spot '$a'"
expect_rc 2 sim --model deepseek-v4.1-flash --gpu H200 --tp 8 --fit "$data/gpus.tsv"
expect_grep "^tpsplit [a-z][a-z -]*: $data/gpus.tsv:[0-9]+: " "$tmp/err"

# --- usage and input errors: exit 2, one line naming the file and line
expect_rc 2 sim --gpu H20 --tp 8
expect_rc 2 sim --model deepseek-v4.1-flash --gpu H20 --tp 0
expect_rc 2 sim --model deepseek-v4.1-flash --gpu NoSuchGPU --tp 8
expect_grep "unknown GPU" "$tmp/err"
expect_rc 2 sim --model no-such-model --gpu H20 --tp 8
expect_grep "unknown model 'no-such-model'.*deepseek-v3, deepseek-v4.1-flash" "$tmp/err"
expect_rc 2 sim --model deepseek-v4.1-flash --gpu H20 --tp 8 --prompt 8192,32768 --baseline-ttft-ms 1117.8
expect_grep "1 baseline TTFTs for 2 prompts" "$tmp/err"
expect_rc 2 sim --model deepseek-v4.1-flash --gpu H20 --tp 8 --baseline-ttft-ms 1,2,nan
expect_rc 2 sim --model deepseek-v4.1-flash --gpu H20 --tp 8 --split wq_b
expect_grep "has no projection 'wq_b'" "$tmp/err"
expect_rc 2 sim --model deepseek-v4.1-flash --gpu H20 --tp 8 --prompt 0
expect_rc 2 sim --model deepseek-v4.1-flash --gpu H20 --tp 8 --scaling pessimistic

good() {
  printf '#@ hidden: 64\n#@ layers: 4\n#@ side_stream_max_tokens: 16\n'
  printf 'name\tout_features\tpath\tout_dtype\tlayers\tsplit\tstream\n'
}
bad() { # bad NAME LINE PATTERN: the file $tmp/NAME.tsv must be refused at LINE with PATTERN
  expect_rc 2 sim --model "$tmp/$1.tsv" --gpu H20 --tp 8
  expect_grep "^tpsplit [a-z][a-z -]*: $tmp/$1.tsv:$2: $3" "$tmp/err"
  n=$(wc -l < "$tmp/err"); [ "$n" -eq 1 ] && ok || fail "$1: $n lines on stderr"
}
{ good; printf 'p\t16\tmarlin-w8a16\tbf16\t0-3\tyes\tmain\n'; } > "$tmp/ok.tsv"
expect_rc 0 sim --model "$tmp/ok.tsv" --gpu H20 --tp 8 --prompt 100
{ good; printf 'p\t16\tno-path\tbf16\t0-3\tyes\tmain\n'; } > "$tmp/path.tsv"; bad path 5 "unknown kernel path 'no-path'"
{ good; printf 'p\t16\tdense-bf16\tbf16\t0-4\tyes\tmain\n'; } > "$tmp/range.tsv"; bad range 5 "layer 4 out of range"
{ good; printf 'p\t16\tdense-bf16\tbf16\t0,1,1\tyes\tmain\n'; } > "$tmp/dup.tsv"; bad dup 5 "layer 1 listed twice"
{ good; printf 'p\t16\tdense-bf16\tbf16\t3-1\tyes\tmain\n'; } > "$tmp/desc.tsv"; bad desc 5 "bad layer list"
{ good; printf 'p\t16\tdense-bf16\tbf16\t0-3\tmaybe\tmain\n'; } > "$tmp/yn.tsv"; bad yn 5 "split must be yes or no"
{ good; printf 'p\t16\tdense-bf16\tbf16\t0-3\tyes\tside\n'; } > "$tmp/strm.tsv"; bad strm 5 "stream must be main or aux"
{ good; printf 'p\t16\tdense-bf16\tint4\t0-3\tyes\tmain\n'; } > "$tmp/dt.tsv"; bad dt 5 "unknown out_dtype"
{ good; printf 'p\t-16\tdense-bf16\tbf16\t0-3\tyes\tmain\n'; } > "$tmp/neg.tsv"; bad neg 5 "out_features must be a positive integer"
{ good; printf 'p\tnan\tdense-bf16\tbf16\t0-3\tyes\tmain\n'; } > "$tmp/nan.tsv"; bad nan 5 "out_features must be a positive integer"
{ good; printf 'p\t16\tdense-bf16\tbf16\t0-3\tyes\n'; } > "$tmp/short.tsv"; bad short 5 "6 fields, want 7"
{ good; printf 'p\t16\tdense-bf16\tbf16\t0-1\tyes\tmain\np\t16\tdense-bf16\tbf16\t1-3\tyes\tmain\n'; } > "$tmp/twice.tsv"
bad twice 6 "projection 'p' appears twice in layer 1"
{ printf '#@ hidden: 64\n#@ layers: 4\nname\tout_features\tpath\tout_dtype\tlayers\tsplit\tstream\n'; } > "$tmp/meta.tsv"
bad meta 3 "missing metadata before the header: '#@ side_stream_max_tokens'"
{ printf '#@ hidden: -1\n'; } > "$tmp/hid.tsv"; bad hid 1 "hidden must be a positive integer"
{ printf '#@ hiden: 5\n'; } > "$tmp/key.tsv"; bad key 1 "unknown metadata key 'hiden'"
{ good | sed 's/out_features/width/'; } > "$tmp/hdr.tsv"; bad hdr 4 "header row must be"
good > "$tmp/empty_rows.tsv"; bad empty_rows 4 "no projection rows"
: > "$tmp/empty.tsv"
expect_rc 2 sim --model "$tmp/empty.tsv" --gpu H20 --tp 8
expect_grep "empty file" "$tmp/err"
expect_rc 2 sim --model "$tmp/missing.tsv" --gpu H20 --tp 8
expect_grep "^tpsplit [a-z][a-z -]*: $tmp/missing.tsv: " "$tmp/err"
finish
