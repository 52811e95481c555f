#!/bin/sh
# tests/cli/decide.sh: `tpsplit decide`, the PR's gate: every condition failing alone, the
# threshold from the crossover of the GPU, TP and path, exit codes 0 split / 1 no / 2 usage.
. "$top_srcdir/tests/cli/lib.sh"
dec() { "$TPSPLIT" decide "$@"; }
nfail() { grep -c '^  FAIL' "$tmp/out"; }

# all conditions hold: H20, TP8, 4096 tokens (the H20 threshold is far below 4096)
expect_rc 0 dec --gpu H20 --tp 8 --tokens 4096
expect_grep '^verdict: split$' "$tmp/out"
[ "$(grep -c '^  PASS' "$tmp/out")" -eq 7 ] && ok || fail "want 7 PASS lines"

# each condition failing alone: exit 1, exactly that condition FAILs
one_fail() { # one_fail CONDITION ARGS...
  c=$1; shift
  expect_rc 1 dec "$@"
  expect_grep "^  FAIL  $c " "$tmp/out"
  [ "$(nfail)" -eq 1 ] && ok || fail "$c: $(nfail) FAIL lines for '$*'"
  expect_grep '^verdict: no split$' "$tmp/out"
}
one_fail sm90 --gpu B200 --tp 8 --tokens 16384 --path native-fp8 --threshold 2048
expect_grep 'B200 is SM100' "$tmp/out"
one_fail sm90 --gpu A100 --tp 8 --tokens 16384 --threshold 2048
one_fail sequence_parallel --gpu H20 --tp 8 --tokens 4096 --sequence-parallel
one_fail lora --gpu H20 --tp 8 --tokens 4096 --lora=yes
one_fail micro_batching --gpu H20 --tp 8 --tokens 4096 --micro-batching
one_fail batch_invariance --gpu H20 --tp 8 --tokens 4096 --batch-invariant
one_fail custom_allreduce --gpu H20 --tp 8 --tokens 4096 --custom-allreduce=no
expect_grep "custom all-reduce disabled \(the seed vLLM pull request's proxy" "$tmp/out"
one_fail custom_allreduce --gpu H20 --tp 8 --tokens 4096 --fully-connected=no
one_fail custom_allreduce --gpu H20 --tp 16 --tokens 16384 --threshold 2048
expect_grep 'spans more than one 8-GPU NVLink domain' "$tmp/out"
one_fail token_threshold --gpu H20 --tp 8 --tokens 4096 --threshold 8192
# explicit "no" keeps the condition passing
expect_rc 0 dec --gpu H20 --tp 8 --tokens 4096 --lora=no --sequence-parallel=no --fully-connected=yes
# the boundary is inclusive: T = threshold splits, T = threshold - 1 does not
expect_rc 0 dec --gpu H20 --tp 8 --tokens 2048 --threshold 2048
one_fail token_threshold --gpu H20 --tp 8 --tokens 2047 --threshold 2048

# the threshold comes from the crossover of this GPU, TP and path: the same number that
# `tpsplit crossover` prints, the threshold of least predicted excess (model/predict/excess.h)
for g in H20 H200; do
  expect_rc 0 "$TPSPLIT" crossover --gpus $g --tp 8 --paths marlin-w8a16
  cthr=$(awk -v g="$g" '$1 ~ "^"g && $2 == 8 { print $6 }' "$tmp/out")   # columns: gpu tp path breakeven interval threshold gemm gather
  expect_rc 0 dec --gpu $g --tp 8 --tokens 65536 --json
  dthr=$(awk -F': ' '/"threshold_tokens"/ { gsub(/,/, "", $2); print $2 }' "$tmp/out")
  dbe=$(awk -F': ' '/"breakeven_tokens"/ { gsub(/,/, "", $2); print $2 }' "$tmp/out")
  [ -n "$cthr" ] && [ "$cthr" = "$dthr" ] && ok || fail "$g: decide threshold '$dthr' vs crossover '$cthr'"
  # never above the break-even: from it on the split wins at every T, so a later threshold
  # only adds excess (it may lie below, where an earlier win band pays)
  awk -v t="$dthr" -v b="$dbe" 'BEGIN { exit !(t >= 1 && t <= b) }' && ok || fail "$g: threshold $dthr vs break-even $dbe"
done
# H200 at TP8: the H20's Marlin table moved to the H200 as a sibling; the split wins from 48
# tokens to 456, loses up to 0.74x until the break-even 1661 and wins after: a threshold of 48
# costs less than one at the break-even (which leaves the first band's 1.7x out), so 32 tokens
# do not split and the source names both numbers
one_fail token_threshold --gpu H200 --tp 8 --tokens 32
expect_grep 'parts prediction: break-even [0-9]+ tokens on H200-SXM TP8 marlin-w8a16 \(GEMM sibling.*threshold of least predicted excess' "$tmp/out"
# the same with the model scaling (the H20 fit transferred)
one_fail token_threshold --gpu H200 --tp 8 --tokens 32 --scaling model
expect_grep 'model prediction: break-even [0-9]+ tokens on H200-SXM TP8 marlin-w8a16' "$tmp/out"

# JSON
expect_rc 1 dec --gpu H20 --tp 8 --tokens 4096 --lora --json
expect_grep '"verdict": "no split"' "$tmp/out"
expect_grep '"split": false' "$tmp/out"
[ "$(grep -c '"pass": ' "$tmp/out")" -eq 7 ] && ok || fail "7 conditions in JSON"

# usage errors: exit 2
expect_rc 2 dec --gpu H20 --tp 8
expect_rc 2 dec --gpu H20 --tokens 10
expect_rc 2 dec --gpu H20 --tp 8 --tokens -5
expect_rc 2 dec --gpu H20 --tp 8 --tokens 10 --lora=maybe
expect_rc 2 dec --gpu NoSuchGPU --tp 8 --tokens 10
expect_grep "unknown GPU" "$tmp/err"
expect_rc 2 dec --gpu H20 --tp 8 --tokens 10 --path no-path
expect_rc 2 dec --gpu H20 --tp 12 --tokens 10
expect_rc 2 dec --gpu H20 --tp 8 --tokens 10 --bogus
finish
