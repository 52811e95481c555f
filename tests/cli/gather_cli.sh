#!/bin/sh
# tests/cli/gather_cli.sh: the command lines of `tpsplit bench split` and `bench allgather`
# (no GPU needed: every case here fails or stops before a GPU is opened).  The options are
# src/'s, so this runs in every build, with or without CUDA and NCCL.
. "$top_srcdir/tests/cli/lib.sh"

expect_rc 0 "$TPSPLIT" bench split --help
expect_grep '^Usage: tpsplit bench split' "$tmp/out"
expect_rc 0 "$TPSPLIT" bench allgather --help
expect_grep '^Usage: tpsplit bench allgather' "$tmp/out"
expect_rc 0 "$TPSPLIT" bench split --version
expect_rc 2 "$TPSPLIT" bench split --tp 2
expect_grep 'path is required' "$tmp/err"
expect_rc 2 "$TPSPLIT" bench split --path w8a16 --gather ring
expect_grep "gather 'ring'" "$tmp/err"
expect_rc 2 "$TPSPLIT" bench split --path w8a16 --no-such-option
[ "$(wc -l <"$tmp/err")" -eq 1 ] && ok || fail "bad option: not one stderr line"
expect_grep "bad option '--no-such-option'" "$tmp/err"
expect_rc 2 "$TPSPLIT" bench split --path nosuch
expect_rc 2 "$TPSPLIT" bench split --path w8a16 --tp 0
expect_rc 2 "$TPSPLIT" bench split --path w8a16 --tp 17
expect_rc 2 "$TPSPLIT" bench split --path w8a16 --k 100
expect_rc 2 "$TPSPLIT" bench split --path w8a16 --tokens 0,5
# custom above the cap: 8192 tokens at TP2 = 4096 rows x 3584 B = 14680064 B per rank > 2 MiB
expect_rc 2 "$TPSPLIT" bench split --path w8a16 --gather custom --tp 2 --tokens 8192
expect_grep '14680064 bytes on each rank, over the cap of 2097152' "$tmp/err"
expect_rc 2 "$TPSPLIT" bench allgather --bytes 4M..1K
expect_rc 2 "$TPSPLIT" bench allgather --bytes 1K,512
# custom over the cap: 64 MiB over 2 ranks = 32 MiB per rank
expect_rc 2 "$TPSPLIT" bench allgather --gather custom --tp 2 --bytes 1K..64M
finish
