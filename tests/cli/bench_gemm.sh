#!/bin/sh
# bench_gemm.sh: `tpsplit bench gemm` options (src/'s: every build, with or without CUDA)
# and, where a GPU can be opened, a small checked and timed run whose table is verified
# with awk; without a GPU (or CUDA) that run must exit 1 and write nothing.
. "$top_srcdir/tests/cli/lib.sh"
expect_rc 0 "$TPSPLIT" bench gemm --help
expect_grep '^Usage: tpsplit bench gemm' "$tmp/out"
expect_rc 2 "$TPSPLIT" bench gemm --path nope
expect_rc 2 "$TPSPLIT" bench gemm --tokens 1,2
expect_rc 2 "$TPSPLIT" bench gemm --path w8a16 --k 100
expect_rc 2 "$TPSPLIT" bench gemm --path w8a16 --tp 0
expect_rc 2 "$TPSPLIT" bench gemm --path w8a16 --tokens 0,5
# --configs times and checks nothing: --check-only or --json with it is a usage error
expect_rc 2 "$TPSPLIT" bench gemm --path dense-bf16 --configs --json
expect_rc 2 "$TPSPLIT" bench gemm --path dense-bf16 --configs --check-only
# a W8A16 override that is unknown (TPS_W8_PULL) or not allowed (TPS_W8_SUM=2: no such
# form) fails at once: exit 2, one line naming it
for ov in TPS_W8_SUM=2 TPS_W8_PULL=1 TPS_W8_SBT=40; do
  env "$ov" "$TPSPLIT" bench gemm --path w8a16 2>"$tmp/err"; rc=$?
  [ "$rc" -eq 2 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q "${ov%%=*}" "$tmp/err" && ok \
    || fail "$ov: exit $rc, '$(cat "$tmp/err")'"
done
# an output directory that does not exist fails at once (before any GPU work): exit 2, one
# line naming the file, nothing left behind
"$TPSPLIT" bench gemm --path w8a16 -o "$tmp/nodir/t.tsv" 2>"$tmp/err"; rc=$?
[ "$rc" -eq 2 ] && ok || fail "missing output directory: exit $rc, want 2"
[ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q "$tmp/nodir/t.tsv" "$tmp/err" && ok || fail "missing directory message: $(cat "$tmp/err")"
[ ! -e "$tmp/nodir" ] && ok || fail "missing directory: something was created"
"$TPSPLIT" bench gemm --path w8a16 --k 256 --n 128 --tokens 3,12 --tp 2,8 --samples 5 \
  -o "$tmp/t.tsv" 2>"$tmp/err"; rc=$?
if grep -q 'no GPU can be opened' "$tmp/err"; then
  [ "$rc" -eq 1 ] && ok || fail "no GPU: exit $rc, want 1"
  [ ! -e "$tmp/t.tsv" ] && ok || fail "no GPU: a table was written"
  finish
fi
[ "$rc" -eq 0 ] && ok || fail "bench exited $rc: $(head -c 600 "$tmp/err")"
# rows = {3, 12} and ceil(T/TP): 3/2->2, 3/8->1, 12/2->6, 12/8->2 => 1 2 3 6 12
expect_grep '^rows	time_us	min_us	max_us	tflops	gbps\(	event_us\)\{0,1\}$' "$tmp/t.tsv"
# the timer is named; with the CUPTI span, the event time of the same replays is no shorter
# (0.5 us for the two clocks)
expect_grep '^#@ timer: \(cupti-span\|events\)$' "$tmp/t.tsv"
if grep -q '^#@ timer: cupti-span$' "$tmp/t.tsv"; then
  awk -F'\t' '!/^#/ && $1 != "rows" { if ($7 + 0.5 < $2) bad = 1 } END { exit bad }' "$tmp/t.tsv" \
    && ok || fail "event_us below the kernel span"
fi
rows=$(awk -F'\t' '!/^#/ && $1 != "rows" {printf "%s ", $1}' "$tmp/t.tsv")
[ "$rows" = "1 2 3 6 12 " ] && ok || fail "rows '$rows'"
# tflops = 2 M N K / time_us / 1e6, checked on every row
awk -F'\t' '!/^#/ && $1 != "rows" { t = 2 * $1 * 128 * 256 / $2 / 1e6; d = t - $5; if (d < 0) d = -d;
  if (d > 0.01 + 0.001 * t || $3 > $2 || $2 > $4 || $3 <= 0) bad = 1 } END { exit bad }' "$tmp/t.tsv" \
  && ok || fail "tflops or min <= median <= max wrong"
expect_grep '^#@ path: w8a16$' "$tmp/t.tsv"
expect_grep '^# one GPU: no all-gather' "$tmp/t.tsv"
expect_grep 'check split vs replicated: T=12 TP=2' "$tmp/t.tsv"
# --configs: segments that cover rows 1..40 in order, each row once, with the configuration
# our dispatch names (every w8a16 row of 1..40 is the stream kernel)
"$TPSPLIT" bench gemm --configs --path w8a16 --k 256 --n 128 --tokens 1..40:1 --tp 1 -o "$tmp/c.tsv" 2>"$tmp/err"; rc=$?
[ "$rc" -eq 0 ] && ok || fail "configs exited $rc: $(head -c 600 "$tmp/err")"
awk -F'\t' '!/^#/ && $1 != "first_row" { if ($1 != next_row || $2 < $1 || $3 != $2 - $1 + 1 || $4 !~ /^[0-9a-f]{16}$/) bad = 1;
  if (prev != "" && $4 == prev) bad = 1; prev = $4; next_row = $2 + 1 }
  BEGIN { next_row = 1 } END { exit bad || next_row != 41 }' "$tmp/c.tsv" && ok || fail "configs segments: $(cat "$tmp/c.tsv")"
! grep -q 'check ' "$tmp/c.tsv" && ok || fail "--configs ran a check"
# --check-per-config: sampled-row checks only at the first M of each configuration
"$TPSPLIT" bench gemm --check-per-config --path w8a16 --k 256 --n 128 --tokens 1..40:1 --tp 1 --samples 3 \
  -o "$tmp/p.tsv" 2>"$tmp/err"; rc=$?
[ "$rc" -eq 0 ] && ok || fail "check-per-config exited $rc"
nseg=$(grep -vc '^#\|^first_row' "$tmp/c.tsv")
nchk=$(grep -c '^# check w8a16 vs float64 CPU reference: M=[0-9]* (8 sampled rows)' "$tmp/p.tsv")
[ "$nchk" -le "$nseg" ] && [ "$nchk" -ge 1 ] && ok || fail "check-per-config: $nchk sampled-row checks for $nseg configurations"
finish
