#!/bin/sh
# tests/cli/thresholds.sh: the engine-facing thresholds file outside calibrate (src/io/thresholds.h):
#  1. decide --thresholds on the real H200 calibrate result (data/calibrate/): the device
#     keyed as engines key it, split exactly from split_from_tokens, the provenance named;
#     a missing device or entry: one line naming the file and the key, exit 2;
#  2. predict --thresholds-out F, then decide --thresholds F: the same threshold and the same
#     verdict as decide's own prediction, on every config and token count below (one of them
#     never splits: a null entry);
#  3. crossover --thresholds-out: one entry per cell of TP >= 2 that runs, each the threshold
#     crossover prints; TP 1 and unwritable files fail before anything is left behind;
#  4. win bands: the H100 5120x1792 w8a16 TP4 nccl entry predicted from a frozen H100 table of the
#     W8A16 kernels (tests/data/bands/h100_w8a16_5120x1792_sk2fit.tsv, the dispatch before the even
#     grids, whose answer has bands; the table is frozen, its prediction between the measured rows follows
#     the w8a16 model of data/xgpu.fit: the split wins from 2568, loses from 2661, wins from 2831, loses
#     from 2845, wins at 3072 and from 3125, three gaps within 2% of 1x, wins from 3330 on): its six bands
#     and the deepest gap's depth against predict's own table of every token
#     in it; decide prints them; a malformed win_bands_tokens or losing_gaps: one line naming the
#     JSON path, exit 2.
. "$top_srcdir/tests/cli/lib.sh"
cal="$top_srcdir/data/calibrate/thresholds_h200_5120x1792.json"
dec() { "$TPSPLIT" decide "$@"; }
# jnum KEY FILE: the first "KEY": value of an indented JSON file (null as null)
jnum() { awk -F': ' -v k="\"$1\"" '$1 ~ k"$" { v = $2; sub(/,$/, "", v); print v; exit }' "$2"; }

# --- 1. the calibrate result of the lent H200
expect_rc 0 dec --thresholds "$cal" --tp 8 --tokens 4096 --path w8a16 --json
thr=$(jnum threshold_tokens "$tmp/out")
[ "$thr" = 256 ] && ok || fail "w8a16 TP8: split_from_tokens 256 in $cal, decide says '$thr'"
expect_grep '"device": "NVIDIA_H200"' "$tmp/out"
expect_grep '"measured_on_device": true' "$tmp/out"
expect_grep '"points": 13' "$tmp/out"
# the boundary: T = split_from splits, one less does not
expect_rc 0 dec --thresholds "$cal" --tp 8 --tokens 256 --path w8a16
expect_grep "^  PASS  token_threshold +256 tokens >= threshold 256 \(.*thresholds_h200_5120x1792.json, NVIDIA_H200 calibrated 2026-12-04T21:35:26Z: 5120x1792 w8a16 TP8 auto: split from 256 tokens \(break-even 129, 90% 65..9473\); gemm measured \(13 points\), gather spec-only" "$tmp/out"
expect_grep '^verdict: split$' "$tmp/out"
expect_rc 1 dec --thresholds "$cal" --tp 8 --tokens 255 --path w8a16
expect_grep '^  FAIL  token_threshold +255 tokens < threshold 256' "$tmp/out"
# the other paths and TPs of the file: native-fp8 TP8 from 8192, dense-bf16 TP2 from 8192
expect_rc 1 dec --thresholds "$cal" --tp 8 --tokens 4096 --path native-fp8
expect_grep 'split from 8192 tokens \(break-even 5505' "$tmp/out"
expect_rc 0 dec --thresholds "$cal" --tp 2 --tokens 8192 --path dense-bf16 --gather nccl
expect_grep '5120x1792 dense-bf16 TP2 nccl: split from 8192 tokens .*gather transferred from A100-SXM-80GB,H100-SXM,B200' "$tmp/out"
# the device by the GPU table's name, by the engine's key, or the file's only one
expect_rc 0 dec --thresholds "$cal" --gpu H200 --tp 8 --tokens 4096 --path w8a16
expect_rc 0 dec --thresholds "$cal" --gpu NVIDIA_H200 --tp 8 --tokens 4096 --path w8a16
expect_grep '^tpsplit decide: H200-SXM, TP8' "$tmp/out"
# missing: one line naming the file and the key, exit 2
one_line() { [ "$(wc -l <"$tmp/err")" -eq 1 ] && ok || fail "not one stderr line: $(cat "$tmp/err")"; }
expect_rc 2 dec --thresholds "$cal" --gpu H100 --tp 8 --tokens 4096 --path w8a16
one_line
expect_grep 'thresholds_h200_5120x1792.json: no device NVIDIA_H100_80GB_HBM3 .*it has NVIDIA_H200' "$tmp/err"
expect_rc 2 dec --thresholds "$cal" --tp 8 --tokens 4096 --path marlin-w8a16 # without --path: every path of the file (tests/cli/traps.sh)
one_line
expect_grep 'thresholds_h200_5120x1792.json: no entry \$\.devices\.NVIDIA_H200\.thresholds\.5120x1792\.marlin-w8a16\.8\.auto .*paths dense-bf16, native-fp8, w8a16' "$tmp/err"
expect_rc 2 dec --thresholds "$cal" --tp 16 --tokens 4096 --path w8a16
expect_grep 'no entry \$\.devices\.NVIDIA_H200\.thresholds\.5120x1792\.w8a16\.16\.auto .*TPs 2, 4, 8' "$tmp/err"
expect_rc 2 dec --thresholds "$cal" --tp 8 --tokens 4096 --path w8a16 --k 7168 --n 2112
expect_grep 'no entry \$\.devices\.NVIDIA_H200\.thresholds\.7168x2112\.w8a16\.8\.auto .*shapes 5120x1792' "$tmp/err"
expect_rc 2 dec --thresholds "$cal" --tp 8 --tokens 4096 --path w8a16 --gather custom
expect_grep '\.w8a16\.8\.custom .*backends auto, nccl' "$tmp/err"
# a file that breaks the schema: the reader's one line (file and JSON path), exit 2
sed 's/"split_from_tokens": 256/"split_from_tokens": -3/' "$cal" >"$tmp/bad.json"
expect_rc 2 dec --thresholds "$tmp/bad.json" --tp 8 --tokens 4096 --path w8a16
one_line
bl=$(grep -n '"split_from_tokens": -3' "$tmp/bad.json" | cut -d: -f1)
expect_grep "bad.json:$bl: \\\$\\.devices\\.NVIDIA_H200\\.thresholds\\.5120x1792\\.w8a16\\.8\\.auto\\.split_from_tokens: an integer" "$tmp/err"
# calibration.gemm[i].configs (optional): one string per row
sed '0,/"lopo_max": {/s//"configs": ["x"], "lopo_max": {/' "$cal" >"$tmp/badc.json"
expect_rc 2 dec --thresholds "$tmp/badc.json" --tp 8 --tokens 4096 --path w8a16
one_line
expect_grep 'badc.json:[0-9]+: \$\.devices\.NVIDIA_H200\.calibration\.gemm\[0\]\.configs: an array of strings as long as rows \(14\)' "$tmp/err"
cfgs='"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m"'
sed "0,/\"lopo_max\": {/s//\"configs\": [$cfgs, 7], \"lopo_max\": {/" "$cal" >"$tmp/badc.json"
expect_rc 2 dec --thresholds "$tmp/badc.json" --tp 8 --tokens 4096 --path w8a16
expect_grep 'gemm\[0\]\.configs\[13\]: a string, not an integer' "$tmp/err"
sed "0,/\"lopo_max\": {/s//\"configs\": [$cfgs, \"n\"], \"lopo_max\": {/" "$cal" >"$tmp/okc.json"
expect_rc 0 dec --thresholds "$tmp/okc.json" --tp 8 --tokens 4096 --path w8a16
expect_rc 2 dec --thresholds "$tmp/missing.json" --tp 8 --tokens 4096
expect_grep 'missing.json' "$tmp/err"
# the file is the threshold: no other source with it
expect_rc 2 dec --thresholds "$cal" --tp 8 --tokens 4096 --path w8a16 --threshold 64
expect_grep 'has no use with it' "$tmp/err"
expect_rc 2 dec --thresholds "$cal" --tp 8 --tokens 4096 --path w8a16 --scaling spec
# --harness asked another harness's answer and got the file's silently
expect_rc 2 dec --thresholds "$cal" --tp 8 --tokens 4096 --path w8a16 --harness aic
expect_grep '^tpsplit decide: --thresholds takes the threshold from the file: --harness \(the file.s entry says its own\) has no use with it' "$tmp/err"
expect_rc 2 dec --tp 8 --tokens 4096
expect_grep 'decide: --gpu is required' "$tmp/err"

# --- 2. predict --thresholds-out, then decide --thresholds: decide's own answer
# (H800 dense-bf16 TP8: the split never wins up to 16384, a null entry)
for cfg in "H200 8 w8a16" "H200 8 marlin-w8a16" "H20 8 marlin-w8a16" "H100 4 dense-bf16" "H800 8 dense-bf16" \
           "B200 8 native-fp8" "H200 2 native-fp8" "H200 8 marlin-w8a16 --scaling spec" \
           "H200 4 native-fp8 --scaling model"; do
  set -- $cfg
  g=$1 t=$2 p=$3
  shift 3
  f="$tmp/pred_${g}_${t}_$p.json"
  expect_rc 0 "$TPSPLIT" predict --gpu "$g" --tp "$t" --path "$p" "$@" --thresholds-out "$f"
  pthr=$(awk '/^threshold: [0-9]/ { print $2 }' "$tmp/out")
  [ -s "$f" ] && ok || fail "$cfg: no file"
  if [ "$g $p" = "H800 dense-bf16" ]; then
    expect_grep '"split_from_tokens": null' "$f"
    [ -z "$pthr" ] && ok || fail "$cfg: predict printed threshold $pthr"
    expect_grep '^threshold: never split' "$tmp/out"
  fi
  expect_grep '"gpus_visible": 0' "$f"
  for tok in 32 256 1024 2048 4096 16384; do
    dec --gpu "$g" --tp "$t" --path "$p" --tokens "$tok" "$@" --json >"$tmp/a.json" 2>"$tmp/a.err"; ra=$?
    dec --thresholds "$f" --gpu "$g" --tp "$t" --path "$p" --tokens "$tok" --json >"$tmp/b.json" 2>"$tmp/b.err"; rb=$?
    ta=$(jnum threshold_tokens "$tmp/a.json") tb=$(jnum threshold_tokens "$tmp/b.json")
    [ "$ra" = "$rb" ] && [ "$ra" != 2 ] && [ "$ta" = "$tb" ] && ok ||
      fail "$cfg T=$tok: decide exit $ra threshold $ta, decide --thresholds exit $rb threshold $tb ($(head -c 300 "$tmp/b.err"))"
  done
  [ -n "$pthr" ] && { [ "$pthr" = "$tb" ] && ok || fail "$cfg: predict threshold $pthr, file $tb"; }
done
# the provenance as the prediction names it: H200 w8a16's GEMM from its sibling, the H100's table of
# the kernels' current dispatch (its lines), its custom gather transferred (from the H20), its NCCL gather measured (AIConfigurator's
# nccl-tests on 8 H200s, data/aic/nccl_h200_sxm.tsv.gz)
f="$tmp/pred_H200_8_w8a16.json"
expect_grep '"source": "sibling: data/h100_w8a16_grid_5120x1792_w8a16.tsv lines [0-9]+-[0-9]+ ' "$f"
expect_grep '"kind": "sibling"' "$f"
expect_grep '"kind": "transferred"' "$f"
expect_grep '"H20"' "$f"
expect_grep '"method": "custom one-shot while the per-rank part <= 2097152 bytes \(transferred\), NCCL above \(measured\)"' "$f"
expect_grep '"device_name": "NVIDIA H200"' "$f"
expect_grep '"command": "tpsplit predict --gpu H200 --tp 8 --path w8a16 --thresholds-out ' "$f"
expect_rc 0 dec --thresholds "$f" --tp 8 --tokens 4096 --path w8a16 --json
expect_grep '"measured_on_device": false' "$tmp/out"
expect_grep '"kind": "sibling"' "$tmp/out"
# the file's answer is predict's: break-even and interval
expect_rc 0 "$TPSPLIT" predict --gpu H200 --tp 8 --path w8a16 --json
pbe=$(jnum breakeven_tokens "$tmp/out") plo=$(jnum breakeven_lo "$tmp/out") phi=$(jnum breakeven_hi "$tmp/out")
[ "$(jnum breakeven_tokens "$f")" = "$pbe" ] && ok || fail "file break-even $(jnum breakeven_tokens "$f"), predict $pbe"
awk -v lo="$plo" -v hi="$phi" '/"interval_tokens"/ { getline a; getline b; gsub(/[ ,]/, "", a); gsub(/[ ,]/, "", b); exit !(a == lo && b == hi) }' "$f" \
  && ok || fail "interval not predict's [$plo, $phi]"
# an engine's file for another backend: --gather nccl
expect_rc 0 "$TPSPLIT" predict --gpu H200 --tp 8 --path w8a16 --gather nccl --thresholds-out "$tmp/nccl.json"
expect_grep '"nccl": \{' "$tmp/nccl.json"
expect_rc 2 dec --thresholds "$tmp/nccl.json" --tp 8 --tokens 4096 --path w8a16
expect_grep 'w8a16\.8\.auto .*backends nccl' "$tmp/err"
# outside the schema, or unwritable: nothing left behind
expect_rc 2 "$TPSPLIT" predict --gpu H200 --tp 1 --path w8a16 --thresholds-out "$tmp/tp1.json"
expect_grep 'TP 1 is outside the thresholds schema' "$tmp/err"
[ ! -e "$tmp/tp1.json" ] && ok || fail "TP1: a file was written"
# an output that cannot be created, or a file with nothing to hold: exit 2 (src/base/exit.h)
expect_rc 2 "$TPSPLIT" predict --gpu H200 --tp 8 --path w8a16 --thresholds-out "$tmp/no/such/dir/x.json"
[ -z "$(ls -A "$tmp" | grep '^no')" ] && ok || fail "unwritable: something left"

# --- 3. crossover --thresholds-out
expect_rc 0 "$TPSPLIT" crossover --gpus H200,H20,B200 --tp 1,2,8 --thresholds-out "$tmp/cx.json"
cp "$tmp/out" "$tmp/cx.txt"
for k in NVIDIA_H200 NVIDIA_H20 NVIDIA_B200; do expect_grep "\"$k\": \{" "$tmp/cx.json"; done
expect_grep 'TP1 .*not written \(the schema keys TP from 2' "$tmp/cx.json"
# one entry per cell of TP 2 and 8 that runs (n/a cells print n/a)
ncell=$(awk '$2 == 2 || $2 == 8' "$tmp/cx.txt" | grep -vc 'n/a')
nent=$(grep -c '"split_from_tokens"' "$tmp/cx.json")
[ "$ncell" -gt 0 ] && [ "$ncell" = "$nent" ] && ok || fail "crossover: $ncell cells at TP 2 and 8, $nent entries"
# each entry is the threshold crossover prints
awk '($2 == 2 || $2 == 8) && !/n\/a/ { print $1, $2, $3, $6 }' "$tmp/cx.txt" >"$tmp/cells"
while read -r g t p th; do
  dec --thresholds "$tmp/cx.json" --gpu "$g" --tp "$t" --path "$p" --tokens 16384 --json >"$tmp/c.json" 2>"$tmp/c.err"
  ft=$(jnum threshold_tokens "$tmp/c.json")
  [ "$th" = - ] && th=null
  [ "$ft" = "$th" ] && ok || fail "crossover $g TP$t $p: printed $th, file $ft ($(head -c 200 "$tmp/c.err"))"
done <"$tmp/cells"
expect_rc 2 "$TPSPLIT" crossover --gpus H200 --tp 1 --thresholds-out "$tmp/cx1.json"
expect_grep 'no cell of the grid fits the thresholds schema' "$tmp/err"
[ ! -e "$tmp/cx1.json" ] && ok || fail "crossover TP1: a file was written"
# every entry carries its bands, and they read back (decide exits 0 or 1, not 2)
[ "$(grep -c '"win_bands_tokens"' "$tmp/cx.json")" = "$nent" ] && ok || fail "crossover: not every entry has win_bands_tokens"

# --- 4. win bands
full="$top_srcdir/tests/data/bands/h100_w8a16_5120x1792_sk2fit.tsv"
wb="$tmp/bands.json"
pargs="--gpu H100 --tp 4 --path w8a16 --k 5120 --n 1792 --gemm $full --gather nccl"
expect_rc 0 "$TPSPLIT" predict $pargs --thresholds-out "$wb"
expect_grep '^sign changes: wins from 2568; loses from 2661; wins from 2831; loses from 2845; wins from 3072; loses from 3073; wins from 3125; loses from 3213; wins from 3215; loses from 3217; wins from 3330$' "$tmp/out"
expect_grep '^losing gaps between win bands \(replicated / split\): 2661\.\.2830 at worst 0\.957x, 2845\.\.3071 at worst 0\.941x, 3073\.\.3124 at worst 0\.983x, 3213\.\.3214 at worst 0\.999x, 3217\.\.3329 at worst 0\.994x$' "$tmp/out"
flat=$(tr -d ' \n' <"$wb")
bands='[[2568,2660],[2831,2844],[3072,3072],[3125,3212],[3215,3216],[3330,null]]'
case $flat in *"\"win_bands_tokens\":$bands"*) ok ;; *) fail "win_bands_tokens not $bands in $wb" ;; esac
case $flat in *'"losing_gaps":[{"from_tokens":2661,"min_speedup":0.9'*',"to_tokens":2830},{"from_tokens":2845,"min_speedup":0.9'*',"to_tokens":3071},{"from_tokens":3073,'*',"to_tokens":3329}]'*) ok ;; *) fail "losing_gaps not 2661..2830, 2845..3071, 3073..3124, .., 3217..3329 in $wb" ;; esac
# the deepest gap's depth: the smallest replicated / split of predict's own table of every token in it
expect_rc 0 "$TPSPLIT" predict $pargs --tokens 2845..3071:1 -o "$tmp/gap.tsv"
want=$(awk -F'\t' '!/^#/ && $1 ~ /^[0-9]+$/ { s = $3 / $4; if (m == "" || s < m) m = s } END { printf "%.9f", m }' "$tmp/gap.tsv")
got=$(echo "$flat" | sed -n 's/.*"from_tokens":2845,"min_speedup":\([0-9.]*\).*/\1/p')
expect_near "$got" "$want" 1e-9 "min_speedup (table: $want)"
# the band edges against the same table: the split loses on every token of the gap and wins at
# the token before it and the token after it
expect_rc 0 "$TPSPLIT" predict $pargs --tokens 2844,3072 -o "$tmp/edge.tsv"
awk -F'\t' '!/^#/ && $1 ~ /^[0-9]+$/ { n++; if (!($4 >= $3)) bad = bad " " $1 } END { exit !(n == 227 && bad == "") }' "$tmp/gap.tsv" &&
  ok || fail "the gap 2845..3071: not every token has split >= replicated in predict's table"
awk -F'\t' '!/^#/ && $1 ~ /^[0-9]+$/ { n++; if (!($4 < $3)) bad = bad " " $1 } END { exit !(n == 2 && bad == "") }' "$tmp/edge.tsv" &&
  ok || fail "2844 and 3072: the split does not win in predict's table"
# decide prints the bands under the threshold, and gives them in --json
expect_rc 1 dec --thresholds "$wb" --gpu H100 --tp 4 --gather nccl --path w8a16 --k 5120 --n 1792 --tokens 500
# (the threshold is a band's start, 3125, not the break-even 3330: the gaps after it are within
# 2% of 1x, while the deep ones before it, 0.957x and 0.941x at worst, cost more than the early
# bands win)
expect_grep '^  FAIL  token_threshold +500 tokens < threshold 3125' "$tmp/out"
expect_grep '^ +win bands 2568\.\.2660, 2831\.\.2844, 3072\.\.3072, 3125\.\.3212, 3215\.\.3216, 3330\.\.16384 \(max_tokens\); losing gaps 2661\.\.2830 at worst 0\.957x, 2845\.\.3071 at worst 0\.941x, 3073\.\.3124 at worst 0\.983x, 3213\.\.3214 at worst 0\.999x, 3217\.\.3329 at worst 0\.994x$' "$tmp/out"
[ "$(grep -c 'win bands' "$tmp/out")" = 1 ] && ok || fail "decide: the bands not on one line"
expect_rc 1 dec --thresholds "$wb" --gpu H100 --tp 4 --gather nccl --path w8a16 --k 5120 --n 1792 --tokens 500 --json
flat=$(tr -d ' \n' <"$tmp/out")
case $flat in *"\"win_bands_tokens\":$bands"*'"losing_gaps"'*|*'"losing_gaps"'*"\"win_bands_tokens\":$bands"*) ok ;;
  *) fail "decide --json: no bands" ;; esac
# one band from the break-even says nothing more: no line (H200 native-fp8 5120x1792 nccl)
expect_rc 0 "$TPSPLIT" predict --gpu H200 --tp 8 --path native-fp8 --gather nccl --thresholds-out "$tmp/one.json"
expect_grep '^sign changes: wins from [0-9]+$' "$tmp/out"
expect_rc 0 dec --thresholds "$tmp/one.json" --tp 8 --path native-fp8 --gather nccl --tokens 16384
expect_nogrep 'win bands' "$tmp/out"
# an older file without bands reads as before (section 1); a malformed one: one line, exit 2
badband() { # SED-EXPRESSION WANT: edit $wb, expect decide to refuse it with WANT
  sed "$1" "$wb" >"$tmp/bb.json"
  expect_rc 2 dec --thresholds "$tmp/bb.json" --gpu H100 --tp 4 --gather nccl --path w8a16 --k 5120 --n 1792 --tokens 500
  one_line
  expect_grep "bb.json:[0-9]+: \\\$\\.devices\\.NVIDIA_H100_80GB_HBM3\\.thresholds\\.5120x1792\\.w8a16\\.4\\.nccl\\.$2" "$tmp/err"
}
badband 's/"win_bands_tokens": \[/"win_bands_tokens": 7, "x": [/' 'win_bands_tokens: an array of at most 128 bands'
badband 's/^\( *\)2660,*$/\199/' 'win_bands_tokens\[0\]: to: an integer from 2568 to 16383, or null when the band reaches max_tokens, not 99'
badband 's/^\( *\)3330,$/\13331,/' 'win_bands_tokens\[5\]: the band reaching max_tokens starts at 3331, breakeven_tokens is 3330'
badband '/win_bands_tokens/,$ s/^\( *\)2568,$/\1"2568",/' 'win_bands_tokens\[0\]: from: an integer from 1 to max_tokens 16384, not a string'
badband 's/"split_from_tokens": [0-9]*/"split_from_tokens": 20000/' 'split_from_tokens: 20000 is past max_tokens 16384'
badband 's/"split_from_tokens": [0-9]*/"split_from_tokens": 1/' 'split_from_tokens: 1 is before the first win band \(2568\): the split loses there'
# a threshold where the split never wins (RTX PRO 6000 TP8 dense-bf16: win_bands_tokens [])
expect_rc 0 "$TPSPLIT" predict --gpu RTX-PRO-6000 --tp 8 --path dense-bf16 --thresholds-out "$tmp/nv.json"
expect_grep '"win_bands_tokens": \[\]' "$tmp/nv.json"
sed 's/"split_from_tokens": null/"split_from_tokens": 100/' "$tmp/nv.json" >"$tmp/nv2.json"
expect_rc 2 dec --thresholds "$tmp/nv2.json" --gpu RTX-PRO-6000 --tp 8 --path dense-bf16 --tokens 500
one_line
nl=$(grep -n '"split_from_tokens": 100' "$tmp/nv2.json" | cut -d: -f1)
expect_grep "nv2.json:$nl: .*\.dense-bf16\.8\.auto\.split_from_tokens: 100, but win_bands_tokens is empty: the split never wins\$" "$tmp/err"
badband 's/"losing_gaps": \[/"losing_gapz": [/' 'losing_gaps: missing \(win_bands_tokens and losing_gaps come together\)'
badband 's/"min_speedup": [0-9.]*/"min_speedup": 1.5/' 'losing_gaps\[0\]\.min_speedup: at most 1'
badband 's/"to_tokens": 2830/"to_tokens": 2829/' 'losing_gaps\[0\]: 2661\.\.2829 is not the gap 2661\.\.2830'
# l2_bytes in bytes as CUDA reports them, as calibrate writes them (cudaDeviceProp.l2CacheSize): gpus.tsv's l2_mb is
# MiB (it wrote l2_mb x 1e6: 50000000 for the H100, where CUDA says 52428800)
"$TPSPLIT" predict --gpu H100 --tp 8 --thresholds-out "$tmp/l2.json" >/dev/null 2>"$tmp/err" || fail "predict --thresholds-out: $(cat "$tmp/err")"
want=$(awk -F'\t' '$1 == "H100-SXM" { printf "%.0f", $8 * 1048576 }' "$top_srcdir/data/gpus.tsv")
got=$(sed -n 's/.*"l2_bytes": \([0-9]*\).*/\1/p' "$tmp/l2.json" | head -n 1)
[ -n "$want" ] && [ "$got" = "$want" ] && ok || fail "H100 l2_bytes '$got', want '$want' (gpus.tsv l2_mb x 2^20)"
# decide --gpu finds a device by its engine key alone, as an engine does: the H200's entry moved under another key
# (NVIDIA_H200_NVL, gpu_spec still H200-SXM) is not the H200's (it was taken by its gpu_spec: "verdict: split")
"$TPSPLIT" predict --gpu H200 --tp 8 --path w8a16 --thresholds-out "$tmp/h200.json" >/dev/null 2>&1 || fail "predict H200 --thresholds-out"
sed -e 's/"NVIDIA_H200": {/"NVIDIA_H200_NVL": {/' -e 's/"device_name": "NVIDIA H200"/"device_name": "NVIDIA H200 NVL"/' "$tmp/h200.json" >"$tmp/nvl.json"
grep -q '"NVIDIA_H200_NVL": {' "$tmp/nvl.json" && ok || fail "the key was not moved"
expect_rc 2 dec --gpu H200 --thresholds "$tmp/nvl.json" --tp 8 --path w8a16 --tokens 3000
expect_grep "nvl.json: no device NVIDIA_H200 \(H200-SXM as engines key it\) in the file; it has NVIDIA_H200_NVL$" "$tmp/err"
# an entry without an interval ([null, null]: the pessimistic rule) reads back as such, not as "90% 0..beyond 16384"
"$TPSPLIT" predict --gpu H200 --tp 8 --path marlin-w8a16 --scaling pessimistic --thresholds-out "$tmp/p6.json" >/dev/null 2>&1 ||
  fail "predict --scaling pessimistic --thresholds-out"
dec --thresholds "$tmp/p6.json" --tp 8 --tokens 2000 --path marlin-w8a16 >"$tmp/out" 2>&1
expect_grep "\(break-even 1106, no interval: a rule\)" "$tmp/out"
expect_nogrep "0\.\.beyond" "$tmp/out"
# --thresholds-out - (stdout, which holds the command's own output: two documents in one stream, with --json two
# JSON texts no parser reads) is refused, nothing printed
for c in "crossover --gpus B200 --tp 8 --paths dense-bf16" "predict --gpu H200 --tp 8 --path dense-bf16"; do
  for j in --json ""; do
    expect_rc 2 "$TPSPLIT" $c --thresholds-out - $j
    expect_grep "^tpsplit [a-z]+: --thresholds-out -: stdout holds this command's output; give a file" "$tmp/err"
    [ -s "$tmp/out" ] && fail "$c --thresholds-out - $j printed" || ok
  done
done
finish
