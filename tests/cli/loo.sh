#!/bin/sh
# tests/cli/loo.sh: AIConfigurator tables (tpsplit inspect) and the leave-one-GPU-out command:
# --hold-out folds, and the whole table (one run, which is also the golden case fit_loo_gpu) with
# its transfer accuracy section.  The parts asked for alone (--only breakeven, gather, transfer
# with --json): tests/cli/loo_only.sh, so that `make -j2 check` runs the two halves at once.
. "$top_srcdir/tests/cli/lib.sh"
aic="$top_srcdir/data/aic"

# --- inspect reads the gzipped tables with their provenance; a selection filters rows
expect_rc 0 "$TPSPLIT" inspect "$aic/gemm_h100_sxm_k5120.tsv.gz:dtype=fp8,n=2048,m=1-4"
expect_grep '^# source: ai-dynamo/aiconfigurator .*h100_sxm/gemm/trtllm' "$tmp/out"
expect_grep '^# copy: 2026-12-04 from shared/data/aic/gemm_h100_sxm.tsv.gz' "$tmp/out"
n=$(grep -c '^trtllm' "$tmp/out")
[ "$n" -eq 4 ] && ok || fail "fp8 n=2048 m=1-4: $n rows, want 4"
# the m=1 row, as zcat reads it: 16.928 us, 2*1*2048*5120/16.928/1e6 = 1.24 TFLOPS
want=$(gzip -dc "$aic/gemm_h100_sxm_k5120.tsv.gz" | awk -F'\t' '$4=="fp8" && $5==1 && $6==2048 {print $8}')
got=$(awk '$1=="trtllm" && $4==1 {print $7}' "$tmp/out")
[ -n "$want" ] && [ "$got" = "$want" ] && ok || fail "m=1 time '$got', zcat says '$want'"
expect_rc 0 "$TPSPLIT" inspect --json "$aic/nccl_b200_sxm.tsv.gz:op=all_gather,num_gpus=8,dtype=half"
expect_grep '"nrows": 21' "$tmp/out"
expect_grep '"busbw_gbps"' "$tmp/out"

# --- bad input: one line naming the file (and line, or the missing shape), exit 2
expect_rc 2 "$TPSPLIT" inspect "$aic/gemm_h100_sxm_k5120.tsv.gz:dtype=fp8,n=1792"
expect_grep "^tpsplit [a-z][a-z -]*: $aic/gemm_h100_sxm_k5120.tsv.gz: no rows with dtype fp8, n 1792; n in the file: .*1536, 2048" "$tmp/err"
[ "$(wc -l < "$tmp/err")" -eq 1 ] && ok || fail "missing shape: not one line"
[ ! -s "$tmp/out" ] && ok || fail "missing shape: output written"
expect_rc 2 "$TPSPLIT" inspect "$aic/gemm_h100_sxm_k5120.tsv.gz:dtype=fp4"
expect_grep "unknown dtype 'fp4'" "$tmp/err"
gzip -dc "$aic/gemm_l40s_k5120.tsv.gz" | awk -F'\t' 'NR==12{$4="bf16x"}1' OFS='\t' > "$tmp/bad.tsv"
expect_rc 2 "$TPSPLIT" inspect "$tmp/bad.tsv"
expect_grep "^tpsplit [a-z][a-z -]*: $tmp/bad.tsv:12: unknown dtype 'bf16x'" "$tmp/err"
gzip -dc "$aic/nccl_h100_sxm.tsv.gz" | awk -F'\t' 'NR==20{$3="broadcast"}1' OFS='\t' | gzip > "$tmp/bad.tsv.gz"
expect_rc 2 "$TPSPLIT" inspect "$tmp/bad.tsv.gz"
expect_grep "^tpsplit [a-z][a-z -]*: $tmp/bad.tsv.gz:20: unknown op 'broadcast'" "$tmp/err"
head -c 3000 "$aic/gemm_b200_sxm_k5120.tsv.gz" > "$tmp/trunc.tsv.gz"
expect_rc 2 "$TPSPLIT" inspect "$tmp/trunc.tsv.gz"
expect_grep "^tpsplit [a-z][a-z -]*: $tmp/trunc.tsv.gz:[0-9]+: the gzip data end here, cut short" "$tmp/err"
# two gzip members (`cat a.gz b.gz`): the rows of both (the second member's of another NCCL version:
# the same rows twice are one measurement with two times, refused)
gzip -dc "$aic/nccl_h100_sxm.tsv.gz" | grep -v -e '^#' -e '^gpu' | gzip > "$tmp/rows.gz"
cat "$aic/nccl_h100_sxm.tsv.gz" "$tmp/rows.gz" > "$tmp/twice.tsv.gz"
expect_rc 2 "$TPSPLIT" inspect "$tmp/twice.tsv.gz"
expect_grep "twice.tsv.gz:[0-9]+: the same op, dtype, NCCL version, num_gpus and message size as line [0-9]+" "$tmp/err"
gzip -dc "$aic/nccl_h100_sxm.tsv.gz" | grep -v -e '^#' -e '^gpu' | awk -F'\t' -v OFS='\t' '{ $2 = "9.9-" $2; print }' | gzip > "$tmp/rows.gz"
cat "$aic/nccl_h100_sxm.tsv.gz" "$tmp/rows.gz" > "$tmp/two.tsv.gz"
expect_rc 0 "$TPSPLIT" inspect --json "$tmp/two.tsv.gz"
nrows=$(gzip -dc "$aic/nccl_h100_sxm.tsv.gz" | grep -c -v -e '^#' -e '^gpu')
expect_grep "\"nrows\": $((2 * nrows))," "$tmp/out"
printf '# source: ai-dynamo/aiconfigurator x\n' | gzip > "$tmp/hdr.gz"
expect_rc 2 "$TPSPLIT" inspect "$tmp/hdr.gz"
expect_grep "no header line" "$tmp/err"

# --- --hold-out that would check nothing is refused (exit 2, nothing on stdout): a GPU with no GEMM table in the
# leave-one-GPU-out data, or --only naming no GEMM table
for a in "--hold-out H20" "--hold-out H20 --json" "--hold-out H100 --only gather" "--hold-out H100 --only breakeven"; do
  expect_rc 2 "$TPSPLIT" fit --loo-gpu $a
  [ -s "$tmp/out" ] && fail "fit --loo-gpu $a printed a result" || ok
  case "$a" in *H20*) expect_grep "^tpsplit fit --loo-gpu: --hold-out H20: no GEMM table of it" "$tmp/err" ;;
    *) expect_grep "^tpsplit fit --loo-gpu: --hold-out folds the GEMM tables only" "$tmp/err" ;; esac
done

# --- fit --loo-gpu --hold-out: one GEMM fold, its per-point predictions in JSON
expect_rc 0 "$TPSPLIT" fit --loo-gpu --hold-out H100 --json
cp "$tmp/out" "$tmp/h100.json"
# the points of the H100 bf16 entry: line, m, n, measured, predicted (jansson: sorted keys,
# one per line, so a point ends with predicted_us)
awk '/"data":/{data=$2} /"gpu":/{gpu=$2} /"path":/{path=$2} /"line":/{l=$2} /"m":/{m=$2} /"measured_us":/{t=$2}
     /"n":/{n=$2} /"predicted_us":/{ if (data ~ /AIC/ && gpu ~ /H100-SXM/ && path ~ /dense-bf16/) { gsub(/,/,"",l); gsub(/,/,"",m);
       gsub(/,/,"",n); gsub(/,/,"",t); print l, m, n, t, $2 } }' "$tmp/h100.json" > "$tmp/pts"
[ "$(wc -l < "$tmp/pts")" -eq 146 ] && ok || fail "H100 bf16 held-out points: $(wc -l < "$tmp/pts"), want 146"
# by hand from the raw file: each point's line holds its m, n and latency; the median of
# |predicted / measured - 1| over them is the table's median error
gzip -dc "$aic/gemm_h100_sxm_k5120.tsv.gz" | awk -F'\t' '{print NR, $4, $5, $6, $7, $8}' > "$tmp/raw"
awk 'NR==FNR{d[$1]=$2" "$3" "$4" "$5" "$6; next}
     { split(d[$1], r, " "); if (r[1] != "bfloat16" || r[2] != $2 || r[3] != $3 || r[4] != 5120 || r[5] + 0 != $4 + 0) bad++;
       e = $5 / r[5] - 1; if (e < 0) e = -e; printf "%.17g\n", e }
     END { if (bad) print "mismatch " bad > "/dev/stderr" }' "$tmp/raw" "$tmp/pts" 2> "$tmp/mis" | sort -g > "$tmp/errs"
[ ! -s "$tmp/mis" ] && ok || fail "held-out points do not match the raw file: $(cat "$tmp/mis")"
med=$(awk '{v[NR]=$1} END{ if (NR % 2) printf "%.17g\n", v[(NR+1)/2]; else printf "%.17g\n", (v[NR/2]+v[NR/2+1])/2 }' "$tmp/errs")
max=$(tail -1 "$tmp/errs")
rep=$(awk '/"data":/{d=$2} /"gpu": "H100-SXM"/{g=1} /"path":/{p=$2} /"median_abs_rel":/{m=$2} /"max_abs_rel":/{x=$2}
           /"points":/{ if (g && d ~ /AIC/ && p ~ /dense-bf16/) { gsub(/,/,"",m); gsub(/,/,"",x); print m, x } g=0 }' "$tmp/h100.json")
set -- $rep
expect_near "$med" "$1" 1e-9 "H100 bf16 median error by hand"
expect_near "$max" "$2" 1e-9 "H100 bf16 max error by hand"
# no leakage: the held-out GPU's own measurements do not move its prediction
cp -r "$top_srcdir/data" "$tmp/d2"
chmod -R u+w "$tmp/d2"
gzip -dc "$aic/gemm_h100_sxm_k5120.tsv.gz" | awk -F'\t' -v OFS='\t' '!/^#/ && $8 ~ /^[0-9.]+$/ {$8 = $8 * 1.7} 1' |
  gzip > "$tmp/d2/aic/gemm_h100_sxm_k5120.tsv.gz"
TPSPLIT_DATADIR="$tmp/d2" "$TPSPLIT" fit --loo-gpu --hold-out H100 --json > "$tmp/h100b.json" 2> "$tmp/err"
grep '"predicted_us"' "$tmp/h100.json" > "$tmp/p1"
grep '"predicted_us"' "$tmp/h100b.json" > "$tmp/p2"
cmp -s "$tmp/p1" "$tmp/p2" && ok || fail "H100's held-out predictions changed with H100's own data"
cmp -s "$tmp/h100.json" "$tmp/h100b.json" && fail "H100 x1.7 changed nothing at all" || ok
# one GPU, one fold: the H100's bench tables (our harness) leave the fit with its AIC table
# (its AIC and bench predictions unchanged when its bench times are x1.7) ...
for p in dense-bf16 native-fp8; do
  awk -F'\t' -v OFS='\t' '!/^#/ && $1 ~ /^[0-9]+$/ {$2 *= 1.7; $3 *= 1.7; $4 *= 1.7} 1' \
    "$top_srcdir/data/h100_gemm_$p.tsv" > "$tmp/d2/h100_gemm_$p.tsv"
done
TPSPLIT_DATADIR="$tmp/d2" "$TPSPLIT" fit --loo-gpu --hold-out H100 --json > "$tmp/h100d.json" 2> "$tmp/err"
[ "$(grep -c '"data": "tpsplit bench' "$tmp/h100d.json")" -eq 2 ] && ok || fail "H100 bench entries (2 paths)"
grep '"predicted_us"' "$tmp/h100d.json" > "$tmp/p4"
cmp -s "$tmp/p2" "$tmp/p4" && ok || fail "H100's held-out predictions changed with H100's bench tables"
cmp -s "$tmp/h100b.json" "$tmp/h100d.json" && fail "H100 bench x1.7 changed nothing at all" || ok
# ... and when the H200 is held out, its bench floor is fitted from the H100's bench tables
# (not spec-only): they move the H200's prediction
expect_rc 0 "$TPSPLIT" fit --loo-gpu --hold-out H200 --json
grep '"predicted_us"' "$tmp/out" > "$tmp/p5"
TPSPLIT_DATADIR="$tmp/d2" "$TPSPLIT" fit --loo-gpu --hold-out H200 --json > "$tmp/h200d.json" 2> "$tmp/err"
grep '"predicted_us"' "$tmp/h200d.json" > "$tmp/p6"
cmp -s "$tmp/p5" "$tmp/p6" && fail "H100 bench x1.7 did not move the H200 prediction" || ok
# the copies are the dense tables' rows at the H200 table's M, every '#' line unchanged
for p in dense-bf16 native-fp8; do
  src="$top_srcdir/data/calibrate/2026-12-05-h100/dense_5120x1792_$p.tsv" dst="$top_srcdir/data/h100_gemm_$p.tsv"
  grep '^#' "$dst" | grep -v '^# copy: ' > "$tmp/c1"; grep '^#' "$src" > "$tmp/c2"
  cmp -s "$tmp/c1" "$tmp/c2" && ok || fail "h100_gemm_$p.tsv: '#' lines differ from $src"
  grep -v '^#' "$top_srcdir/data/h200_gemm_$p.tsv" | awk 'NR > 1 {print $1}' | sort -n | uniq > "$tmp/m200"
  grep -v '^#' "$dst" | awk 'NR > 1 {print $1}' > "$tmp/m100"
  cmp -s "$tmp/m200" "$tmp/m100" && [ "$(wc -l < "$tmp/m100")" -eq 23 ] && ok || fail "h100_gemm_$p.tsv: M are not the H200 table's 23"
  awk 'NR == FNR { if (!/^#/) r[$1] = $0; next } !/^#/ && $0 != r[$1] { bad++ } END { exit bad > 0 }' \
    "$src" "$dst" && ok || fail "h100_gemm_$p.tsv: a row differs from $src"
done
# ... while another GPU's data do move it
gzip -dc "$aic/gemm_b200_sxm_k5120.tsv.gz" | awk -F'\t' -v OFS='\t' '!/^#/ && $8 ~ /^[0-9.]+$/ {$8 = $8 * 1.7} 1' |
  gzip > "$tmp/d2/aic/gemm_b200_sxm_k5120.tsv.gz"
TPSPLIT_DATADIR="$tmp/d2" "$TPSPLIT" fit --loo-gpu --hold-out H100 --json > "$tmp/h100c.json" 2> "$tmp/err"
grep '"predicted_us"' "$tmp/h100c.json" > "$tmp/p3"
cmp -s "$tmp/p1" "$tmp/p3" && fail "B200 x1.7 did not move the H100 prediction" || ok

# --- the whole table: every GPU and path, gathers, w8a16, break-even; deterministic
# one run: the golden case fit_loo_gpu (tests/data/golden/SLOW: `tpsplit fit --loo-gpu`, its exit
# status, stdout and stderr as committed), whose output the checks below read as well
mkdir "$tmp/golden"
GOLDEN_KEEP="$tmp/golden" sh "$top_srcdir/tests/data/golden/run.sh" "$top_srcdir/tests/data/golden/SLOW" fit_loo_gpu \
  > "$tmp/golden.log" 2>&1 && ok || fail "golden case fit_loo_gpu: $(head -c 2000 "$tmp/golden.log")"
rc=$(cat "$tmp/golden/fit_loo_gpu.rc" 2> /dev/null)
[ "$rc" = 0 ] && ok || fail "'$TPSPLIT fit --loo-gpu' exited $rc, want 0; stderr: $(head -c 400 "$tmp/golden/fit_loo_gpu.stderr" 2> /dev/null)"
cp "$tmp/golden/fit_loo_gpu.stdout" "$tmp/full"
# rows per GPU: GEMM (A100: two bf16 tables, no fp8; H100: AIC and bench tables, both paths;
# H200: AIC and bench tables, both paths, as the H100) + all-gather + break-even (paths x TP 2, 4, 8)
# + its decision quality, by the models and by the evidence hierarchy (paths x TP 2, 4, 8, twice);
# fp8-block (H100, H200, B200, L40S, RTX PRO 6000) and nvfp4 (B200, RTX PRO 6000): 10 rows each
# (one GEMM row, 3 break-even, 3 excess, 3 hierarchy)
# + the transfer accuracy: the GPU's GEMM rows (its tables x paths, fp8-block and nvfp4 included) and gather rows (2, 4, 8 GPUs)
for gw in A100-SXM-80GB:17 H100-SXM:41 B200:48 L40S:37 RTX-PRO-6000-Server:48 H200-SXM:41; do
  g=${gw%:*} want=${gw#*:}
  n=$(grep -c "^$g " "$tmp/full")
  [ "$n" -eq "$want" ] && ok || fail "$g: $n rows, want $want"
done
expect_grep '^# GEMM 90% interval coverage, all GPUs, dense-bf16 and native-fp8: [0-9.]+% of 1740 points' "$tmp/full"   # 1448 + the H200 AIC table's 146 per path
# fp8-block: 5 GPUs x 146 points; nvfp4 (two GPUs: no nested fit, no interval) adds none
expect_grep '^# GEMM 90% interval coverage, all GPUs, fp8-block and nvfp4: [0-9.]+% of 730 points' "$tmp/full"
expect_grep '^# GEMM held-out error, all GPUs, fp8-block and nvfp4 pooled: median [0-9.]+%' "$tmp/full"
awk '/^# GEMM nvfp4/{g=1; next} /^$/{g=0} g && !/^gpu/ { n++; if ($(NF-1) != "-" || $NF != "-") bad++ }
     END { exit !(n == 2 && !bad) }' "$tmp/full" && ok || fail "nvfp4 GEMM rows: two GPUs, no interval"
expect_grep '^# in sample: median \|err\| [0-4]\.[0-9]%' "$tmp/full"
expect_grep "^# dense-bf16, native-fp8: break-even within 15%: [0-9]+ of [0-9]+ \\([0-9]+ more where neither side splits: 'both'\\); decisions agree: [0-9]+ of 495" "$tmp/full"   # + H200 x 2 paths x 3 TP, 15 T each
# fp8-block and nvfp4: 7 GPU x path x 3 TP = 21 rows, 15 T each
expect_grep "^# fp8-block, nvfp4: break-even within 15%: [0-9]+ of [0-9]+ \\([0-9]+ more where neither side splits: 'both'\\); decisions agree: [0-9]+ of 315" "$tmp/full"
# the summary counts the rows above it: 'both' rows (no break-even on either side) out of the 15% count
awk '/^gpu +path +tp +measured +predicted +rel_err/ { t = 1; next }
     t && /^# dense-bf16, native-fp8: break-even within 15%/ { print w, n, nb; exit }
     t && ($2 == "dense-bf16" || $2 == "native-fp8") { if ($6 == "both") nb++; else { n++; r = $6; sub(/%/, "", r); r += 0; if (r < 0) r = -r; if (r <= 15) w++ } }' "$tmp/full" >"$tmp/wn"
read -r w n nb <"$tmp/wn"
expect_grep "^# dense-bf16, native-fp8: break-even within 15%: ${w:-x} of ${n:-x} \\(${nb:-x} more where neither side splits" "$tmp/full"
[ "${nb:-0}" -ge 1 ] && [ $((${n:-0} + ${nb:-0})) -eq 33 ] && ok || fail "break-even rows: ${n:-?} + ${nb:-?} 'both', want 33 in all"
# every error is a percentage; every GEMM row has its coverage
awk '/^# GEMM dense|^# GEMM native/{g=1; next} /^$/{g=0} g && !/^gpu/ {
       if ($(NF-3) !~ /%$/ || $(NF-1) !~ /%$/) bad++ } END{exit bad > 0}' "$tmp/full" && ok || fail "GEMM rows malformed"
# decision quality (model/predict/excess.h; its values are checked by hand in
# tests/unit/model/test_excess): 33 rows (11 GPU x path, 3 TP); 0 <= mean <= worst; at_T a point of the grid
# round(2^(i/8)) (computed here) or '-' when the worst is 0; a threshold of 'none' on a GPU whose
# measured break-even is 'none' costs nothing only where the split never wins: the PCIe GPUs at
# TP 4 and 8; the verdict is the target (mean <= 1%, worst <= 10%) and the count line adds them up
awk '/^# decision quality: what/{d=1; next} d && /^# dense-bf16, native-fp8: excess target met \(/{print; d=0}
     d && !/^#/ && !/^gpu/ && ($2 == "dense-bf16" || $2 == "native-fp8")' "$tmp/full" > "$tmp/ex"
[ "$(grep -c . "$tmp/ex")" -eq 34 ] && ok || fail "decision quality: $(grep -c . "$tmp/ex") lines, want 33 rows and the count"
awk 'BEGIN { for (i = 0; i <= 112; i++) g[sprintf("%d", int(2 ^ (i / 8) + 0.5))] = 1 }
     /^#/ { next }
     { m = $5; w = $6; gsub(/%/, "", m); gsub(/%/, "", w); v = (w + 0 <= 10 && m + 0 <= 1) ? "met" : "missed"
       if (m < 0 || w + 0 < m + 0 || (w + 0 > 0 ? !($7 in g) : $7 != "-") || $NF != v) { print "bad row: " $0; bad++ }
       n[$NF]++ }
     END { exit bad > 0 }' "$tmp/ex" && ok || fail "decision quality rows malformed"
met=$(grep -c ' met$' "$tmp/ex")
expect_grep "^# dense-bf16, native-fp8: excess target met \(mean <= 1%, worst <= 10%\): $met of 33 with the break-even" "$tmp/ex"
# the written threshold's verdicts (its mean and worst: columns 9 and 10) add up to the count line's second number
wm=$(awk '!/^#/ { m = $9; w = $10; gsub(/%/, "", m); gsub(/%/, "", w); if (m != "-" && m + 0 <= 1 && w + 0 <= 10) n++ } END { print n + 0 }' "$tmp/ex")
expect_grep "^# dense-bf16, native-fp8: excess target met .*: $met of 33 with the break-even as the threshold, $wm of 33 with the written threshold\$" "$tmp/ex"
# fp8-block and nvfp4: 21 rows, their count line adds them up
awk '/^# decision quality: what/{d=1; next} /^# decision quality of the evidence/{d=0}
     d && /^# fp8-block, nvfp4: excess target met \(/{print} d && !/^#/ && !/^gpu/ && ($2 == "fp8-block" || $2 == "nvfp4")' \
  "$tmp/full" > "$tmp/exb"
[ "$(grep -c . "$tmp/exb")" -eq 22 ] && ok || fail "decision quality fp8-block/nvfp4: $(grep -c . "$tmp/exb") lines, want 21 rows and the count"
metb=$(grep -c ' met$' "$tmp/exb")
expect_grep "^# fp8-block, nvfp4: excess target met \(mean <= 1%, worst <= 10%\): $metb of 21 with the break-even" "$tmp/exb"
# the evidence hierarchy's table (model/predict/resolve.h): 33 rows; a sibling answers exactly
# where the training GPUs hold one: the H100 and H200 answer for each other (SM90, NVLink4
# 18 links), no GPU answers for the A100, B200, L40S or RTX PRO 6000; its count line adds up
# hier_check LABEL PATH1 PATH2 ROWS SIBROWS OUT: the hierarchy table's rows of the two paths and
# its count line (label "PATH1, PATH2"): ROWS rows, a sibling exactly on H100 <-> H200 (GEMM and
# gather), and the count line's numbers recounted from the rows
hier_check() {
  awk -v lab="^# $1: excess target met by the hierarchy" -v p1="$2" -v p2="$3" '
       /^# decision quality of the evidence hierarchy/{d=1; next} d && $0 ~ lab {print}
       d && !/^#/ && !/^gpu/ && ($2 == p1 || $2 == p2)' "$tmp/full" > "$6"
  [ "$(grep -c . "$6")" -eq $(($4 + 1)) ] && ok || fail "hierarchy $2/$3: $(grep -c . "$6") lines, want $4 rows and the count"
  awk '!/^#/ { want = $1 == "H100-SXM" ? "H200-SXM" : $1 == "H200-SXM" ? "H100-SXM" : "-"
               if ($4 != want || $5 != want) { print "bad row: " $0; bad++ } }
       END { exit bad > 0 }' "$6" && ok || fail "hierarchy $2/$3: siblings where they should not be"
  hm=$(awk '!/^#/ && $10 == "met"' "$6" | grep -c .); hs=$(awk '!/^#/ && $4 != "-" && $10 == "met"' "$6" | grep -c .)
  expect_grep "^# $1: excess target met by the hierarchy: $hm of $4 \\($hs of the $5 rows a sibling answers\\)" "$6"
  # the threshold written from the answer (least excess on its predicted costs: a token count
  # or never; never above the first point of the excess grid round(2^(i/8)) at or after the
  # answer's break-even: the break-even's 64-per-octave scan holds every point of that grid, and
  # from it on the answer's own split wins there, so a later threshold only adds excess),
  # its verdict the target on its w_mean and w_worst, and its count line recounted from the rows
  awk 'function gup(b,   i, t) { for (i = 0; i <= 120; i++) { t = int(2 ^ (i / 8) + 0.5); if (t >= b) return t } return 1e9 }
       !/^#/ { m = $12; w = $13; gsub(/%/, "", m); gsub(/%/, "", w); v = (w + 0 <= 10 && m + 0 <= 1) ? "met" : "missed"
               above = $11 ~ /^[0-9]+$/ && $6 ~ /^[0-9]+$/ && $11 + 0 > gup($6 + 0)
               if (NF != 14 || !($11 ~ /^[0-9]+$/ || $11 == "never") || above || w + 0 < m + 0 || $14 != v) { print "bad row: " $0; bad++ } }
       END { exit bad > 0 }' "$6" && ok || fail "hierarchy $2/$3: the written-threshold columns"
  bm=$(awk '!/^#/ && $14 == "met"' "$6" | grep -c .); bs=$(awk '!/^#/ && $4 != "-" && $14 == "met"' "$6" | grep -c .)
  expect_grep "^# $1: with the written threshold \\(least predicted excess, a thresholds file.s split_from_tokens\\) instead of the break-even: $bm of $4 \\($bs of the $5 rows a sibling answers\\)" "$tmp/full"
}
hier_check "fp8-block, nvfp4" fp8-block nvfp4 21 6 "$tmp/ehb"
hier_check "dense-bf16, native-fp8" dense-bf16 native-fp8 33 12 "$tmp/eh"
for g in L40S RTX-PRO-6000-Server; do
  for tp in 4 8; do
    awk -v g=$g -v tp=$tp '$1 == g && $3 == tp { if ($4 != "none" || $5 != "0.00%" || $6 != "0.0%") bad++; n++ }
                           END { exit !(n == 2 && !bad) }' "$tmp/ex" && ok || fail "$g TP$tp: 'none' costs nothing"
  done
done

# --- transfer accuracy (issue 27 item 6; doc/transfer.md, README.md): the answers of the evidence
# hierarchy re-measured here from the tables themselves, not from the tool's arithmetic.  Gather:
# the H100 answered by the H200's nccl-tests all_gather as measured (both dtypes' mean in log per
# size), and the reverse, at 2, 4, 8 GPUs, 64 KiB..64 MiB, both dtypes scored: the median |error|
# within 0.11 point of the printed one.
# the transfer section of the whole table (what `--only transfer` prints: tests/cli/loo_only.sh
# runs that with --json): from its heading to the w8a16 section
awk '/^# transfer accuracy/ { p = 1 } /^# our w8a16 kernels/ { p = 0 } p' "$tmp/full" > "$tmp/xfer"
grep -q '^# transfer accuracy' "$tmp/xfer" && [ "$(wc -l < "$tmp/xfer")" -gt 20 ] && ok || fail "no transfer section in the whole table"
nc() { gzip -dc "$aic/nccl_$1.tsv.gz" | awk -F'\t' '!/^#/ && $3 == "all_gather" {print $4, $5, $6}'; }
for pair in h100_sxm:h200_sxm:H100-SXM h200_sxm:h100_sxm:H200-SXM; do
  tg=${pair%%:*} rest=${pair#*:} sb=${rest%%:*} g=${rest#*:}
  nc "$sb" > "$tmp/sib"; nc "$tg" > "$tmp/tgt"
  for n in 2 4 8; do
    got=$(awk -v n=$n 'NR == FNR { if ($1 == n) { s[$2] += log($3); c[$2]++ } next }
                       $1 == n && $2 >= 65536 && $2 <= 67108864 { e = exp(s[$2] / c[$2]) / $3 - 1; print (e < 0 ? -e : e) }' \
          "$tmp/sib" "$tmp/tgt" | sort -g | awk '{ v[NR] = $1 } END { printf "%.2f %d", 100 * (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2), NR }')
    want=$(awk -v g=$g -v n=$n '$1 == g && $2 == "NVLink" && $3 == n { sub(/%/, "", $8); print $8, $5 }' "$tmp/xfer")
    echo "$want $got" | awk '{ d = $1 - $3; if (d < 0) d = -d; exit !(d <= 0.11 && $2 == $4 && $4 == 22) }' && ok \
      || fail "$g gather at $n GPUs by its sibling: printed '$want', from the tables '$got'"
  done
done
# every NVLink row's target verdict is its hierarchy median against 10%; the summary line counts them
awk '$2 == "NVLink" && $3 ~ /^[248]$/ { h = $8; sub(/%/, "", h); v = h + 0 <= 10 ? "met" : "missed"; n++; m += v == "met"
       if ($NF != v) { print "bad row: " $0; bad++ } }
     /^# target all-gather/ { line = $0 }
     END { if (n != 12 || line !~ (", " m " of " n " met")) { print n, m, line; bad++ } exit bad > 0 }' \
  "$tmp/xfer" && ok || fail "transfer gather verdicts"
# GEMM rows: a sibling exactly where one is measured (H100 <-> H200), its hierarchy median no
# worse than copying + 1 point (the clause of the target), and the verdict is the target
awk '$3 ~ /^(aic|bench)/ && NF == 10 { want = $1 == "H100-SXM" ? "H200-SXM" : $1 == "H200-SXM" ? "H100-SXM" : "-"
       h = $8; c = $7; sub(/%/, "", h); sub(/%/, "", c)
       v = (h + 0 <= 8 && (c == "-" || h + 0 <= c + 1)) ? "met" : "missed"
       if ($4 != want || $NF != v) { print "bad row: " $0; bad++ } n++ }
     END { exit !(n == 23 && !bad) }' "$tmp/xfer" && ok || fail "transfer GEMM rows"
expect_grep '^# target 90% intervals of the answers \(>= 85% of the points\): (met|missed); GEMM [0-9.]+% of 2470 points' "$tmp/xfer"   # 1740 + fp8-block's 730; nvfp4 has no interval
expect_rc 2 "$TPSPLIT" fit --loo-gpu --only cats
expect_grep "expected gemm, gather, transfer, breakeven or w8a16" "$tmp/err"
expect_rc 2 "$TPSPLIT" fit --loo-gpu data/h200_gemm_w8a16.tsv
expect_rc 2 "$TPSPLIT" fit --loo-gpu --hold-out V100

finish
