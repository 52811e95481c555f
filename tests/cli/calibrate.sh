#!/bin/sh
# tests/cli/calibrate.sh: `tpsplit calibrate` without a GPU: the no-GPU message and exit code
# with nothing written; bad input (exit 2, one line, before any GPU work, nothing written);
# --gather files read; --simulate on our H200 tables (the offline accuracy target: median
# <= 4%, max <= 10% per path); --simulate -o and --check (within, outside, bad input).
. "$top_srcdir/tests/cli/lib.sh"
D=$top_srcdir/data
T=$top_srcdir/tests/data

# nothing named like the output, complete or temporary
no_output() { if ls "$1"* >/dev/null 2>&1; then fail "output left behind: $(ls "$1"*)"; else ok; fi; }

# ---- no GPU: one clear line, exit 1, nothing written (a machine with a GPU runs a short calibration instead)
"$TPSPLIT" calibrate --budget-s 5 -o "$tmp/t.json" >"$tmp/out" 2>"$tmp/err"; rc=$?
if grep -q "no GPU can be opened" "$tmp/err"; then
  [ "$rc" -eq 1 ] && ok || fail "no GPU: exit $rc, want 1"
  expect_grep "^tpsplit calibrate: no GPU can be opened: .*Nothing written\.$" "$tmp/err"
  [ "$(wc -l <"$tmp/err")" -eq 1 ] && ok || fail "no GPU: more than one line: $(cat "$tmp/err")"
  no_output "$tmp/t.json"
  [ -s "$tmp/out" ] && fail "no GPU: stdout not empty" || ok
else
  echo "note: a GPU is visible: the no-GPU checks are skipped (calibrate exited $rc)"
fi

# ---- bad input: exit 2, one line, nothing written
bad() { # WANT-PATTERN ARGS...
  pat=$1; shift
  expect_rc 2 "$TPSPLIT" calibrate "$@"
  expect_grep "$pat" "$tmp/err"
  [ "$(wc -l <"$tmp/err")" -le 1 ] && ok || fail "calibrate $*: more than one line: $(cat "$tmp/err")"
}
bad "-o FILE is required" --budget-s 5
bad "'5120x100' is not KxN with K and N multiples of 64" --shapes 5120x100 -o "$tmp/t.json"
bad "unknown path 'marlin-w8a16'" --paths marlin-w8a16 -o "$tmp/t.json"
bad "--tp 1: from 2 to 16" --tp 1,8 -o "$tmp/t.json"
bad "--budget-s '0': seconds from 1 to 86400" --budget-s 0 -o "$tmp/t.json"
bad "unknown gather backend 'nvls'" --backends nvls -o "$tmp/t.json"
bad "--method 'exact': auto, shaped or steffen" --method exact -o "$tmp/t.json"
bad "nope.log" --gather "$tmp/nope.log" -o "$tmp/t.json"
bad "h200_gemm_w8a16.tsv: not an all-gather log or table" --gather "$D/h200_gemm_w8a16.tsv" -o "$tmp/t.json"
bad "allgather_h200_tp1_nccl.txt: 1 rank\(s\): an all-gather of >= 2 ranks is needed" \
  --gather "$D/allgather_h200_tp1_nccl.txt" -o "$tmp/t.json"
{ echo "# Gather: auto (custom one-shot NVLink while the per-rank input is <= 2097152 bytes)"
  cat "$T/ncclt/current.txt"; } >"$tmp/auto.txt"
bad "auto.txt:1: a log of the auto rule \(custom and nccl mixed\): give one log per backend" --gather "$tmp/auto.txt" -o "$tmp/t.json"
bad "an AIConfigurator GEMM table, not an NCCL one" --gather "$D/aic/gemm_h100_sxm_k5120.tsv.gz" -o "$tmp/t.json"
bad "" -o "$tmp/no/such/dir/t.json"
no_output "$tmp/t.json"
bad "--check, --simulate and --replay exclude each other" --check x --simulate y
bad "--simulate needs at least one table argument" --simulate

# ---- --gather files that read: without a GPU the run then stops at the GPU (exit 1), not at the file
for g in "$T/ncclt/current.txt" "$T/ncclt/mpi.txt" "$D/aic/nccl_h100_sxm.tsv.gz"; do
  "$TPSPLIT" calibrate --budget-s 5 --gather "$g" -o "$tmp/t.json" >"$tmp/out" 2>"$tmp/err"; rc=$?
  if grep -q "no GPU can be opened" "$tmp/err"; then [ "$rc" -eq 1 ] && ok || fail "--gather $g: exit $rc"; fi
  expect_nogrep "$(basename "$g")" "$tmp/err"
done
rm -f "$tmp/t.json"

# ---- offline accuracy: the sweep taken from the full tables, the other rows scored (H200 dense-bf16 and
# native-fp8; w8a16: the H100's table of the kernels' current dispatch, whose shape the w8a16 model follows)
expect_rc 0 "$TPSPLIT" calibrate --simulate "$D/h200_gemm_dense-bf16.tsv" "$D/h200_gemm_native-fp8.tsv" \
  "$D/h100_w8a16_grid_5120x1792_w8a16.tsv"
cp "$tmp/out" "$tmp/sim.txt"
n=$(awk -F'\t' '$1 ~ /h200_gemm|h100_w8a16/ {n++} END {print n+0}' "$tmp/sim.txt")
[ "$n" -eq 3 ] && ok || fail "--simulate: $n table rows, want 3: $(cat "$tmp/sim.txt")"
# columns: table data swept scored steffen_med steffen_max shaped_med shaped_max
# (w8a16: 4% again since sk2_time's refit and the tables re-measured with it, data/h100_w8a16_sk2fit.txt:
# measured 2.6%, max 8.2%; it was 5.27% / 8.86% with the first fit, whose 8% high 1536-row stream-K
# row pulled the one fitted scale low: doc/gemm-kernels.md, "The calibrate bar for w8a16")
awk -F'\t' '$1 ~ /h200_gemm|h100_w8a16/ { m = $7; x = $8; sub("%", "", m); sub("%", "", x); lim = 4
  if ($3 < 10 || $3 > 14 || $4 < 9) { print "rows: swept " $3 " scored " $4 " in " $1; bad = 1 }
  if (m + 0 > lim || x + 0 > 10) { print "outside " lim "%/10%: " $1 " median " m " max " x; bad = 1 } }
  END { exit bad }' "$tmp/sim.txt" >"$tmp/why" && ok || fail "--simulate: $(cat "$tmp/why")"
# w8a16 is a staircase: Steffen misses it (max > 10%), shaped does not
awk -F'\t' '$1 ~ /w8a16/ { s = $6; x = $8; sub("%", "", s); sub("%", "", x); exit !(s + 0 > 10 && x + 0 < s + 0) }' \
  "$tmp/sim.txt" && ok || fail "--simulate w8a16: shaped should beat Steffen's max: $(grep w8a16 "$tmp/sim.txt")"

# ---- --simulate -o writes a calibration; --check scores it against the full tables
# (one GPU per calibration: the H100's native-fp8 and w8a16 tables)
expect_rc 0 "$TPSPLIT" calibrate --simulate "$D/h100_gemm_native-fp8.tsv" \
  "$D/h100_w8a16_grid_5120x1792_w8a16.tsv" -o "$tmp/sim.json"
grep -v '^#' "$tmp/out" | grep w8a16 >"$tmp/sim.txt"
expect_grep '"schema_version": 1' "$tmp/sim.json"
expect_grep '"NVIDIA_H100_80GB_HBM3": \{' "$tmp/sim.json"
expect_rc 0 "$TPSPLIT" calibrate --check "$tmp/sim.json" "$D/h100_gemm_native-fp8.tsv" \
  "$D/h100_w8a16_grid_5120x1792_w8a16.tsv"
expect_grep "^5120x1792	w8a16	17	12	.*	within	" "$tmp/out"
expect_grep "^# every part within tolerance" "$tmp/out"
# the check's numbers are the simulation's (the file carries the sweep; the refit is deterministic)
sm=$(awk -F'\t' '$1 ~ /w8a16/ {print $7}' "$tmp/sim.txt")
cm=$(awk -F'\t' '$2 == "w8a16" {printf "%.1f%%", $5 + 0}' "$tmp/out")
[ "$sm" = "$cm" ] && ok || fail "--check w8a16 median $cm, --simulate said $sm"
expect_rc 1 "$TPSPLIT" calibrate --check "$tmp/sim.json" --tolerance 0.1,0.2 "$D/h100_gemm_native-fp8.tsv"
expect_grep "OUTSIDE" "$tmp/out"
expect_rc 0 "$TPSPLIT" calibrate --check "$tmp/sim.json" --json "$D/h100_w8a16_grid_5120x1792_w8a16.tsv"
expect_grep '"within": true' "$tmp/out"
# a bench of a path the calibration lacks, a broken calibration: exit 2, one line
expect_rc 2 "$TPSPLIT" calibrate --check "$tmp/sim.json" "$T/gemm_h20_marlin.tsv"
# another GPU's bench table (the H200's calibration, the H100's table): refused at its '#@ gpu' line, nothing scored
gl=$(grep -n '^#@ gpu:' "$D/h100_gemm_dense-bf16.tsv" | cut -d: -f1)
for c in "calibrate --check" "validate --calibration"; do
  expect_rc 2 "$TPSPLIT" $c "$D/calibrate/thresholds_h200_5120x1792.json" "$D/h100_gemm_dense-bf16.tsv"
  expect_grep "h100_gemm_dense-bf16.tsv:$gl: a table of 'NVIDIA H100 80GB HBM3', not of NVIDIA H200 \\(H200-SXM\\): nothing scored" "$tmp/err"
  [ -s "$tmp/out" ] && fail "$c printed a table for another GPU's bench" || ok
done
# an option the mode does not read is refused, not ignored (exit 2, one line, nothing written)
H2=$D/calibrate/thresholds_h200_5120x1792.json
B2=$D/calibrate/full_5120x1792_dense-bf16.tsv
expect_rc 2 "$TPSPLIT" calibrate --check "$H2" -o "$tmp/never.json" "$B2"
expect_grep "^tpsplit calibrate: -o does nothing with --check: refused rather than ignored" "$tmp/err"
[ -e "$tmp/never.json" ] && fail "--check -o wrote a file" || ok
for a in "--tp 4" "--paths w8a16" "--shapes 7168x2112" "--method steffen" "--samples 3" "--budget-s 5"; do
  expect_rc 2 "$TPSPLIT" calibrate --check "$H2" $a "$B2"
  expect_grep "^tpsplit calibrate: ${a%% *} does nothing with --check" "$tmp/err"
done
for a in "--tp 4" "--paths w8a16" "--budget-s 5" "--samples 3" "--tolerance 1,2" "--rows"; do
  expect_rc 2 "$TPSPLIT" calibrate --simulate $a "$D/h100_gemm_dense-bf16.tsv"
  expect_grep "^tpsplit calibrate: ${a%% *} does nothing with --simulate" "$tmp/err"
done
expect_rc 2 "$TPSPLIT" calibrate --check "$H2" --json --rows "$B2"
expect_grep "^tpsplit calibrate: --rows is the text table's; --json has no per-row data" "$tmp/err"
for a in "--tolerance 0.25" "--round 64"; do
  expect_rc 2 "$TPSPLIT" validate --calibration "$H2" $a "$B2"
  expect_grep "^tpsplit validate: --calibration and ${a%% *} exclude each other" "$tmp/err"
done
expect_rc 2 "$TPSPLIT" validate --calibration "$H2" --json --rows "$B2"
sed 's/"schema_version": 1/"schema_version": 7/' "$tmp/sim.json" >"$tmp/bad.json"
expect_rc 2 "$TPSPLIT" calibrate --check "$tmp/bad.json" "$D/h100_w8a16_grid_5120x1792_w8a16.tsv"
sl=$(grep -n '"schema_version"' "$tmp/bad.json" | cut -d: -f1) # the reader names the key's line
expect_grep "bad.json:$sl: \\\$.schema_version: version 7; this tpsplit reads version 1" "$tmp/err"
sed 's/"sm_count": 132/"sm_count": "132"/' "$tmp/sim.json" >"$tmp/bad.json"
expect_rc 2 "$TPSPLIT" calibrate --check "$tmp/bad.json" "$D/h100_w8a16_grid_5120x1792_w8a16.tsv"
expect_grep "\\\$.devices.NVIDIA_H100_80GB_HBM3.sm_count: an integer from 1 to 100000, not a string" "$tmp/err"
finish
