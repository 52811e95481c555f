#!/bin/sh
# tests/cli/cli.sh: the top-level command contract (--help, --version, unknown command,
# exit codes, write errors on stdout).
. "$top_srcdir/tests/cli/lib.sh"

expect_rc 0 "$TPSPLIT" --help
expect_grep '^Usage: tpsplit' "$tmp/out"
expect_grep 'Exit status' "$tmp/out"
expect_rc 0 "$TPSPLIT" --version
expect_grep '^tpsplit \(tpsplit\) [0-9]+\.[0-9]+' "$tmp/out"
expect_rc 2 "$TPSPLIT" no-such-command
expect_grep "unknown command 'no-such-command'" "$tmp/err"
expect_rc 0 "$TPSPLIT" help
expect_rc 2 "$TPSPLIT" help no-such-command
# every command answers --help on stdout with exit 0
for c in inspect fit predict crossover plot simulate decide bench validate; do
  expect_rc 0 "$TPSPLIT" "$c" --help
  expect_grep "Usage: tpsplit $c" "$tmp/out"
  expect_rc 0 "$TPSPLIT" "$c" --version
  expect_grep "^tpsplit $c \(tpsplit\) [0-9]+\.[0-9]+\.[0-9]+$" "$tmp/out"
done
# the commands that parse with src/cli/cmdopt.c: -h and -V as --help and --version, one line
# "tpsplit CMD: ... (try 'tpsplit CMD --help')" and exit 2 for an unknown option, a missing value or a stray argument
for c in inspect fit predict crossover plot simulate decide validate; do
  expect_rc 0 "$TPSPLIT" "$c" -h
  expect_grep "^Usage: tpsplit $c" "$tmp/out"
  expect_grep '^  -h, --help ' "$tmp/out"
  expect_grep '^Exit status: 0 ' "$tmp/out"
  expect_nogrep "brief|the PR|PR's" "$tmp/out"
  expect_rc 0 "$TPSPLIT" "$c" -V
  expect_grep "^tpsplit $c \(tpsplit\) [0-9]+\.[0-9]+\.[0-9]+$" "$tmp/out"
  expect_rc 2 "$TPSPLIT" "$c" --no-such-option
  expect_grep "^tpsplit $c: bad option '--no-such-option' \(try 'tpsplit $c --help'\)$" "$tmp/err"
  [ "$(wc -l < "$tmp/err")" -eq 1 ] && ok || fail "$c: bad option: not one stderr line"
  expect_rc 2 "$TPSPLIT" "$c" --json=yes
  expect_rc 2 "$TPSPLIT" "$c" --gpus-file
  expect_grep "^tpsplit $c: (option '--gpus-file' needs a value|bad option '--gpus-file')" "$tmp/err"
done
# the commands with their own parser (GPU work): the same -h, -V and error line
for c in calibrate "bench gemm" "bench split" "bench allgather"; do
  # shellcheck disable=SC2086
  expect_rc 0 "$TPSPLIT" $c -h
  expect_grep "^Usage: tpsplit $c" "$tmp/out"
  # shellcheck disable=SC2086
  expect_rc 0 "$TPSPLIT" $c -V
  expect_grep "^tpsplit $c \(tpsplit\) [0-9]+\.[0-9]+\.[0-9]+$" "$tmp/out"
  # shellcheck disable=SC2086
  expect_rc 2 "$TPSPLIT" $c --no-such-option
  expect_grep "^tpsplit $c: bad option '--no-such-option' \(try 'tpsplit $c --help'\)$" "$tmp/err"
  [ "$(wc -l < "$tmp/err")" -eq 1 ] && ok || fail "$c: bad option: not one stderr line"
done
for c in predict crossover simulate decide plot; do
  expect_rc 2 "$TPSPLIT" "$c" stray-argument
  expect_grep "^tpsplit $c: unexpected argument 'stray-argument' \(try 'tpsplit $c --help'\)$" "$tmp/err"
  # the common options: the same message everywhere
  expect_rc 2 "$TPSPLIT" "$c" --gpus-file
  expect_grep "^tpsplit $c: option '--gpus-file' needs a value \(try 'tpsplit $c --help'\)$" "$tmp/err"
  expect_rc 2 "$TPSPLIT" "$c" --scaling optimistic
  expect_grep "^tpsplit $c: bad --scaling 'optimistic' \((model, )?(pessimistic, )?spec, parts\) \(try 'tpsplit $c --help'\)$" "$tmp/err"
done
# a required option is named; ranges are said
expect_rc 2 "$TPSPLIT" decide --gpu H20 --tp 8
expect_grep "^tpsplit decide: --tokens is required" "$tmp/err"
expect_rc 2 "$TPSPLIT" predict --gpu H20 --tp 65
expect_grep "^tpsplit predict: bad --tp '65' \(1\.\.64\) \(try 'tpsplit predict --help'\)$" "$tmp/err"
# a bench-only path is refused by name (w8a16, our kernels, has a model since issue 16; its
# reference kernel does not)
expect_rc 2 "$TPSPLIT" crossover --paths w8a16-ref
expect_grep "^tpsplit crossover: bad --paths 'w8a16-ref' \(kernel path 'w8a16-ref' has no model" "$tmp/err"
# the main job takes -h and -V behind its own options too
expect_rc 0 "$TPSPLIT" --no-plots -h
expect_grep '^Usage: tpsplit \[-o DIR\]' "$tmp/out"
expect_rc 0 "$TPSPLIT" --no-plots -V
expect_grep '^tpsplit \(tpsplit\) [0-9]+\.[0-9]+' "$tmp/out"
# help is generated from the tables: paths, gathers and the cap derive from model/
expect_rc 0 "$TPSPLIT" predict --help
tr -s ' \n' '  ' < "$tmp/out" > "$tmp/flat"   # one line: the help wraps at 80 columns
# the model paths, in the order of MODEL_PATHS (Makefile.am; read from the path files, not typed here)
want=$(awk '/^const tps_path tps_path_/ { n = "" } /\.name = "/ { split($0, q, "\""); n = q[2] }
  /\.flags = .*TPS_PATH_F_MODEL/ { m = 1 } /^};/ { if (m && n != "") printf "%s%s", (k++ ? ", " : ""), n; m = 0 }' \
  $(path_files))
expect_grep "kernel path: $want \(default marlin-w8a16\)" "$tmp/flat"
expect_grep 'gather backend: nccl = .*; custom = .*; auto = .*\(default auto\)' "$tmp/flat"
expect_grep "cap of the custom gather, bytes \($(awk 'BEGIN { printf "default %d", 2 * 1024 * 1024 }')\)" "$tmp/flat"
# a write error on stdout is an error (closeout), not silence
if [ -w /dev/full ]; then
  "$TPSPLIT" --help >/dev/full 2>"$tmp/err"; rc=$?
  if [ "$rc" -eq 1 ]; then ok; else fail "--help >/dev/full exited $rc, want 1"; fi
fi
# one spelling: --gpus LIST names GPUs, --gpus-file FILE a GPU table, in every command
for c in fit validate; do
  "$TPSPLIT" $c --help >"$tmp/out" 2>&1
  expect_grep '--gpus-file' "$tmp/out"
  expect_nogrep '--gpus[= ]FILE' "$tmp/out"
done
"$TPSPLIT" fit --loo-gpu --help >"$tmp/out" 2>&1
expect_nogrep '--gpus[= ]FILE' "$tmp/out"
# fit's modes are subcommands of main.c's dispatch table (the word right after `fit`), each
# parsed by src/cli/cmdopt like every command: named in fit's --help, each with its own
# help; met later on the line, or their options given to fit, they are usage errors
expect_rc 0 "$TPSPLIT" fit --help
expect_grep '^  tpsplit fit --loo-gpu ' "$tmp/out"
expect_grep '^  tpsplit fit --xgpu -o FIT' "$tmp/out"
expect_rc 0 "$TPSPLIT" fit --xgpu --gpus-file "$top_srcdir/data/gpus.tsv" --help
expect_grep '^Usage: tpsplit fit --xgpu -o FILE' "$tmp/out"
expect_grep '^  -o, --output FILE ' "$tmp/out"
expect_rc 0 "$TPSPLIT" fit --loo-gpu --only gather --help
expect_grep '^Usage: tpsplit fit --loo-gpu ' "$tmp/out"
expect_rc 0 "$TPSPLIT" help fit --loo-gpu
expect_grep '^Usage: tpsplit fit --loo-gpu ' "$tmp/out"
expect_rc 2 "$TPSPLIT" fit --gpus-file "$top_srcdir/data/gpus.tsv" --xgpu --help
expect_grep "^tpsplit fit: bad option '--xgpu' \(try 'tpsplit fit --help'\)" "$tmp/err"
expect_rc 2 "$TPSPLIT" fit "$top_srcdir/data/h200_gemm_w8a16.tsv" --hold-out H100
expect_grep "^tpsplit fit: bad option '--hold-out' \(try 'tpsplit fit --help'\)" "$tmp/err"
expect_rc 2 "$TPSPLIT" fit --loo-gpu --only nothing
expect_grep "^tpsplit fit --loo-gpu: bad --only 'nothing' \(expected gemm, gather, transfer, breakeven or w8a16\) \(try 'tpsplit fit --loo-gpu --help'\)$" "$tmp/err"
expect_rc 2 "$TPSPLIT" fit --xgpu
expect_grep "^tpsplit fit --xgpu: --output is required" "$tmp/err"
expect_rc 2 "$TPSPLIT" fit --loo-gpu x.tsv
expect_grep "^tpsplit fit --loo-gpu: unexpected argument 'x.tsv' \(try 'tpsplit fit --loo-gpu --help'\)$" "$tmp/err"
# long options are never abbreviated (issue 29): --gpus is not --gpus-file, in every command
for c in predict decide simulate; do
  expect_rc 2 "$TPSPLIT" $c --gpu H200 --tp 8 --gpus B200
  expect_grep "^tpsplit $c: bad option '--gpus' \(options are not abbreviated: --gpus-file\?\)" "$tmp/err"
done
expect_rc 2 "$TPSPLIT" predict --gpu H200 --tp 8 --pat dense-bf16
expect_grep "options are not abbreviated: --path\?" "$tmp/err"
# a value that looks like an option is the value
expect_rc 0 "$TPSPLIT" crossover --gpus H200 --tp 8 --paths dense-bf16
# -V is --version on every command, bench included (issue 29)
for c in bench predict crossover simulate decide validate calibrate inspect fit plot; do
  expect_rc 0 "$TPSPLIT" $c -V
  expect_grep "^tpsplit $c " "$tmp/out"
done
finish
