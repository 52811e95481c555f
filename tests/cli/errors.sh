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
finish
