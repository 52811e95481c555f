#!/bin/sh
# startup.sh: a start of tpsplit loads no cuBLASLt (issue 29 item 4): the binary does not
# list it as NEEDED, and `tpsplit --help` and a predict open no libcublasLt (LD_DEBUG=files);
# the first cuBLASLt GEMM plan loads it (kernels/gemm/cublaslt_load.h; tests/unit/kernels/test_lt_load).
# Its static initializers cost 0.3-0.9 s of every start when it was linked.
. "$top_srcdir/tests/cli/lib.sh"

if command -v readelf >/dev/null 2>&1; then
  readelf -d "$TPSPLIT" >"$tmp/dyn" 2>&1 && ok || fail "readelf -d $TPSPLIT: $(head -c 200 "$tmp/dyn")"
  expect_grep 'NEEDED' "$tmp/dyn"
  expect_nogrep 'NEEDED.*libcublasLt' "$tmp/dyn"
fi
for cmd in "--help" "predict --gpu H200 --tp 8"; do
  # shellcheck disable=SC2086 # the words of cmd
  LD_DEBUG=files "$TPSPLIT" $cmd >/dev/null 2>"$tmp/ld"; rc=$?
  [ "$rc" -eq 0 ] && ok || fail "LD_DEBUG=files tpsplit $cmd: exit $rc"
  if ! grep -q 'file=libc\.so' "$tmp/ld"; then
    echo "SKIP: LD_DEBUG=files lists no libc.so (not the GNU loader?)"
    exit 77
  fi
  expect_nogrep 'libcublasLt' "$tmp/ld"
done
finish
