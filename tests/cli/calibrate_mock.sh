#!/bin/sh
# tests/cli/calibrate_mock.sh: the whole `tpsplit calibrate` flow on mock GPUs (tests/cli/calib_mock.c:
# GEMM times from our H200 tables, H200-like all-gathers): one GPU (gathers from models and
# --gather files, said), eight GPUs (gathers measured), a path the GPU cannot run, an NCCL
# failure, a failed correctness check, the budget reached (partial), an interrupted run
# (no file), and the written file read back by `calibrate --check`.
. "$top_srcdir/tests/cli/lib.sh"
M=${top_builddir:?}/tests/cli/calib_mock
D=$top_srcdir/data
[ -x "$M" ] || { echo "no $M"; exit 77; }
no_output() { if ls "$1"* >/dev/null 2>&1; then fail "output left behind: $(ls "$1"*)"; else ok; fi; }
count() { grep -c "$1" "$2"; }

# ---- the all-row checks (M 1, 7, 64, 129) run once per path and shape, not in every round:
# the later rounds (adaptive, break-even) of the same part check only their new rows
MOCK_GPUS=1 MOCK_SAY_CHECKS=1 expect_rc 0 "$M" calibrate -o "$tmp/chk1.json"
n=$(grep -c '^mock: all-row checks of ' "$tmp/err")
runs=$(grep -cE '^calibrate: gemm 5120x1792 [a-z0-9-]+ \((sweep|adaptive|break-even)' "$tmp/err")
[ "$n" -eq 3 ] && [ "$runs" -gt 3 ] && ok || fail "all-row checks in $n of $runs bench runs, want 3 (one per path)"

# ---- one GPU: GEMM measured, every gather from a model, the file says which
MOCK_GPUS=1 expect_rc 0 "$M" calibrate -o "$tmp/one.json"
f=$tmp/one.json
expect_grep '"partial": false' "$f"
expect_grep '"NVIDIA_H200": \{' "$f"
expect_grep '"device_name": "NVIDIA H200"' "$f"
expect_grep '"gpu_spec": "H200-SXM"' "$f"
n=$(count '"split_from_tokens"' "$f")
[ "$n" -eq 18 ] && ok || fail "one GPU: $n thresholds, want 18 (3 paths x 3 TPs x 2 backends)"
# every entry has its win bands (src/io/thresholds.h), and the ones that say more are printed
n=$(count '"win_bands_tokens"' "$f")
[ "$n" -eq 18 ] && ok || fail "one GPU: $n entries with win_bands_tokens, want 18"
expect_nogrep 'no win_bands_tokens' "$f"
expect_grep '^calibrate:   win bands [0-9]+\.\.[0-9]+, ' "$tmp/err"
expect_grep '"kind": "transferred"' "$f"
expect_grep '"from_gpus": \[' "$f"
expect_grep '"kind": "spec-only"' "$f"
expect_grep 'one GPU visible: every all-gather comes from --gather files or models' "$f"
expect_grep 'TP8 nccl gather: transferred \(A100-SXM-80GB,H100-SXM,B200\)' "$tmp/err"
expect_grep 'wrote .*one.json: 18 thresholds' "$tmp/err"
# each measured row keeps the kernel configuration it ran (the mock names it 'mock M=<rows>'):
# configs[i] belongs to rows[i] in every sweep, through the merges of the adaptive rounds
v=$(awk '/"configs": \[/ { k = "c"; nc = 0; next } /"rows": \[/ { k = "r"; nr = 0; next }
  /\]/ { if (k == "r") { n++; if (nc != nr) bad++; for (i = 1; i <= nr; i++) if (c[i] != "\"mock M=" r[i] "\"") bad++ } k = ""; next }
  k != "" { sub(/^ +/, ""); sub(/,$/, ""); if (k == "c") c[++nc] = $0; else r[++nr] = $0 }
  END { printf "%d %d", n, bad }' "$f")
[ "$v" = "3 0" ] && ok || fail "one GPU: configs per row (sweeps, mismatches) = $v, want 3 0"
# the held-out check: the mock's times are Steffen interpolations of our H200 tables, so the
# adaptive rows, predicted by the first-phase fit, choose Steffen over shaped on every path;
# the file records the check and the provenance says how the method was chosen
for p in dense-bf16 native-fp8 w8a16; do
  expect_grep "gemm 5120x1792 $p: held-out check of [0-9]+ adaptive rows by the first-phase fit: max \|error\| steffen [0-9.]+%, shaped [0-9.]+% .*: steffen chosen instead of the first phase's" "$tmp/err"
done
n=$(count '"first_phase_method": "shaped"' "$f")
[ "$n" -eq 3 ] && ok || fail "one GPU: first_phase_method shaped on $n records, want 3"
expect_grep '"heldout_rows": \[$' "$f"
expect_grep '"heldout_max_err": \{$' "$f"
expect_grep 'Steffen interpolation in log-log of the sweep \(model/calib/calib.h\); chosen by the held-out check of [0-9]+ adaptive rows' "$f"
# --no-heldout: the check said, the first-phase method kept
MOCK_GPUS=1 expect_rc 0 "$M" calibrate --paths dense-bf16 --no-heldout -o "$tmp/nh.json"
expect_grep 'dense-bf16: held-out check .*: shaped kept \(--no-heldout\)' "$tmp/err"
expect_grep '"method": "shaped"' "$tmp/nh.json"
expect_grep "the first phase's \(--no-heldout\); the held-out check of [0-9]+ adaptive rows" "$tmp/nh.json"
expect_grep '"harness": "bench"' "$tmp/nh.json"
# --harness aic: the sweep converted by the H200's own bundled tables in both harnesses (the
# mock is an H200), the harness recorded in every entry
MOCK_GPUS=1 expect_rc 0 "$M" calibrate --paths dense-bf16 --no-heldout --harness aic -o "$tmp/aic.json"
expect_grep '"harness": "aic"' "$tmp/aic.json"
expect_nogrep '"harness": "bench"' "$tmp/aic.json"
expect_grep "converted from the bench harness to aic by H200-SXM's tables in both" "$tmp/aic.json"
# the file reads back: --check scores its calibration against the full tables (exit 0 or 1, not 2)
"$TPSPLIT" calibrate --check "$f" "$D/h200_gemm_w8a16.tsv" >"$tmp/out" 2>"$tmp/err"; rc=$?
[ "$rc" -le 1 ] && ok || fail "--check of a calibrate result: exit $rc: $(cat "$tmp/err")"
expect_grep "^5120x1792	w8a16	" "$tmp/out"

# ---- one GPU with a --gather file of 8 ranks: TP8 nccl from the file, with its lines
MOCK_GPUS=1 expect_rc 0 "$M" calibrate --tp 8 --backends nccl --paths w8a16 --gather "$top_srcdir/tests/data/ncclt/current.txt" \
  -o "$tmp/file.json"
expect_grep '"source": ".*current.txt:[0-9]+-[0-9]+ ' "$tmp/file.json"
expect_nogrep '"kind": "transferred"' "$tmp/file.json"
# a bench allgather log names its backend ("# Gather: custom", read by src/io/ncclt.c): the TP8
# custom gather of the auto rule comes from it, not from the spec-only model
{ echo "# Gather: custom (custom one-shot NVLink while the per-rank input is <= 2097152 bytes)"
  cat "$top_srcdir/tests/data/ncclt/current.txt"; } >"$tmp/custom.txt"
MOCK_GPUS=1 expect_rc 0 "$M" calibrate --tp 8 --backends auto --paths w8a16 --gather "$top_srcdir/tests/data/ncclt/current.txt" \
  --gather "$tmp/custom.txt" -o "$tmp/custom.json"
expect_grep '"source": "custom: [^|]*custom.txt:[0-9]+-[0-9]+ .*\| nccl: [^|]*current.txt:[0-9]+-[0-9]+ ' "$tmp/custom.json"
expect_nogrep 'spec-only' "$tmp/custom.json"

# ---- eight GPUs: gathers measured on both backends
MOCK_GPUS=8 expect_rc 0 "$M" calibrate -o "$tmp/eight.json"
f=$tmp/eight.json
expect_nogrep '"kind": "transferred"' "$f"
expect_grep 'bench allgather, 8 GPUs, custom' "$f"
expect_grep 'bench allgather, 8 GPUs, nccl' "$f"
expect_grep '"nccl": "2.28.9"' "$f"
expect_grep '"gpus_visible": 8' "$f"
expect_grep 'allgather TP8 custom: .* sizes' "$tmp/err"

# ---- a path this GPU cannot run (cc 8.0: no FP8): skipped and said; the others calibrated
MOCK_GPUS=1 MOCK_CC=80 expect_rc 0 "$M" calibrate -o "$tmp/a100.json"
expect_grep 'skipping native-fp8: native-fp8 needs compute capability 8.9; this GPU has 8.0' "$tmp/err"
expect_grep '"status": "skipped"' "$tmp/a100.json"
expect_nogrep '"native-fp8": \{' "$tmp/a100.json"
expect_grep '"dense-bf16": \{' "$tmp/a100.json"

# ---- NCCL fails (an init timeout): said, the gathers fall back to the models, still a file
MOCK_GPUS=8 MOCK_GATHER_FAIL=1 expect_rc 0 "$M" calibrate --paths dense-bf16 -o "$tmp/fail.json"
expect_grep 'allgather TP8 nccl: failed: rank 3: NCCL init timed out' "$tmp/err"
expect_grep '"status": "failed"' "$tmp/fail.json"
expect_grep '"kind": "transferred"' "$tmp/fail.json"

# ---- a failed correctness check: that path has no thresholds, the run says so
MOCK_GPUS=1 MOCK_CHECK_FAIL=w8a16 expect_rc 0 "$M" calibrate -o "$tmp/chk.json"
expect_grep 'w8a16 .*a correctness check failed: no thresholds for it' "$tmp/err"
expect_nogrep '"w8a16": \{' "$tmp/chk.json"
expect_grep '"reason": "a correctness check failed: nothing timed"' "$tmp/chk.json"

# ---- the budget: 1.5 s per GEMM run, 10 s in all: the GEMMs run, the gathers and the
# break-even rows do not; the file is written, partial, its gathers from the models
MOCK_GPUS=8 MOCK_GEMM_S=1.5 expect_rc 0 "$M" calibrate --budget-s 10 -o "$tmp/part.json"
expect_grep '"partial": true' "$tmp/part.json"
expect_grep 'budget: .* stopping here' "$tmp/err"
expect_grep '"status": "not-run"' "$tmp/part.json"
expect_grep 'partial: the budget was reached' "$tmp/err"
wall=$(sed -n 's/.*"wall_s": \([0-9.]*\).*/\1/p' "$tmp/part.json")
awk -v w="$wall" 'BEGIN { exit !(w > 4 && w < 30) }' && ok || fail "partial run took $wall s, want 4.5 (the GEMMs) .. 10 (the budget) + the transferred model fit"

# ---- a part's first step is slow (its all-row checks: 12 s), the later ones fast: the
# break-even rows are estimated from the part's latest step, not from the longest step so
# far, so they still fit in a 44 s budget after 36 s of first steps (run 3 on the H200 stopped
# at 48 of 60 s: a one-row step was estimated at the 13 s of a first step).  The 8 s left are
# less than a first step (12 s: the old estimate stops) and leave the CPU time of the fits
# room under the sanitizers (4 s left was too few in an ASan CI run).  The mock's clock is its CPU time plus the
# pauses it pretends (calib_mock.c), so the margin does not shrink on a loaded machine.
MOCK_GPUS=1 MOCK_FIRST_S=12 expect_rc 0 "$M" calibrate --budget-s 44 -o "$tmp/est.json"
expect_grep '"partial": false' "$tmp/est.json"
expect_grep 'break-even rows' "$tmp/err"
expect_nogrep 'stopping here' "$tmp/err"

# ---- interrupted (a GEMM that never returns, then SIGTERM): no file, no temporary file
MOCK_GPUS=1 MOCK_HANG=1 "$M" calibrate -o "$tmp/int.json" >"$tmp/out" 2>"$tmp/err" &
pid=$!
i=0
# the output is opened (O_TMPFILE: no name; else int.json.tmp.*) before the first GEMM, which
# hangs: wait for calibrate's first line (up to 30 s: a loaded machine, make check -j), then give it half a
# second to reach the GEMM
while [ $i -lt 300 ] && ! grep -q '^calibrate: .* budget' "$tmp/err" 2>/dev/null; do sleep 0.1; i=$((i + 1)); done
grep -q '^calibrate: .* budget' "$tmp/err" && ok || fail "calibrate did not start: $(head -c 300 "$tmp/err")"
sleep 0.5
kill -TERM $pid
wait $pid; rc=$?
[ "$rc" -eq 143 ] && ok || fail "interrupted: exit $rc, want 143"
expect_grep 'interrupted: no thresholds file written' "$tmp/err"
no_output "$tmp/int.json"

# ---- the output's directory cannot be written: exit 2 before any GPU work
MOCK_GPUS=1 expect_rc 2 "$M" calibrate -o "$tmp/none/x.json"
finish
