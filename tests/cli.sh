#!/bin/sh
# tests/cli.sh: the top-level command contract (--help, --version, unknown command,
# exit codes, write errors on stdout).
. "$top_srcdir/tests/lib.sh"

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
# a write error on stdout is an error (closeout), not silence
if [ -w /dev/full ]; then
  "$TPSPLIT" --help >/dev/full 2>"$tmp/err"; rc=$?
  if [ "$rc" -eq 1 ]; then ok; else fail "--help >/dev/full exited $rc, want 1"; fi
fi
finish
