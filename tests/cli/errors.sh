#!/bin/sh
# tests/cli/errors.sh: the one error form and the one exit-code table (src/base/exit.h, README's
# "Exit status"), in every command and subcommand.
#  - every usage error reads "tpsplit CMD: what (try 'tpsplit CMD --help')", one line, exit 2:
#    an unknown option, a stray argument, an option without its value (the first option of
#    the command's --help that takes one), a value out of range;
#  - a bad input file: "tpsplit CMD: FILE:LINE: what", exit 2; an output that cannot be created:
#    exit 2 naming it; a full disk (/dev/full): exit 1 with the errno text; nothing left behind;
#  - --help fits 80 columns, -h and -V exit 0;
#  - the unclear errors of issue 30 name the file the user gave, the bound or the reason.
. "$top_srcdir/tests/cli/lib.sh"
D="$top_srcdir/data"
B="$top_srcdir/tests/data/bad"
H20="$D/h20_tp8_fused_wqa_wkv.tsv"
CMDS="fit|fit --loo-gpu|fit --xgpu|predict|crossover|plot|simulate|decide|validate|calibrate|bench|bench gemm|bench split|bench allgather"

one_line() { [ "$(wc -l <"$tmp/err")" -eq 1 ] && ok || fail "$1: $(wc -l <"$tmp/err") stderr lines: $(head -c 300 "$tmp/err")"; }
# usage CMD ARGS...: exit 2, one line in the usage form of CMD (the words before the first option)
usage() {
  c=$1; shift
  # shellcheck disable=SC2086
  expect_rc 2 "$TPSPLIT" $c "$@"
  one_line "$c $*"
  want="^tpsplit${c:+ $c}: .+ \\(try 'tpsplit${c:+ $c} --help'\\)\$"
  grep -qE -- "$want" "$tmp/err" && ok || fail "'$c $*': '$(cat "$tmp/err")' is not the usage form"
}

# ---- the usage errors of every command, derived from its own --help
IFS='|'
for c in "" inspect $CMDS; do
  unset IFS
  usage "$c" --no-such-option
  # shellcheck disable=SC2086
  if [ -z "$c" ]; then h=--no-plots; else h=; fi # the main job's options: behind one of them
  # shellcheck disable=SC2086
  "$TPSPLIT" $c $h --help >"$tmp/help" 2>&1 || fail "'$c --help' exited non-zero"
  # the first option with a value, given without it
  o=$(grep -oE '^  (-[a-zA-Z], )?--[a-z][a-z0-9-]+[ =][A-Z]' "$tmp/help" | head -1 | grep -oE -- '--[a-z][a-z0-9-]+')
  [ -n "$o" ] && usage "$c" "$o" || [ "$c" = bench ] || fail "'$c --help' lists no option with a value"
  # a stray argument where the command takes none
  case $c in inspect|fit|validate|calibrate|bench|"") ;; *) usage "$c" stray-argument ;; esac
  # --help within 80 columns; -h and -V
  w=$(awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }' "$tmp/help")
  [ "$w" -le 80 ] && ok || fail "'tpsplit $c --help' is $w columns wide"
  # shellcheck disable=SC2086
  expect_rc 0 "$TPSPLIT" $c -h
  # shellcheck disable=SC2086
  expect_rc 0 "$TPSPLIT" $c -V
  IFS='|'
done
unset IFS
# values out of range, conflicts and missing requirements
usage predict --gpu H200 --tp 0
usage predict --tp 8
usage crossover --samples 1
usage crossover --samples 100001
usage decide --gpu H200 --tp 8 --tokens 0
usage decide --gpu H200 --tp 8
usage simulate --model deepseek-v3 --gpu H200 --tp 8 --chunk 0
usage plot --format bmp
usage fit --only gemm
usage "fit --loo-gpu" --only everything
usage "fit --xgpu"
usage validate
usage inspect
usage calibrate --budget-s 0 -o "$tmp/x.json"
usage calibrate --tp 1 -o "$tmp/x.json"
usage "bench gemm" --path dense-bf16 --k 100
usage "bench allgather" --bytes 0
usage bench no-such-target
usage bench
usage "" no-such-command
usage "" --tp 99
usage "" help no-such-command
# an unknown name on the command line (no file involved) is a usage error too
usage predict --gpu NOSUCH --tp 8
expect_grep "unknown GPU 'NOSUCH' \(known: .*H200-SXM" "$tmp/err"
usage simulate --model nosuch --gpu H200 --tp 8
expect_grep "unknown model 'nosuch' \(not a file; bundled: .*deepseek-v3" "$tmp/err"
usage crossover --gpus H200,NOSUCH

# ---- the exit-code table: a bad file (2, FILE:LINE), an output that cannot be created (2),
# a full disk (1, the errno text)
badfile() { # CMD WANT_PREFIX ARGS...: exit 2, one line starting "tpsplit CMD: FILE:LINE: "
  c=$1 pre=$2; shift 2
  # shellcheck disable=SC2086
  expect_rc 2 "$TPSPLIT" $c "$@"
  one_line "$c $*"
  grep -q "^tpsplit${c:+ $c}: $pre" "$tmp/err" && ok || fail "'$c $*': '$(cat "$tmp/err")' does not start 'tpsplit $c: $pre'"
}
badfile inspect "$B/nan.tsv:4: " "$B/nan.tsv"
badfile fit "$B/nan.tsv:4: " "$B/nan.tsv"
badfile predict "$B/nan.tsv:4: " --gpu H20 --tp 8 --gemm "$B/nan.tsv"
badfile crossover "$B/nan.tsv:4: " --gemm "$B/nan.tsv"
badfile plot "$B/nan.tsv:4: " --measured "$B/nan.tsv" -o "$tmp/figs"
badfile simulate "$B/gpus_zero_sms.tsv:12: " --model deepseek-v3 --gpu H200 --tp 8 --gpus-file "$B/gpus_zero_sms.tsv"
badfile decide "$B/gpus_zero_sms.tsv:12: " --gpu H200 --tp 8 --tokens 4096 --gpus-file "$B/gpus_zero_sms.tsv"
badfile validate "$B/nan.tsv:4: " --predicted "$B/nan.tsv" --measured "$H20"
badfile calibrate "$B/nan.tsv:4: " --simulate "$B/nan.tsv" -o "$tmp/c.json"
badfile "fit --loo-gpu" "$B/gpus_zero_sms.tsv:12: " --gpus-file "$B/gpus_zero_sms.tsv"
badfile "fit --xgpu" "$B/gpus_zero_sms.tsv:12: " --gpus-file "$B/gpus_zero_sms.tsv" -o "$tmp/x.fit"
[ -e "$tmp/c.json" ] || [ -e "$tmp/x.fit" ] && fail "a failed command left its output" || ok

NOPE="$tmp/no-such-dir/out"
outputs() { # the commands that write a file, FILE as @
  cat <<EOF
inspect -o @ $H20
fit -o @ $H20
predict --gpu H200 --tp 8 -o @
predict --gpu H200 --tp 8 --thresholds-out @
crossover --gpus H200 --tp 8 --paths dense-bf16 --thresholds-out @
calibrate --simulate $D/h200_gemm_dense-bf16.tsv -o @
EOF
}
outputs >"$tmp/outputs"
while read -r line; do
  # shellcheck disable=SC2046
  set -- $(printf '%s\n' "$line" | sed "s|@|$NOPE|")
  expect_rc 2 "$TPSPLIT" "$@"
  one_line "$line (cannot create)"
  expect_grep "^tpsplit $1: $NOPE: cannot create output file: No such file or directory\$" "$tmp/err"
  # shellcheck disable=SC2046
  set -- $(printf '%s\n' "$line" | sed "s|@|/dev/full|")
  expect_rc 1 "$TPSPLIT" "$@"
  expect_grep "^tpsplit $1: /dev/full: write error: No space left on device\$" "$tmp/err"
done <"$tmp/outputs"
[ -e "$tmp/no-such-dir" ] && fail "an output folder was made" || ok
# -o FOLDER (plot, the main job): a file in its place is an input error
: >"$tmp/afile"
usage_or_input() { expect_grep "^tpsplit$1: $tmp/afile: not a directory\$" "$tmp/err"; }
expect_rc 2 "$TPSPLIT" plot -o "$tmp/afile"
usage_or_input " plot"
expect_rc 2 "$TPSPLIT" -o "$tmp/afile"
usage_or_input ""
# a full stdout: 1
if [ -w /dev/full ]; then
  "$TPSPLIT" predict --gpu H200 --tp 8 >/dev/full 2>"$tmp/err"; rc=$?
  [ "$rc" -eq 1 ] && ok || fail "predict >/dev/full exited $rc, want 1"
  expect_grep "write error.*No space left on device" "$tmp/err"
fi

# ---- the unclear errors of issue 30: the file the user gave, the bound or the reason
# a one-row GPU table: the user's file is named, with what it lacks (was data/parts.tsv:14)
expect_rc 2 "$TPSPLIT" predict --gpu H200 --tp 8 --gpus-file "$B/gpus_one_row.tsv"
expect_grep "^tpsplit predict: $B/gpus_one_row.tsv: no GPU 'H20', which the bundled measurements need" "$tmp/err"
expect_rc 0 "$TPSPLIT" predict --gpu H200 --tp 8 --gpus-file "$B/gpus_one_row.tsv" --no-bundled
# TP 9: the reason (was "impossible configuration"); in a grid an n/a cell, not an abort
expect_rc 2 "$TPSPLIT" predict --gpu H200 --tp 9
expect_grep "^tpsplit predict: .*TP 9 beyond one 8-GPU node must be a multiple of 8" "$tmp/err"
expect_rc 0 "$TPSPLIT" crossover --gpus H200 --tp 8,9 --paths dense-bf16
expect_grep '^H200-SXM +9 +dense-bf16 +n/a +n/a: TP 9 beyond one 8-GPU node' "$tmp/out"
expect_grep '^H200-SXM +8 +dense-bf16 +[0-9]+ ' "$tmp/out"
# simulate --chunk: the bound at parse time (was "break-even could not be computed")
usage simulate --model deepseek-v3 --gpu H200 --tp 8 --chunk 65537
expect_grep "bad --chunk '65537' \(an integer in 1\.\.65536\)" "$tmp/err"
expect_rc 0 "$TPSPLIT" simulate --model deepseek-v3 --gpu H200 --tp 8 --chunk 65536
# -o "": refused by name (was "tpsplit: : cannot rename")
usage predict --gpu H200 --tp 8 -o ""
expect_grep "bad --output '' \(a file or folder name, not empty\)" "$tmp/err"
usage inspect -o "" "$H20"
usage predict --gpu H200 --tp 8 --thresholds-out ""
# a grid cell without a finite time: what and what to do (was "invalid argument or impossible configuration")
"$TPSPLIT" crossover --gpus H200 --tp 1 --paths dense-bf16 --max-tokens 20000 >"$tmp/out" 2>"$tmp/err"; rc=$?
if [ "$rc" -ne 0 ]; then
  expect_grep "no finite time at some T of 1\.\.--max-tokens .*a lower --max-tokens" "$tmp/err"
  expect_nogrep "invalid argument or impossible configuration" "$tmp/err"
fi
# the same in predict: what and what to do (was "the model gives no usable values")
"$TPSPLIT" predict --gpu H100 --tp 1 --path dense-bf16 --tokens 20000 >"$tmp/out" 2>"$tmp/err"; rc=$?
if [ "$rc" -ne 0 ]; then
  expect_grep "^tpsplit predict: H100-SXM TP 1 dense-bf16: a part has no finite time at some T of 1\.\.20000 .*: ask fewer --tokens\$" "$tmp/err"
  one_line "predict --tp 1 --tokens 20000"
fi

# ---- invalid environment values are refused, one line, exit 2, by the commands that read them
for ev in TPSPLIT_THREADS=abc TPSPLIT_THREADS=0 TPSPLIT_THREADS=65 TPSPLIT_THREADS=; do
  env "$ev" "$TPSPLIT" crossover --gpus H200 --tp 8 --paths dense-bf16 >"$tmp/out" 2>"$tmp/err"; rc=$?
  [ "$rc" -eq 2 ] && ok || fail "$ev crossover exited $rc, want 2"
  one_line "$ev"
  expect_grep "^tpsplit crossover: TPSPLIT_THREADS='${ev#*=}': a whole number in 1\.\.64 \(unset it for the default\)\$" "$tmp/err"
  [ -s "$tmp/out" ] && fail "$ev: output before the error" || ok
done
TPSPLIT_THREADS=abc "$TPSPLIT" --no-plots >/dev/null 2>"$tmp/err"; rc=$?
[ "$rc" -eq 2 ] && ok || fail "TPSPLIT_THREADS=abc tpsplit exited $rc, want 2"
expect_grep "^tpsplit: TPSPLIT_THREADS='abc'" "$tmp/err"
TPSPLIT_INPUT_TIMEOUT=-1 "$TPSPLIT" inspect "$H20" >/dev/null 2>"$tmp/err"; rc=$?
[ "$rc" -eq 2 ] && ok || fail "TPSPLIT_INPUT_TIMEOUT=-1 inspect exited $rc, want 2"
expect_grep "^tpsplit inspect: TPSPLIT_INPUT_TIMEOUT='-1': a whole number in 1\.\.86400" "$tmp/err"
TPSPLIT_GNUPLOT_TIMEOUT=10s "$TPSPLIT" plot -o "$tmp/f" >/dev/null 2>"$tmp/err"; rc=$?
[ "$rc" -eq 2 ] && ok || fail "TPSPLIT_GNUPLOT_TIMEOUT=10s plot exited $rc, want 2"
[ -e "$tmp/f" ] && fail "plot wrote figures despite the bad variable" || ok
# a command that does not read it is not stopped by it; valid values pass
TPSPLIT_THREADS=abc "$TPSPLIT" inspect "$H20" >/dev/null 2>&1 && ok || fail "inspect refused TPSPLIT_THREADS, which it does not read"
TPSPLIT_THREADS=3 "$TPSPLIT" crossover --gpus H200 --tp 8 --paths dense-bf16 >/dev/null 2>&1 && ok || fail "TPSPLIT_THREADS=3 refused"

# ---- long runs say so (issue 30 item 9): --samples has a bound the help states and the parser
# enforces; a run estimated above 10 s prints the estimate first (stderr), a short one nothing
for c in crossover predict ""; do
  if [ -z "$c" ]; then h=--no-plots; else h=; fi
  # shellcheck disable=SC2086
  "$TPSPLIT" $c $h --help | tr '\n' ' ' | grep -qE -- '--samples N +bootstrap samples of each 90% interval, 2\.\.100000' && ok ||
    fail "'$c --help' does not state the bound of --samples"
done
usage crossover --samples 100001
usage predict --gpu H200 --tp 8 --samples 100001
usage "" --samples 100001
# the estimate comes from the run's size (cells x samples x the scaling's cost per sample, over
# the threads), so a 72-cell (12 GPUs x 6 paths) --samples 100000 model grid is announced however loaded the machine;
# the run is stopped once the estimate is out (it would take minutes)
TPSPLIT_THREADS=2 timeout 3 "$TPSPLIT" crossover --scaling model --samples 100000 --tp 8 >/dev/null 2>"$tmp/err"
expect_grep '^tpsplit crossover: about [0-9]+ s: 72 cells x 100000 bootstrap samples on 2 threads \(--samples sets the samples' "$tmp/err"
est=$(grep -oE 'about [0-9]+ s' "$tmp/err" | grep -oE '[0-9]+')
[ "${est:-0}" -gt 10 ] && ok || fail "estimate ${est:-none} s, want > 10"
# not on a terminal: no progress line (no carriage return)
tr -d '\n' <"$tmp/err" | grep -q "$(printf '\r')" && fail "a progress line on a non-terminal" || ok
# a short run: nothing on stderr
expect_rc 0 "$TPSPLIT" crossover --gpus H200 --tp 8 --paths dense-bf16
[ -s "$tmp/err" ] && fail "a short crossover wrote to stderr: $(cat "$tmp/err")" || ok
# on a terminal (script(1) where it exists): the progress line after the estimate
if command -v script >/dev/null 2>&1 && script -qc true /dev/null >/dev/null 2>&1; then
  TPSPLIT_THREADS=2 script -qc "timeout 3 '$TPSPLIT' crossover --scaling model --samples 100000 --tp 8 >/dev/null" "$tmp/tty" >/dev/null 2>&1
  grep -qE "$(printf '\r')tpsplit crossover: [0-9]+ of 72 cells, " "$tmp/tty" && ok || fail "no progress line on a terminal: $(head -c 300 "$tmp/tty")"
fi
# list options: an item given twice or an empty item is refused (it printed duplicate rows, or read 2,,4 as 2,4)
for a in "--tp 8,8:TP 8 given twice" "--tp 2,,4:an empty item" "--tp 4,:an empty item" "--gpus H200,H200:H200 given twice" \
         "--gpus H200,,H100:an empty item"; do
  expect_rc 2 "$TPSPLIT" crossover ${a%%:*} --paths dense-bf16
  expect_grep "^tpsplit crossover: bad --[a-z]+ '[^']*' \\(${a#*:}" "$tmp/err"
  [ -s "$tmp/out" ] && fail "crossover ${a%%:*} printed a grid" || ok
done
finish
