#!/bin/sh
# install.sh: an installed tpsplit reads the data installed beside it, also after the install
# tree is moved, never the build tree's data/; its man page names the real data folder.
. "$top_srcdir/tests/cli/lib.sh"
: "${top_builddir:?run through make check}"
unset TPSPLIT_DATADIR
p="$tmp/prefix"
if ! make -s -C "$top_builddir" install prefix="$p" >"$tmp/inst.log" 2>&1; then
  fail "make install prefix=$p failed: $(tail -c 400 "$tmp/inst.log")"; finish
fi
[ -x "$p/bin/tpsplit" ] && ok || fail "no $p/bin/tpsplit"
[ -f "$p/share/tpsplit/data/gpus.tsv" ] && ok || fail "no installed gpus.tsv"
mv "$p" "$tmp/moved"
cd "$tmp" || exit 1
"$tmp/moved/bin/tpsplit" predict --gpu H200 --tp 8 --path dense-bf16 >"$tmp/out" 2>&1; rc=$?
[ "$rc" -eq 0 ] && ok || fail "moved install: predict exited $rc: $(head -c 300 "$tmp/out")"
expect_nogrep "$top_srcdir/data" "$tmp/out"
# with the installed data hidden the moved binary must not fall back to the source tree
mv "$tmp/moved/share/tpsplit/data" "$tmp/hidden"
"$tmp/moved/bin/tpsplit" predict --gpu H200 --tp 8 --path dense-bf16 >"$tmp/out2" 2>&1; rc=$?
[ "$rc" -ne 0 ] && ok || fail "moved install without its data still ran (read the build tree?)"
m=$(find "$tmp/moved/share/man" -name 'tpsplit.1*' | head -1)
# the page names real folders: the lookup order and the configured data folder, no make variable
if [ -n "$m" ]; then
  expect_nogrep '[$][(]pkgdatadir[)]|@pkgdatadir@' "$m"
  expect_grep '^[.]I /.*/share/tpsplit/data/gpus[.]tsv' "$m"
  expect_grep 'share/tpsplit/data, so a moved install' "$m"
else fail "no installed man page"; fi
finish
